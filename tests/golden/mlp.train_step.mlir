module @mlp_train_step {
  func.func public @main(%arg0: tensor<512x784xf32>, %arg1: tensor<512xf32>, %arg2: tensor<512x512xf32>, %arg3: tensor<512xf32>, %arg4: tensor<10x512xf32>, %arg5: tensor<10xf32>, %arg6: tensor<512x784xf32>, %arg7: tensor<512xf32>, %arg8: tensor<512x512xf32>, %arg9: tensor<512xf32>, %arg10: tensor<10x512xf32>, %arg11: tensor<10xf32>, %arg12: tensor<512x784xf32>, %arg13: tensor<512xf32>, %arg14: tensor<512x512xf32>, %arg15: tensor<512xf32>, %arg16: tensor<10x512xf32>, %arg17: tensor<10xf32>, %arg18: tensor<8x1x28x28xf32>, %arg19: tensor<8xi32>, %arg20: tensor<f32>, %arg21: tensor<i32>) -> (tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>) {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.reshape %arg18 : (tensor<8x1x28x28xf32>) -> tensor<8x784xf32>
    %2 = stablehlo.dot_general %1, %arg0, contracting_dims = [1] x [1] : (tensor<8x784xf32>, tensor<512x784xf32>) -> tensor<8x512xf32>
    %3 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<512xf32>) -> tensor<8x512xf32>
    %4 = stablehlo.add %2, %3 : tensor<8x512xf32>
    %5 = stablehlo.constant dense<0.000000e+00> : tensor<8x512xf32>
    %6 = stablehlo.maximum %4, %5 : tensor<8x512xf32>
    %7 = stablehlo.dot_general %6, %arg2, contracting_dims = [1] x [1] : (tensor<8x512xf32>, tensor<512x512xf32>) -> tensor<8x512xf32>
    %8 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<512xf32>) -> tensor<8x512xf32>
    %9 = stablehlo.add %7, %8 : tensor<8x512xf32>
    %10 = stablehlo.maximum %9, %5 : tensor<8x512xf32>
    %11 = stablehlo.dot_general %10, %arg4, contracting_dims = [1] x [1] : (tensor<8x512xf32>, tensor<10x512xf32>) -> tensor<8x10xf32>
    %12 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %13 = stablehlo.add %11, %12 : tensor<8x10xf32>
    %14 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %15 = stablehlo.broadcast_in_dim %arg19, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %16 = stablehlo.compare  EQ, %14, %15,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %17 = stablehlo.convert %16 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %18 = stablehlo.constant dense<0.000000e+00> : tensor<8x10xf32>
    %19 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %20 = stablehlo.reduce(%13 init: %19) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %22 = stablehlo.subtract %13, %21 : tensor<8x10xf32>
    %23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.exponential %22 : tensor<8x10xf32>
    %25 = stablehlo.reduce(%24 init: %23) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %26 = stablehlo.log %25 : tensor<8xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %28 = stablehlo.subtract %22, %27 : tensor<8x10xf32>
    %29 = stablehlo.multiply %17, %28 : tensor<8x10xf32>
    %30 = stablehlo.reduce(%29 init: %23) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %31 = stablehlo.constant dense<-1.250000e-01> : tensor<f32>
    %32 = stablehlo.multiply %30, %31 : tensor<f32>
    %33 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %34 = stablehlo.multiply %33, %17 : tensor<8x10xf32>
    %35 = stablehlo.negate %34 : tensor<8x10xf32>
    %36 = stablehlo.reduce(%35 init: %23) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %37 = stablehlo.divide %36, %25 : tensor<8xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %39 = stablehlo.multiply %38, %24 : tensor<8x10xf32>
    %40 = stablehlo.add %34, %39 : tensor<8x10xf32>
    %41 = stablehlo.negate %40 : tensor<8x10xf32>
    %42 = stablehlo.reduce(%41 init: %23) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %43 = stablehlo.compare  EQ, %13, %21,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %44 = stablehlo.convert %43 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %45 = stablehlo.reduce(%44 init: %23) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %46 = stablehlo.divide %42, %45 : tensor<8xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %48 = stablehlo.select %43, %47, %18 : tensor<8x10xi1>, tensor<8x10xf32>
    %49 = stablehlo.add %40, %48 : tensor<8x10xf32>
    %50 = stablehlo.reduce(%49 init: %23) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %51 = stablehlo.dot_general %49, %arg4, contracting_dims = [1] x [0] : (tensor<8x10xf32>, tensor<10x512xf32>) -> tensor<8x512xf32>
    %52 = stablehlo.dot_general %49, %10, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x512xf32>) -> tensor<10x512xf32>
    %53 = stablehlo.compare  GE, %9, %5,  FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
    %54 = stablehlo.select %53, %51, %5 : tensor<8x512xi1>, tensor<8x512xf32>
    %55 = stablehlo.reduce(%54 init: %23) applies stablehlo.add across dimensions = [0] : (tensor<8x512xf32>, tensor<f32>) -> tensor<512xf32>
    %56 = stablehlo.dot_general %54, %arg2, contracting_dims = [1] x [0] : (tensor<8x512xf32>, tensor<512x512xf32>) -> tensor<8x512xf32>
    %57 = stablehlo.dot_general %54, %6, contracting_dims = [0] x [0] : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %58 = stablehlo.compare  GE, %4, %5,  FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
    %59 = stablehlo.select %58, %56, %5 : tensor<8x512xi1>, tensor<8x512xf32>
    %60 = stablehlo.reduce(%59 init: %23) applies stablehlo.add across dimensions = [0] : (tensor<8x512xf32>, tensor<f32>) -> tensor<512xf32>
    %61 = stablehlo.dot_general %59, %1, contracting_dims = [0] x [0] : (tensor<8x512xf32>, tensor<8x784xf32>) -> tensor<512x784xf32>
    %62 = stablehlo.convert %arg21 : (tensor<i32>) -> tensor<f32>
    %63 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %64 = stablehlo.power %63, %62 : tensor<f32>
    %65 = stablehlo.subtract %0, %64 : tensor<f32>
    %66 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %67 = stablehlo.power %66, %62 : tensor<f32>
    %68 = stablehlo.subtract %0, %67 : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %70 = stablehlo.constant dense<1.000000e-01> : tensor<512x784xf32>
    %71 = stablehlo.multiply %70, %61 : tensor<512x784xf32>
    %72 = stablehlo.constant dense<9.000000e-01> : tensor<512x784xf32>
    %73 = stablehlo.multiply %72, %arg6 : tensor<512x784xf32>
    %74 = stablehlo.add %73, %71 : tensor<512x784xf32>
    %75 = stablehlo.multiply %61, %61 : tensor<512x784xf32>
    %76 = stablehlo.constant dense<1.000000e-03> : tensor<512x784xf32>
    %77 = stablehlo.multiply %76, %75 : tensor<512x784xf32>
    %78 = stablehlo.constant dense<9.990000e-01> : tensor<512x784xf32>
    %79 = stablehlo.multiply %78, %arg12 : tensor<512x784xf32>
    %80 = stablehlo.add %79, %77 : tensor<512x784xf32>
    %81 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %82 = stablehlo.divide %74, %81 : tensor<512x784xf32>
    %83 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %84 = stablehlo.divide %80, %83 : tensor<512x784xf32>
    %85 = stablehlo.constant dense<1.000000e-08> : tensor<512x784xf32>
    %86 = stablehlo.sqrt %84 : tensor<512x784xf32>
    %87 = stablehlo.add %86, %85 : tensor<512x784xf32>
    %88 = stablehlo.divide %82, %87 : tensor<512x784xf32>
    %89 = stablehlo.multiply %69, %88 : tensor<512x784xf32>
    %90 = stablehlo.subtract %arg0, %89 : tensor<512x784xf32>
    %91 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %92 = stablehlo.constant dense<1.000000e-01> : tensor<512xf32>
    %93 = stablehlo.multiply %92, %60 : tensor<512xf32>
    %94 = stablehlo.constant dense<9.000000e-01> : tensor<512xf32>
    %95 = stablehlo.multiply %94, %arg7 : tensor<512xf32>
    %96 = stablehlo.add %95, %93 : tensor<512xf32>
    %97 = stablehlo.multiply %60, %60 : tensor<512xf32>
    %98 = stablehlo.constant dense<1.000000e-03> : tensor<512xf32>
    %99 = stablehlo.multiply %98, %97 : tensor<512xf32>
    %100 = stablehlo.constant dense<9.990000e-01> : tensor<512xf32>
    %101 = stablehlo.multiply %100, %arg13 : tensor<512xf32>
    %102 = stablehlo.add %101, %99 : tensor<512xf32>
    %103 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %104 = stablehlo.divide %96, %103 : tensor<512xf32>
    %105 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %106 = stablehlo.divide %102, %105 : tensor<512xf32>
    %107 = stablehlo.constant dense<1.000000e-08> : tensor<512xf32>
    %108 = stablehlo.sqrt %106 : tensor<512xf32>
    %109 = stablehlo.add %108, %107 : tensor<512xf32>
    %110 = stablehlo.divide %104, %109 : tensor<512xf32>
    %111 = stablehlo.multiply %91, %110 : tensor<512xf32>
    %112 = stablehlo.subtract %arg1, %111 : tensor<512xf32>
    %113 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %114 = stablehlo.constant dense<1.000000e-01> : tensor<512x512xf32>
    %115 = stablehlo.multiply %114, %57 : tensor<512x512xf32>
    %116 = stablehlo.constant dense<9.000000e-01> : tensor<512x512xf32>
    %117 = stablehlo.multiply %116, %arg8 : tensor<512x512xf32>
    %118 = stablehlo.add %117, %115 : tensor<512x512xf32>
    %119 = stablehlo.multiply %57, %57 : tensor<512x512xf32>
    %120 = stablehlo.constant dense<1.000000e-03> : tensor<512x512xf32>
    %121 = stablehlo.multiply %120, %119 : tensor<512x512xf32>
    %122 = stablehlo.constant dense<9.990000e-01> : tensor<512x512xf32>
    %123 = stablehlo.multiply %122, %arg14 : tensor<512x512xf32>
    %124 = stablehlo.add %123, %121 : tensor<512x512xf32>
    %125 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %126 = stablehlo.divide %118, %125 : tensor<512x512xf32>
    %127 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %128 = stablehlo.divide %124, %127 : tensor<512x512xf32>
    %129 = stablehlo.constant dense<1.000000e-08> : tensor<512x512xf32>
    %130 = stablehlo.sqrt %128 : tensor<512x512xf32>
    %131 = stablehlo.add %130, %129 : tensor<512x512xf32>
    %132 = stablehlo.divide %126, %131 : tensor<512x512xf32>
    %133 = stablehlo.multiply %113, %132 : tensor<512x512xf32>
    %134 = stablehlo.subtract %arg2, %133 : tensor<512x512xf32>
    %135 = stablehlo.multiply %92, %55 : tensor<512xf32>
    %136 = stablehlo.multiply %94, %arg9 : tensor<512xf32>
    %137 = stablehlo.add %136, %135 : tensor<512xf32>
    %138 = stablehlo.multiply %55, %55 : tensor<512xf32>
    %139 = stablehlo.multiply %98, %138 : tensor<512xf32>
    %140 = stablehlo.multiply %100, %arg15 : tensor<512xf32>
    %141 = stablehlo.add %140, %139 : tensor<512xf32>
    %142 = stablehlo.divide %137, %103 : tensor<512xf32>
    %143 = stablehlo.divide %141, %105 : tensor<512xf32>
    %144 = stablehlo.sqrt %143 : tensor<512xf32>
    %145 = stablehlo.add %144, %107 : tensor<512xf32>
    %146 = stablehlo.divide %142, %145 : tensor<512xf32>
    %147 = stablehlo.multiply %91, %146 : tensor<512xf32>
    %148 = stablehlo.subtract %arg3, %147 : tensor<512xf32>
    %149 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %150 = stablehlo.constant dense<1.000000e-01> : tensor<10x512xf32>
    %151 = stablehlo.multiply %150, %52 : tensor<10x512xf32>
    %152 = stablehlo.constant dense<9.000000e-01> : tensor<10x512xf32>
    %153 = stablehlo.multiply %152, %arg10 : tensor<10x512xf32>
    %154 = stablehlo.add %153, %151 : tensor<10x512xf32>
    %155 = stablehlo.multiply %52, %52 : tensor<10x512xf32>
    %156 = stablehlo.constant dense<1.000000e-03> : tensor<10x512xf32>
    %157 = stablehlo.multiply %156, %155 : tensor<10x512xf32>
    %158 = stablehlo.constant dense<9.990000e-01> : tensor<10x512xf32>
    %159 = stablehlo.multiply %158, %arg16 : tensor<10x512xf32>
    %160 = stablehlo.add %159, %157 : tensor<10x512xf32>
    %161 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %162 = stablehlo.divide %154, %161 : tensor<10x512xf32>
    %163 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %164 = stablehlo.divide %160, %163 : tensor<10x512xf32>
    %165 = stablehlo.constant dense<1.000000e-08> : tensor<10x512xf32>
    %166 = stablehlo.sqrt %164 : tensor<10x512xf32>
    %167 = stablehlo.add %166, %165 : tensor<10x512xf32>
    %168 = stablehlo.divide %162, %167 : tensor<10x512xf32>
    %169 = stablehlo.multiply %149, %168 : tensor<10x512xf32>
    %170 = stablehlo.subtract %arg4, %169 : tensor<10x512xf32>
    %171 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %172 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %173 = stablehlo.multiply %172, %50 : tensor<10xf32>
    %174 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %175 = stablehlo.multiply %174, %arg11 : tensor<10xf32>
    %176 = stablehlo.add %175, %173 : tensor<10xf32>
    %177 = stablehlo.multiply %50, %50 : tensor<10xf32>
    %178 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %179 = stablehlo.multiply %178, %177 : tensor<10xf32>
    %180 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %181 = stablehlo.multiply %180, %arg17 : tensor<10xf32>
    %182 = stablehlo.add %181, %179 : tensor<10xf32>
    %183 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %184 = stablehlo.divide %176, %183 : tensor<10xf32>
    %185 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %186 = stablehlo.divide %182, %185 : tensor<10xf32>
    %187 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %188 = stablehlo.sqrt %186 : tensor<10xf32>
    %189 = stablehlo.add %188, %187 : tensor<10xf32>
    %190 = stablehlo.divide %184, %189 : tensor<10xf32>
    %191 = stablehlo.multiply %171, %190 : tensor<10xf32>
    %192 = stablehlo.subtract %arg5, %191 : tensor<10xf32>
    return %90, %112, %134, %148, %170, %192, %74, %96, %118, %137, %154, %176, %80, %102, %124, %141, %160, %182, %32 : tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>
  }
}
