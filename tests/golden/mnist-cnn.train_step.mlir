module @mnist_cnn_train_step {
  func.func public @main(%arg0: tensor<32x1x3x3xf32>, %arg1: tensor<32xf32>, %arg2: tensor<64x32x3x3xf32>, %arg3: tensor<64xf32>, %arg4: tensor<128x3136xf32>, %arg5: tensor<128xf32>, %arg6: tensor<10x128xf32>, %arg7: tensor<10xf32>, %arg8: tensor<32x1x3x3xf32>, %arg9: tensor<32xf32>, %arg10: tensor<64x32x3x3xf32>, %arg11: tensor<64xf32>, %arg12: tensor<128x3136xf32>, %arg13: tensor<128xf32>, %arg14: tensor<10x128xf32>, %arg15: tensor<10xf32>, %arg16: tensor<32x1x3x3xf32>, %arg17: tensor<32xf32>, %arg18: tensor<64x32x3x3xf32>, %arg19: tensor<64xf32>, %arg20: tensor<128x3136xf32>, %arg21: tensor<128xf32>, %arg22: tensor<10x128xf32>, %arg23: tensor<10xf32>, %arg24: tensor<8x1x28x28xf32>, %arg25: tensor<8xi32>, %arg26: tensor<f32>, %arg27: tensor<i32>) -> (tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<f32>) {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.convolution(%arg24, %arg0) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<32x1x3x3xf32>) -> tensor<8x32x28x28xf32>
    %2 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %3 = stablehlo.add %1, %2 : tensor<8x32x28x28xf32>
    %4 = stablehlo.constant dense<0.000000e+00> : tensor<8x32x28x28xf32>
    %5 = stablehlo.maximum %3, %4 : tensor<8x32x28x28xf32>
    %6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = "stablehlo.reduce_window"(%5, %6) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg28: tensor<f32>, %arg29: tensor<f32>):
      %8 = stablehlo.maximum %arg28, %arg29 : tensor<f32>
      stablehlo.return %8 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<8x32x14x14xf32>
    %9 = stablehlo.convolution(%7, %arg2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<64x32x3x3xf32>) -> tensor<8x64x14x14xf32>
    %10 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %11 = stablehlo.add %9, %10 : tensor<8x64x14x14xf32>
    %12 = stablehlo.constant dense<0.000000e+00> : tensor<8x64x14x14xf32>
    %13 = stablehlo.maximum %11, %12 : tensor<8x64x14x14xf32>
    %14 = "stablehlo.reduce_window"(%13, %6) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg30: tensor<f32>, %arg31: tensor<f32>):
      %15 = stablehlo.maximum %arg30, %arg31 : tensor<f32>
      stablehlo.return %15 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<8x64x7x7xf32>
    %16 = stablehlo.reshape %14 : (tensor<8x64x7x7xf32>) -> tensor<8x3136xf32>
    %17 = stablehlo.dot_general %16, %arg4, contracting_dims = [1] x [1] : (tensor<8x3136xf32>, tensor<128x3136xf32>) -> tensor<8x128xf32>
    %18 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<128xf32>) -> tensor<8x128xf32>
    %19 = stablehlo.add %17, %18 : tensor<8x128xf32>
    %20 = stablehlo.constant dense<0.000000e+00> : tensor<8x128xf32>
    %21 = stablehlo.maximum %19, %20 : tensor<8x128xf32>
    %22 = stablehlo.dot_general %21, %arg6, contracting_dims = [1] x [1] : (tensor<8x128xf32>, tensor<10x128xf32>) -> tensor<8x10xf32>
    %23 = stablehlo.broadcast_in_dim %arg7, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %24 = stablehlo.add %22, %23 : tensor<8x10xf32>
    %25 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %26 = stablehlo.broadcast_in_dim %arg25, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %27 = stablehlo.compare  EQ, %25, %26,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %28 = stablehlo.convert %27 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %29 = stablehlo.constant dense<0.000000e+00> : tensor<8x10xf32>
    %30 = stablehlo.reduce(%24 init: %6) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %32 = stablehlo.subtract %24, %31 : tensor<8x10xf32>
    %33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.exponential %32 : tensor<8x10xf32>
    %35 = stablehlo.reduce(%34 init: %33) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %36 = stablehlo.log %35 : tensor<8xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %38 = stablehlo.subtract %32, %37 : tensor<8x10xf32>
    %39 = stablehlo.multiply %28, %38 : tensor<8x10xf32>
    %40 = stablehlo.reduce(%39 init: %33) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %41 = stablehlo.constant dense<-1.250000e-01> : tensor<f32>
    %42 = stablehlo.multiply %40, %41 : tensor<f32>
    %43 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %44 = stablehlo.multiply %43, %28 : tensor<8x10xf32>
    %45 = stablehlo.negate %44 : tensor<8x10xf32>
    %46 = stablehlo.reduce(%45 init: %33) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %47 = stablehlo.divide %46, %35 : tensor<8xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %49 = stablehlo.multiply %48, %34 : tensor<8x10xf32>
    %50 = stablehlo.add %44, %49 : tensor<8x10xf32>
    %51 = stablehlo.negate %50 : tensor<8x10xf32>
    %52 = stablehlo.reduce(%51 init: %33) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %53 = stablehlo.compare  EQ, %24, %31,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %54 = stablehlo.convert %53 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %55 = stablehlo.reduce(%54 init: %33) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %56 = stablehlo.divide %52, %55 : tensor<8xf32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %58 = stablehlo.select %53, %57, %29 : tensor<8x10xi1>, tensor<8x10xf32>
    %59 = stablehlo.add %50, %58 : tensor<8x10xf32>
    %60 = stablehlo.reduce(%59 init: %33) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %61 = stablehlo.dot_general %59, %arg6, contracting_dims = [1] x [0] : (tensor<8x10xf32>, tensor<10x128xf32>) -> tensor<8x128xf32>
    %62 = stablehlo.dot_general %59, %21, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x128xf32>) -> tensor<10x128xf32>
    %63 = stablehlo.compare  GE, %19, %20,  FLOAT : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xi1>
    %64 = stablehlo.select %63, %61, %20 : tensor<8x128xi1>, tensor<8x128xf32>
    %65 = stablehlo.reduce(%64 init: %33) applies stablehlo.add across dimensions = [0] : (tensor<8x128xf32>, tensor<f32>) -> tensor<128xf32>
    %66 = stablehlo.dot_general %64, %arg4, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x3136xf32>) -> tensor<8x3136xf32>
    %67 = stablehlo.dot_general %64, %16, contracting_dims = [0] x [0] : (tensor<8x128xf32>, tensor<8x3136xf32>) -> tensor<128x3136xf32>
    %68 = stablehlo.reshape %66 : (tensor<8x3136xf32>) -> tensor<8x64x7x7xf32>
    %69 = "stablehlo.select_and_scatter"(%13, %68, %33) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg32: tensor<f32>, %arg33: tensor<f32>):
      %70 = stablehlo.compare  GE, %arg32, %arg33,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %70 : tensor<i1>
    }, {
    ^bb0(%arg34: tensor<f32>, %arg35: tensor<f32>):
      %71 = stablehlo.add %arg34, %arg35 : tensor<f32>
      stablehlo.return %71 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<8x64x7x7xf32>, tensor<f32>) -> tensor<8x64x14x14xf32>
    %72 = stablehlo.compare  GE, %11, %12,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
    %73 = stablehlo.select %72, %69, %12 : tensor<8x64x14x14xi1>, tensor<8x64x14x14xf32>
    %74 = stablehlo.reduce(%73 init: %33) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %75 = stablehlo.transpose %arg2, dims = [1, 0, 2, 3] : (tensor<64x32x3x3xf32>) -> tensor<32x64x3x3xf32>
    %76 = stablehlo.reverse %75, dims = [2, 3] : tensor<32x64x3x3xf32>
    %77 = stablehlo.convolution(%73, %76) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<32x64x3x3xf32>) -> tensor<8x32x14x14xf32>
    %78 = stablehlo.convolution(%7, %73) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x32x3x3xf32>
    %79 = "stablehlo.select_and_scatter"(%5, %77, %33) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg36: tensor<f32>, %arg37: tensor<f32>):
      %80 = stablehlo.compare  GE, %arg36, %arg37,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %80 : tensor<i1>
    }, {
    ^bb0(%arg38: tensor<f32>, %arg39: tensor<f32>):
      %81 = stablehlo.add %arg38, %arg39 : tensor<f32>
      stablehlo.return %81 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<8x32x14x14xf32>, tensor<f32>) -> tensor<8x32x28x28xf32>
    %82 = stablehlo.compare  GE, %3, %4,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %83 = stablehlo.select %82, %79, %4 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %84 = stablehlo.reduce(%83 init: %33) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %85 = stablehlo.convolution(%arg24, %83) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x1x3x3xf32>
    %86 = stablehlo.convert %arg27 : (tensor<i32>) -> tensor<f32>
    %87 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %88 = stablehlo.power %87, %86 : tensor<f32>
    %89 = stablehlo.subtract %0, %88 : tensor<f32>
    %90 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %91 = stablehlo.power %90, %86 : tensor<f32>
    %92 = stablehlo.subtract %0, %91 : tensor<f32>
    %93 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %94 = stablehlo.constant dense<1.000000e-01> : tensor<32x1x3x3xf32>
    %95 = stablehlo.multiply %94, %85 : tensor<32x1x3x3xf32>
    %96 = stablehlo.constant dense<9.000000e-01> : tensor<32x1x3x3xf32>
    %97 = stablehlo.multiply %96, %arg8 : tensor<32x1x3x3xf32>
    %98 = stablehlo.add %97, %95 : tensor<32x1x3x3xf32>
    %99 = stablehlo.multiply %85, %85 : tensor<32x1x3x3xf32>
    %100 = stablehlo.constant dense<1.000000e-03> : tensor<32x1x3x3xf32>
    %101 = stablehlo.multiply %100, %99 : tensor<32x1x3x3xf32>
    %102 = stablehlo.constant dense<9.990000e-01> : tensor<32x1x3x3xf32>
    %103 = stablehlo.multiply %102, %arg16 : tensor<32x1x3x3xf32>
    %104 = stablehlo.add %103, %101 : tensor<32x1x3x3xf32>
    %105 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %106 = stablehlo.divide %98, %105 : tensor<32x1x3x3xf32>
    %107 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %108 = stablehlo.divide %104, %107 : tensor<32x1x3x3xf32>
    %109 = stablehlo.constant dense<1.000000e-08> : tensor<32x1x3x3xf32>
    %110 = stablehlo.sqrt %108 : tensor<32x1x3x3xf32>
    %111 = stablehlo.add %110, %109 : tensor<32x1x3x3xf32>
    %112 = stablehlo.divide %106, %111 : tensor<32x1x3x3xf32>
    %113 = stablehlo.multiply %93, %112 : tensor<32x1x3x3xf32>
    %114 = stablehlo.subtract %arg0, %113 : tensor<32x1x3x3xf32>
    %115 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %116 = stablehlo.constant dense<1.000000e-01> : tensor<32xf32>
    %117 = stablehlo.multiply %116, %84 : tensor<32xf32>
    %118 = stablehlo.constant dense<9.000000e-01> : tensor<32xf32>
    %119 = stablehlo.multiply %118, %arg9 : tensor<32xf32>
    %120 = stablehlo.add %119, %117 : tensor<32xf32>
    %121 = stablehlo.multiply %84, %84 : tensor<32xf32>
    %122 = stablehlo.constant dense<1.000000e-03> : tensor<32xf32>
    %123 = stablehlo.multiply %122, %121 : tensor<32xf32>
    %124 = stablehlo.constant dense<9.990000e-01> : tensor<32xf32>
    %125 = stablehlo.multiply %124, %arg17 : tensor<32xf32>
    %126 = stablehlo.add %125, %123 : tensor<32xf32>
    %127 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %128 = stablehlo.divide %120, %127 : tensor<32xf32>
    %129 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %130 = stablehlo.divide %126, %129 : tensor<32xf32>
    %131 = stablehlo.constant dense<1.000000e-08> : tensor<32xf32>
    %132 = stablehlo.sqrt %130 : tensor<32xf32>
    %133 = stablehlo.add %132, %131 : tensor<32xf32>
    %134 = stablehlo.divide %128, %133 : tensor<32xf32>
    %135 = stablehlo.multiply %115, %134 : tensor<32xf32>
    %136 = stablehlo.subtract %arg1, %135 : tensor<32xf32>
    %137 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %138 = stablehlo.constant dense<1.000000e-01> : tensor<64x32x3x3xf32>
    %139 = stablehlo.multiply %138, %78 : tensor<64x32x3x3xf32>
    %140 = stablehlo.constant dense<9.000000e-01> : tensor<64x32x3x3xf32>
    %141 = stablehlo.multiply %140, %arg10 : tensor<64x32x3x3xf32>
    %142 = stablehlo.add %141, %139 : tensor<64x32x3x3xf32>
    %143 = stablehlo.multiply %78, %78 : tensor<64x32x3x3xf32>
    %144 = stablehlo.constant dense<1.000000e-03> : tensor<64x32x3x3xf32>
    %145 = stablehlo.multiply %144, %143 : tensor<64x32x3x3xf32>
    %146 = stablehlo.constant dense<9.990000e-01> : tensor<64x32x3x3xf32>
    %147 = stablehlo.multiply %146, %arg18 : tensor<64x32x3x3xf32>
    %148 = stablehlo.add %147, %145 : tensor<64x32x3x3xf32>
    %149 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %150 = stablehlo.divide %142, %149 : tensor<64x32x3x3xf32>
    %151 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %152 = stablehlo.divide %148, %151 : tensor<64x32x3x3xf32>
    %153 = stablehlo.constant dense<1.000000e-08> : tensor<64x32x3x3xf32>
    %154 = stablehlo.sqrt %152 : tensor<64x32x3x3xf32>
    %155 = stablehlo.add %154, %153 : tensor<64x32x3x3xf32>
    %156 = stablehlo.divide %150, %155 : tensor<64x32x3x3xf32>
    %157 = stablehlo.multiply %137, %156 : tensor<64x32x3x3xf32>
    %158 = stablehlo.subtract %arg2, %157 : tensor<64x32x3x3xf32>
    %159 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %160 = stablehlo.constant dense<1.000000e-01> : tensor<64xf32>
    %161 = stablehlo.multiply %160, %74 : tensor<64xf32>
    %162 = stablehlo.constant dense<9.000000e-01> : tensor<64xf32>
    %163 = stablehlo.multiply %162, %arg11 : tensor<64xf32>
    %164 = stablehlo.add %163, %161 : tensor<64xf32>
    %165 = stablehlo.multiply %74, %74 : tensor<64xf32>
    %166 = stablehlo.constant dense<1.000000e-03> : tensor<64xf32>
    %167 = stablehlo.multiply %166, %165 : tensor<64xf32>
    %168 = stablehlo.constant dense<9.990000e-01> : tensor<64xf32>
    %169 = stablehlo.multiply %168, %arg19 : tensor<64xf32>
    %170 = stablehlo.add %169, %167 : tensor<64xf32>
    %171 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %172 = stablehlo.divide %164, %171 : tensor<64xf32>
    %173 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %174 = stablehlo.divide %170, %173 : tensor<64xf32>
    %175 = stablehlo.constant dense<1.000000e-08> : tensor<64xf32>
    %176 = stablehlo.sqrt %174 : tensor<64xf32>
    %177 = stablehlo.add %176, %175 : tensor<64xf32>
    %178 = stablehlo.divide %172, %177 : tensor<64xf32>
    %179 = stablehlo.multiply %159, %178 : tensor<64xf32>
    %180 = stablehlo.subtract %arg3, %179 : tensor<64xf32>
    %181 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %182 = stablehlo.constant dense<1.000000e-01> : tensor<128x3136xf32>
    %183 = stablehlo.multiply %182, %67 : tensor<128x3136xf32>
    %184 = stablehlo.constant dense<9.000000e-01> : tensor<128x3136xf32>
    %185 = stablehlo.multiply %184, %arg12 : tensor<128x3136xf32>
    %186 = stablehlo.add %185, %183 : tensor<128x3136xf32>
    %187 = stablehlo.multiply %67, %67 : tensor<128x3136xf32>
    %188 = stablehlo.constant dense<1.000000e-03> : tensor<128x3136xf32>
    %189 = stablehlo.multiply %188, %187 : tensor<128x3136xf32>
    %190 = stablehlo.constant dense<9.990000e-01> : tensor<128x3136xf32>
    %191 = stablehlo.multiply %190, %arg20 : tensor<128x3136xf32>
    %192 = stablehlo.add %191, %189 : tensor<128x3136xf32>
    %193 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %194 = stablehlo.divide %186, %193 : tensor<128x3136xf32>
    %195 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %196 = stablehlo.divide %192, %195 : tensor<128x3136xf32>
    %197 = stablehlo.constant dense<1.000000e-08> : tensor<128x3136xf32>
    %198 = stablehlo.sqrt %196 : tensor<128x3136xf32>
    %199 = stablehlo.add %198, %197 : tensor<128x3136xf32>
    %200 = stablehlo.divide %194, %199 : tensor<128x3136xf32>
    %201 = stablehlo.multiply %181, %200 : tensor<128x3136xf32>
    %202 = stablehlo.subtract %arg4, %201 : tensor<128x3136xf32>
    %203 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %204 = stablehlo.constant dense<1.000000e-01> : tensor<128xf32>
    %205 = stablehlo.multiply %204, %65 : tensor<128xf32>
    %206 = stablehlo.constant dense<9.000000e-01> : tensor<128xf32>
    %207 = stablehlo.multiply %206, %arg13 : tensor<128xf32>
    %208 = stablehlo.add %207, %205 : tensor<128xf32>
    %209 = stablehlo.multiply %65, %65 : tensor<128xf32>
    %210 = stablehlo.constant dense<1.000000e-03> : tensor<128xf32>
    %211 = stablehlo.multiply %210, %209 : tensor<128xf32>
    %212 = stablehlo.constant dense<9.990000e-01> : tensor<128xf32>
    %213 = stablehlo.multiply %212, %arg21 : tensor<128xf32>
    %214 = stablehlo.add %213, %211 : tensor<128xf32>
    %215 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %216 = stablehlo.divide %208, %215 : tensor<128xf32>
    %217 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %218 = stablehlo.divide %214, %217 : tensor<128xf32>
    %219 = stablehlo.constant dense<1.000000e-08> : tensor<128xf32>
    %220 = stablehlo.sqrt %218 : tensor<128xf32>
    %221 = stablehlo.add %220, %219 : tensor<128xf32>
    %222 = stablehlo.divide %216, %221 : tensor<128xf32>
    %223 = stablehlo.multiply %203, %222 : tensor<128xf32>
    %224 = stablehlo.subtract %arg5, %223 : tensor<128xf32>
    %225 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %226 = stablehlo.constant dense<1.000000e-01> : tensor<10x128xf32>
    %227 = stablehlo.multiply %226, %62 : tensor<10x128xf32>
    %228 = stablehlo.constant dense<9.000000e-01> : tensor<10x128xf32>
    %229 = stablehlo.multiply %228, %arg14 : tensor<10x128xf32>
    %230 = stablehlo.add %229, %227 : tensor<10x128xf32>
    %231 = stablehlo.multiply %62, %62 : tensor<10x128xf32>
    %232 = stablehlo.constant dense<1.000000e-03> : tensor<10x128xf32>
    %233 = stablehlo.multiply %232, %231 : tensor<10x128xf32>
    %234 = stablehlo.constant dense<9.990000e-01> : tensor<10x128xf32>
    %235 = stablehlo.multiply %234, %arg22 : tensor<10x128xf32>
    %236 = stablehlo.add %235, %233 : tensor<10x128xf32>
    %237 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %238 = stablehlo.divide %230, %237 : tensor<10x128xf32>
    %239 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %240 = stablehlo.divide %236, %239 : tensor<10x128xf32>
    %241 = stablehlo.constant dense<1.000000e-08> : tensor<10x128xf32>
    %242 = stablehlo.sqrt %240 : tensor<10x128xf32>
    %243 = stablehlo.add %242, %241 : tensor<10x128xf32>
    %244 = stablehlo.divide %238, %243 : tensor<10x128xf32>
    %245 = stablehlo.multiply %225, %244 : tensor<10x128xf32>
    %246 = stablehlo.subtract %arg6, %245 : tensor<10x128xf32>
    %247 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %248 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %249 = stablehlo.multiply %248, %60 : tensor<10xf32>
    %250 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %251 = stablehlo.multiply %250, %arg15 : tensor<10xf32>
    %252 = stablehlo.add %251, %249 : tensor<10xf32>
    %253 = stablehlo.multiply %60, %60 : tensor<10xf32>
    %254 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %255 = stablehlo.multiply %254, %253 : tensor<10xf32>
    %256 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %257 = stablehlo.multiply %256, %arg23 : tensor<10xf32>
    %258 = stablehlo.add %257, %255 : tensor<10xf32>
    %259 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %260 = stablehlo.divide %252, %259 : tensor<10xf32>
    %261 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %262 = stablehlo.divide %258, %261 : tensor<10xf32>
    %263 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %264 = stablehlo.sqrt %262 : tensor<10xf32>
    %265 = stablehlo.add %264, %263 : tensor<10xf32>
    %266 = stablehlo.divide %260, %265 : tensor<10xf32>
    %267 = stablehlo.multiply %247, %266 : tensor<10xf32>
    %268 = stablehlo.subtract %arg7, %267 : tensor<10xf32>
    return %114, %136, %158, %180, %202, %224, %246, %268, %98, %120, %142, %164, %186, %208, %230, %252, %104, %126, %148, %170, %192, %214, %236, %258, %42 : tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<f32>
  }
}
