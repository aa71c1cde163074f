module @mlp_train_step {
  func.func public @main(%arg0: tensor<512x784xf32>, %arg1: tensor<512xf32>, %arg2: tensor<512x512xf32>, %arg3: tensor<512xf32>, %arg4: tensor<10x512xf32>, %arg5: tensor<10xf32>, %arg6: tensor<512x784xf32>, %arg7: tensor<512xf32>, %arg8: tensor<512x512xf32>, %arg9: tensor<512xf32>, %arg10: tensor<10x512xf32>, %arg11: tensor<10xf32>, %arg12: tensor<512x784xf32>, %arg13: tensor<512xf32>, %arg14: tensor<512x512xf32>, %arg15: tensor<512xf32>, %arg16: tensor<10x512xf32>, %arg17: tensor<10xf32>, %arg18: tensor<8x1x28x28xf32>, %arg19: tensor<8xi32>, %arg20: tensor<f32>, %arg21: tensor<i32>) -> (tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<i32>) {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.reshape %arg18 : (tensor<8x1x28x28xf32>) -> tensor<8x784xf32>
    %2 = stablehlo.dot_general %1, %arg0, contracting_dims = [1] x [1] : (tensor<8x784xf32>, tensor<512x784xf32>) -> tensor<8x512xf32>
    %3 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<512xf32>) -> tensor<8x512xf32>
    %4 = stablehlo.add %2, %3 : tensor<8x512xf32>
    %5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %7 = stablehlo.maximum %4, %6 : tensor<8x512xf32>
    %8 = stablehlo.dot_general %7, %arg2, contracting_dims = [1] x [1] : (tensor<8x512xf32>, tensor<512x512xf32>) -> tensor<8x512xf32>
    %9 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<512xf32>) -> tensor<8x512xf32>
    %10 = stablehlo.add %8, %9 : tensor<8x512xf32>
    %11 = stablehlo.maximum %10, %6 : tensor<8x512xf32>
    %12 = stablehlo.dot_general %11, %arg4, contracting_dims = [1] x [1] : (tensor<8x512xf32>, tensor<10x512xf32>) -> tensor<8x10xf32>
    %13 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %14 = stablehlo.add %12, %13 : tensor<8x10xf32>
    %15 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %16 = stablehlo.broadcast_in_dim %arg19, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %17 = stablehlo.compare  EQ, %15, %16,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %18 = stablehlo.convert %17 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %19 = stablehlo.constant dense<0.000000e+00> : tensor<8x10xf32>
    %20 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %21 = stablehlo.reduce(%14 init: %20) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %23 = stablehlo.subtract %14, %22 : tensor<8x10xf32>
    %24 = stablehlo.exponential %23 : tensor<8x10xf32>
    %25 = stablehlo.reduce(%24 init: %5) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %26 = stablehlo.log %25 : tensor<8xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %28 = stablehlo.subtract %23, %27 : tensor<8x10xf32>
    %29 = stablehlo.multiply %18, %28 : tensor<8x10xf32>
    %30 = stablehlo.reduce(%29 init: %5) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %31 = stablehlo.constant dense<-1.250000e-01> : tensor<f32>
    %32 = stablehlo.multiply %30, %31 : tensor<f32>
    %33 = stablehlo.compare  EQ, %14, %22,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %34 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %35 = stablehlo.multiply %34, %18 : tensor<8x10xf32>
    %36 = stablehlo.negate %35 : tensor<8x10xf32>
    %37 = stablehlo.reduce(%36 init: %5) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %38 = stablehlo.divide %37, %25 : tensor<8xf32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %40 = stablehlo.multiply %39, %24 : tensor<8x10xf32>
    %41 = stablehlo.add %35, %40 : tensor<8x10xf32>
    %42 = stablehlo.negate %41 : tensor<8x10xf32>
    %43 = stablehlo.reduce(%42 init: %5) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %44 = stablehlo.convert %33 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %45 = stablehlo.reduce(%44 init: %5) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %46 = stablehlo.divide %43, %45 : tensor<8xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %48 = stablehlo.select %33, %47, %19 : tensor<8x10xi1>, tensor<8x10xf32>
    %49 = stablehlo.add %41, %48 : tensor<8x10xf32>
    %50 = stablehlo.reduce(%49 init: %5) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %51 = stablehlo.dot_general %49, %arg4, contracting_dims = [1] x [0] : (tensor<8x10xf32>, tensor<10x512xf32>) -> tensor<8x512xf32>
    %52 = stablehlo.dot_general %49, %11, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x512xf32>) -> tensor<10x512xf32>
    %53 = stablehlo.compare  GT, %11, %6,  FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
    %54 = stablehlo.select %53, %51, %6 : tensor<8x512xi1>, tensor<8x512xf32>
    %55 = stablehlo.reduce(%54 init: %5) applies stablehlo.add across dimensions = [0] : (tensor<8x512xf32>, tensor<f32>) -> tensor<512xf32>
    %56 = stablehlo.dot_general %54, %arg2, contracting_dims = [1] x [0] : (tensor<8x512xf32>, tensor<512x512xf32>) -> tensor<8x512xf32>
    %57 = stablehlo.dot_general %54, %7, contracting_dims = [0] x [0] : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %58 = stablehlo.compare  GT, %7, %6,  FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
    %59 = stablehlo.select %58, %56, %6 : tensor<8x512xi1>, tensor<8x512xf32>
    %60 = stablehlo.reduce(%59 init: %5) applies stablehlo.add across dimensions = [0] : (tensor<8x512xf32>, tensor<f32>) -> tensor<512xf32>
    %61 = stablehlo.dot_general %59, %1, contracting_dims = [0] x [0] : (tensor<8x512xf32>, tensor<8x784xf32>) -> tensor<512x784xf32>
    %62 = stablehlo.convert %arg21 : (tensor<i32>) -> tensor<f32>
    %63 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %64 = stablehlo.power %63, %62 : tensor<f32>
    %65 = stablehlo.subtract %0, %64 : tensor<f32>
    %66 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %67 = stablehlo.power %66, %62 : tensor<f32>
    %68 = stablehlo.subtract %0, %67 : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %70 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %71 = stablehlo.broadcast_in_dim %70, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %72 = stablehlo.multiply %71, %61 : tensor<512x784xf32>
    %73 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %74 = stablehlo.multiply %73, %arg6 : tensor<512x784xf32>
    %75 = stablehlo.add %74, %72 : tensor<512x784xf32>
    %76 = stablehlo.multiply %61, %61 : tensor<512x784xf32>
    %77 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %77, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %79 = stablehlo.multiply %78, %76 : tensor<512x784xf32>
    %80 = stablehlo.broadcast_in_dim %66, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %81 = stablehlo.multiply %80, %arg12 : tensor<512x784xf32>
    %82 = stablehlo.add %81, %79 : tensor<512x784xf32>
    %83 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %84 = stablehlo.divide %75, %83 : tensor<512x784xf32>
    %85 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %86 = stablehlo.divide %82, %85 : tensor<512x784xf32>
    %87 = stablehlo.constant dense<1.000000e-08> : tensor<f32>
    %88 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<512x784xf32>
    %89 = stablehlo.sqrt %86 : tensor<512x784xf32>
    %90 = stablehlo.add %89, %88 : tensor<512x784xf32>
    %91 = stablehlo.divide %84, %90 : tensor<512x784xf32>
    %92 = stablehlo.multiply %69, %91 : tensor<512x784xf32>
    %93 = stablehlo.subtract %arg0, %92 : tensor<512x784xf32>
    %94 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %95 = stablehlo.broadcast_in_dim %70, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %96 = stablehlo.multiply %95, %60 : tensor<512xf32>
    %97 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %98 = stablehlo.multiply %97, %arg7 : tensor<512xf32>
    %99 = stablehlo.add %98, %96 : tensor<512xf32>
    %100 = stablehlo.multiply %60, %60 : tensor<512xf32>
    %101 = stablehlo.broadcast_in_dim %77, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %102 = stablehlo.multiply %101, %100 : tensor<512xf32>
    %103 = stablehlo.broadcast_in_dim %66, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %104 = stablehlo.multiply %103, %arg13 : tensor<512xf32>
    %105 = stablehlo.add %104, %102 : tensor<512xf32>
    %106 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %107 = stablehlo.divide %99, %106 : tensor<512xf32>
    %108 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %109 = stablehlo.divide %105, %108 : tensor<512xf32>
    %110 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %111 = stablehlo.sqrt %109 : tensor<512xf32>
    %112 = stablehlo.add %111, %110 : tensor<512xf32>
    %113 = stablehlo.divide %107, %112 : tensor<512xf32>
    %114 = stablehlo.multiply %94, %113 : tensor<512xf32>
    %115 = stablehlo.subtract %arg1, %114 : tensor<512xf32>
    %116 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %117 = stablehlo.broadcast_in_dim %70, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %118 = stablehlo.multiply %117, %57 : tensor<512x512xf32>
    %119 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %120 = stablehlo.multiply %119, %arg8 : tensor<512x512xf32>
    %121 = stablehlo.add %120, %118 : tensor<512x512xf32>
    %122 = stablehlo.multiply %57, %57 : tensor<512x512xf32>
    %123 = stablehlo.broadcast_in_dim %77, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %124 = stablehlo.multiply %123, %122 : tensor<512x512xf32>
    %125 = stablehlo.broadcast_in_dim %66, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %126 = stablehlo.multiply %125, %arg14 : tensor<512x512xf32>
    %127 = stablehlo.add %126, %124 : tensor<512x512xf32>
    %128 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %129 = stablehlo.divide %121, %128 : tensor<512x512xf32>
    %130 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %131 = stablehlo.divide %127, %130 : tensor<512x512xf32>
    %132 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %133 = stablehlo.sqrt %131 : tensor<512x512xf32>
    %134 = stablehlo.add %133, %132 : tensor<512x512xf32>
    %135 = stablehlo.divide %129, %134 : tensor<512x512xf32>
    %136 = stablehlo.multiply %116, %135 : tensor<512x512xf32>
    %137 = stablehlo.subtract %arg2, %136 : tensor<512x512xf32>
    %138 = stablehlo.multiply %95, %55 : tensor<512xf32>
    %139 = stablehlo.multiply %97, %arg9 : tensor<512xf32>
    %140 = stablehlo.add %139, %138 : tensor<512xf32>
    %141 = stablehlo.multiply %55, %55 : tensor<512xf32>
    %142 = stablehlo.multiply %101, %141 : tensor<512xf32>
    %143 = stablehlo.multiply %103, %arg15 : tensor<512xf32>
    %144 = stablehlo.add %143, %142 : tensor<512xf32>
    %145 = stablehlo.divide %140, %106 : tensor<512xf32>
    %146 = stablehlo.divide %144, %108 : tensor<512xf32>
    %147 = stablehlo.sqrt %146 : tensor<512xf32>
    %148 = stablehlo.add %147, %110 : tensor<512xf32>
    %149 = stablehlo.divide %145, %148 : tensor<512xf32>
    %150 = stablehlo.multiply %94, %149 : tensor<512xf32>
    %151 = stablehlo.subtract %arg3, %150 : tensor<512xf32>
    %152 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %153 = stablehlo.broadcast_in_dim %70, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %154 = stablehlo.multiply %153, %52 : tensor<10x512xf32>
    %155 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %156 = stablehlo.multiply %155, %arg10 : tensor<10x512xf32>
    %157 = stablehlo.add %156, %154 : tensor<10x512xf32>
    %158 = stablehlo.multiply %52, %52 : tensor<10x512xf32>
    %159 = stablehlo.broadcast_in_dim %77, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %160 = stablehlo.multiply %159, %158 : tensor<10x512xf32>
    %161 = stablehlo.broadcast_in_dim %66, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %162 = stablehlo.multiply %161, %arg16 : tensor<10x512xf32>
    %163 = stablehlo.add %162, %160 : tensor<10x512xf32>
    %164 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %165 = stablehlo.divide %157, %164 : tensor<10x512xf32>
    %166 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %167 = stablehlo.divide %163, %166 : tensor<10x512xf32>
    %168 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %169 = stablehlo.sqrt %167 : tensor<10x512xf32>
    %170 = stablehlo.add %169, %168 : tensor<10x512xf32>
    %171 = stablehlo.divide %165, %170 : tensor<10x512xf32>
    %172 = stablehlo.multiply %152, %171 : tensor<10x512xf32>
    %173 = stablehlo.subtract %arg4, %172 : tensor<10x512xf32>
    %174 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %175 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %176 = stablehlo.multiply %175, %50 : tensor<10xf32>
    %177 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %178 = stablehlo.multiply %177, %arg11 : tensor<10xf32>
    %179 = stablehlo.add %178, %176 : tensor<10xf32>
    %180 = stablehlo.multiply %50, %50 : tensor<10xf32>
    %181 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %182 = stablehlo.multiply %181, %180 : tensor<10xf32>
    %183 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %184 = stablehlo.multiply %183, %arg17 : tensor<10xf32>
    %185 = stablehlo.add %184, %182 : tensor<10xf32>
    %186 = stablehlo.broadcast_in_dim %65, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %187 = stablehlo.divide %179, %186 : tensor<10xf32>
    %188 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %189 = stablehlo.divide %185, %188 : tensor<10xf32>
    %190 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %191 = stablehlo.sqrt %189 : tensor<10xf32>
    %192 = stablehlo.add %191, %190 : tensor<10xf32>
    %193 = stablehlo.divide %187, %192 : tensor<10xf32>
    %194 = stablehlo.multiply %174, %193 : tensor<10xf32>
    %195 = stablehlo.subtract %arg5, %194 : tensor<10xf32>
    %196 = stablehlo.constant dense<0> : tensor<i32>
    %197 = stablehlo.constant dense<10> : tensor<i32>
    %198 = stablehlo.constant dense<10> : tensor<8x10xi32>
    %199 = stablehlo.select %33, %15, %198 : tensor<8x10xi1>, tensor<8x10xi32>
    %200 = stablehlo.reduce(%199 init: %197) applies stablehlo.minimum across dimensions = [1] : (tensor<8x10xi32>, tensor<i32>) -> tensor<8xi32>
    %201 = stablehlo.compare  EQ, %200, %arg19,  SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %202 = stablehlo.convert %201 : (tensor<8xi1>) -> tensor<8xi32>
    %203 = stablehlo.reduce(%202 init: %196) applies stablehlo.add across dimensions = [0] : (tensor<8xi32>, tensor<i32>) -> tensor<i32>
    return %93, %115, %137, %151, %173, %195, %75, %99, %121, %140, %157, %179, %82, %105, %127, %144, %163, %185, %32, %203 : tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<512x784xf32>, tensor<512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<i32>
  }
}
