module @mnist_cnn_train_step {
  func.func public @main(%arg0: tensor<32x1x3x3xf32>, %arg1: tensor<32xf32>, %arg2: tensor<64x32x3x3xf32>, %arg3: tensor<64xf32>, %arg4: tensor<128x3136xf32>, %arg5: tensor<128xf32>, %arg6: tensor<10x128xf32>, %arg7: tensor<10xf32>, %arg8: tensor<32x1x3x3xf32>, %arg9: tensor<32xf32>, %arg10: tensor<64x32x3x3xf32>, %arg11: tensor<64xf32>, %arg12: tensor<128x3136xf32>, %arg13: tensor<128xf32>, %arg14: tensor<10x128xf32>, %arg15: tensor<10xf32>, %arg16: tensor<32x1x3x3xf32>, %arg17: tensor<32xf32>, %arg18: tensor<64x32x3x3xf32>, %arg19: tensor<64xf32>, %arg20: tensor<128x3136xf32>, %arg21: tensor<128xf32>, %arg22: tensor<10x128xf32>, %arg23: tensor<10xf32>, %arg24: tensor<8x1x28x28xf32>, %arg25: tensor<8xi32>, %arg26: tensor<f32>, %arg27: tensor<i32>) -> (tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<f32>) {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.convolution(%arg24, %arg0) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<32x1x3x3xf32>) -> tensor<8x32x28x28xf32>
    %2 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %3 = stablehlo.add %1, %2 : tensor<8x32x28x28xf32>
    %4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x32x28x28xf32>
    %6 = stablehlo.maximum %3, %5 : tensor<8x32x28x28xf32>
    %7 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %8 = "stablehlo.reduce_window"(%6, %7) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg28: tensor<f32>, %arg29: tensor<f32>):
      %9 = stablehlo.maximum %arg28, %arg29 : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<8x32x14x14xf32>
    %10 = stablehlo.convolution(%8, %arg2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<64x32x3x3xf32>) -> tensor<8x64x14x14xf32>
    %11 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %12 = stablehlo.add %10, %11 : tensor<8x64x14x14xf32>
    %13 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x64x14x14xf32>
    %14 = stablehlo.maximum %12, %13 : tensor<8x64x14x14xf32>
    %15 = "stablehlo.reduce_window"(%14, %7) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg30: tensor<f32>, %arg31: tensor<f32>):
      %16 = stablehlo.maximum %arg30, %arg31 : tensor<f32>
      stablehlo.return %16 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<8x64x7x7xf32>
    %17 = stablehlo.reshape %15 : (tensor<8x64x7x7xf32>) -> tensor<8x3136xf32>
    %18 = stablehlo.dot_general %17, %arg4, contracting_dims = [1] x [1] : (tensor<8x3136xf32>, tensor<128x3136xf32>) -> tensor<8x128xf32>
    %19 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<128xf32>) -> tensor<8x128xf32>
    %20 = stablehlo.add %18, %19 : tensor<8x128xf32>
    %21 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %22 = stablehlo.maximum %20, %21 : tensor<8x128xf32>
    %23 = stablehlo.dot_general %22, %arg6, contracting_dims = [1] x [1] : (tensor<8x128xf32>, tensor<10x128xf32>) -> tensor<8x10xf32>
    %24 = stablehlo.broadcast_in_dim %arg7, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %25 = stablehlo.add %23, %24 : tensor<8x10xf32>
    %26 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %27 = stablehlo.broadcast_in_dim %arg25, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %28 = stablehlo.compare  EQ, %26, %27,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %29 = stablehlo.convert %28 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %30 = stablehlo.constant dense<0.000000e+00> : tensor<8x10xf32>
    %31 = stablehlo.reduce(%25 init: %7) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %33 = stablehlo.subtract %25, %32 : tensor<8x10xf32>
    %34 = stablehlo.exponential %33 : tensor<8x10xf32>
    %35 = stablehlo.reduce(%34 init: %4) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %36 = stablehlo.log %35 : tensor<8xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %38 = stablehlo.subtract %33, %37 : tensor<8x10xf32>
    %39 = stablehlo.multiply %29, %38 : tensor<8x10xf32>
    %40 = stablehlo.reduce(%39 init: %4) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %41 = stablehlo.constant dense<-1.250000e-01> : tensor<f32>
    %42 = stablehlo.multiply %40, %41 : tensor<f32>
    %43 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %44 = stablehlo.multiply %43, %29 : tensor<8x10xf32>
    %45 = stablehlo.negate %44 : tensor<8x10xf32>
    %46 = stablehlo.reduce(%45 init: %4) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %47 = stablehlo.divide %46, %35 : tensor<8xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %49 = stablehlo.multiply %48, %34 : tensor<8x10xf32>
    %50 = stablehlo.add %44, %49 : tensor<8x10xf32>
    %51 = stablehlo.negate %50 : tensor<8x10xf32>
    %52 = stablehlo.reduce(%51 init: %4) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %53 = stablehlo.compare  EQ, %25, %32,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %54 = stablehlo.convert %53 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %55 = stablehlo.reduce(%54 init: %4) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %56 = stablehlo.divide %52, %55 : tensor<8xf32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %58 = stablehlo.select %53, %57, %30 : tensor<8x10xi1>, tensor<8x10xf32>
    %59 = stablehlo.add %50, %58 : tensor<8x10xf32>
    %60 = stablehlo.reduce(%59 init: %4) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %61 = stablehlo.dot_general %59, %arg6, contracting_dims = [1] x [0] : (tensor<8x10xf32>, tensor<10x128xf32>) -> tensor<8x128xf32>
    %62 = stablehlo.dot_general %59, %22, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x128xf32>) -> tensor<10x128xf32>
    %63 = stablehlo.compare  GE, %20, %21,  FLOAT : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xi1>
    %64 = stablehlo.select %63, %61, %21 : tensor<8x128xi1>, tensor<8x128xf32>
    %65 = stablehlo.reduce(%64 init: %4) applies stablehlo.add across dimensions = [0] : (tensor<8x128xf32>, tensor<f32>) -> tensor<128xf32>
    %66 = stablehlo.dot_general %64, %arg4, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x3136xf32>) -> tensor<8x3136xf32>
    %67 = stablehlo.dot_general %64, %17, contracting_dims = [0] x [0] : (tensor<8x128xf32>, tensor<8x3136xf32>) -> tensor<128x3136xf32>
    %68 = stablehlo.reshape %66 : (tensor<8x3136xf32>) -> tensor<8x64x7x7xf32>
    %69 = "stablehlo.select_and_scatter"(%14, %68, %4) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg32: tensor<f32>, %arg33: tensor<f32>):
      %70 = stablehlo.compare  GE, %arg32, %arg33,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %70 : tensor<i1>
    }, {
    ^bb0(%arg34: tensor<f32>, %arg35: tensor<f32>):
      %71 = stablehlo.add %arg34, %arg35 : tensor<f32>
      stablehlo.return %71 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<8x64x7x7xf32>, tensor<f32>) -> tensor<8x64x14x14xf32>
    %72 = stablehlo.compare  GE, %12, %13,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
    %73 = stablehlo.select %72, %69, %13 : tensor<8x64x14x14xi1>, tensor<8x64x14x14xf32>
    %74 = stablehlo.reduce(%73 init: %4) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %75 = stablehlo.transpose %arg2, dims = [1, 0, 2, 3] : (tensor<64x32x3x3xf32>) -> tensor<32x64x3x3xf32>
    %76 = stablehlo.reverse %75, dims = [2, 3] : tensor<32x64x3x3xf32>
    %77 = stablehlo.convolution(%73, %76) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<32x64x3x3xf32>) -> tensor<8x32x14x14xf32>
    %78 = stablehlo.convolution(%8, %73) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x32x3x3xf32>
    %79 = "stablehlo.select_and_scatter"(%6, %77, %4) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg36: tensor<f32>, %arg37: tensor<f32>):
      %80 = stablehlo.compare  GE, %arg36, %arg37,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %80 : tensor<i1>
    }, {
    ^bb0(%arg38: tensor<f32>, %arg39: tensor<f32>):
      %81 = stablehlo.add %arg38, %arg39 : tensor<f32>
      stablehlo.return %81 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<8x32x14x14xf32>, tensor<f32>) -> tensor<8x32x28x28xf32>
    %82 = stablehlo.compare  GE, %3, %5,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %83 = stablehlo.select %82, %79, %5 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %84 = stablehlo.reduce(%83 init: %4) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %85 = stablehlo.convolution(%arg24, %83) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x1x3x3xf32>
    %86 = stablehlo.convert %arg27 : (tensor<i32>) -> tensor<f32>
    %87 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %88 = stablehlo.power %87, %86 : tensor<f32>
    %89 = stablehlo.subtract %0, %88 : tensor<f32>
    %90 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %91 = stablehlo.power %90, %86 : tensor<f32>
    %92 = stablehlo.subtract %0, %91 : tensor<f32>
    %93 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %94 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %95 = stablehlo.broadcast_in_dim %94, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %96 = stablehlo.multiply %95, %85 : tensor<32x1x3x3xf32>
    %97 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %98 = stablehlo.multiply %97, %arg8 : tensor<32x1x3x3xf32>
    %99 = stablehlo.add %98, %96 : tensor<32x1x3x3xf32>
    %100 = stablehlo.multiply %85, %85 : tensor<32x1x3x3xf32>
    %101 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %102 = stablehlo.broadcast_in_dim %101, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %103 = stablehlo.multiply %102, %100 : tensor<32x1x3x3xf32>
    %104 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %105 = stablehlo.multiply %104, %arg16 : tensor<32x1x3x3xf32>
    %106 = stablehlo.add %105, %103 : tensor<32x1x3x3xf32>
    %107 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %108 = stablehlo.divide %99, %107 : tensor<32x1x3x3xf32>
    %109 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %110 = stablehlo.divide %106, %109 : tensor<32x1x3x3xf32>
    %111 = stablehlo.constant dense<1.000000e-08> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %113 = stablehlo.sqrt %110 : tensor<32x1x3x3xf32>
    %114 = stablehlo.add %113, %112 : tensor<32x1x3x3xf32>
    %115 = stablehlo.divide %108, %114 : tensor<32x1x3x3xf32>
    %116 = stablehlo.multiply %93, %115 : tensor<32x1x3x3xf32>
    %117 = stablehlo.subtract %arg0, %116 : tensor<32x1x3x3xf32>
    %118 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %119 = stablehlo.constant dense<1.000000e-01> : tensor<32xf32>
    %120 = stablehlo.multiply %119, %84 : tensor<32xf32>
    %121 = stablehlo.constant dense<9.000000e-01> : tensor<32xf32>
    %122 = stablehlo.multiply %121, %arg9 : tensor<32xf32>
    %123 = stablehlo.add %122, %120 : tensor<32xf32>
    %124 = stablehlo.multiply %84, %84 : tensor<32xf32>
    %125 = stablehlo.constant dense<1.000000e-03> : tensor<32xf32>
    %126 = stablehlo.multiply %125, %124 : tensor<32xf32>
    %127 = stablehlo.constant dense<9.990000e-01> : tensor<32xf32>
    %128 = stablehlo.multiply %127, %arg17 : tensor<32xf32>
    %129 = stablehlo.add %128, %126 : tensor<32xf32>
    %130 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %131 = stablehlo.divide %123, %130 : tensor<32xf32>
    %132 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %133 = stablehlo.divide %129, %132 : tensor<32xf32>
    %134 = stablehlo.constant dense<1.000000e-08> : tensor<32xf32>
    %135 = stablehlo.sqrt %133 : tensor<32xf32>
    %136 = stablehlo.add %135, %134 : tensor<32xf32>
    %137 = stablehlo.divide %131, %136 : tensor<32xf32>
    %138 = stablehlo.multiply %118, %137 : tensor<32xf32>
    %139 = stablehlo.subtract %arg1, %138 : tensor<32xf32>
    %140 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %141 = stablehlo.broadcast_in_dim %94, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %142 = stablehlo.multiply %141, %78 : tensor<64x32x3x3xf32>
    %143 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %144 = stablehlo.multiply %143, %arg10 : tensor<64x32x3x3xf32>
    %145 = stablehlo.add %144, %142 : tensor<64x32x3x3xf32>
    %146 = stablehlo.multiply %78, %78 : tensor<64x32x3x3xf32>
    %147 = stablehlo.broadcast_in_dim %101, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %148 = stablehlo.multiply %147, %146 : tensor<64x32x3x3xf32>
    %149 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %150 = stablehlo.multiply %149, %arg18 : tensor<64x32x3x3xf32>
    %151 = stablehlo.add %150, %148 : tensor<64x32x3x3xf32>
    %152 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %153 = stablehlo.divide %145, %152 : tensor<64x32x3x3xf32>
    %154 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %155 = stablehlo.divide %151, %154 : tensor<64x32x3x3xf32>
    %156 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %157 = stablehlo.sqrt %155 : tensor<64x32x3x3xf32>
    %158 = stablehlo.add %157, %156 : tensor<64x32x3x3xf32>
    %159 = stablehlo.divide %153, %158 : tensor<64x32x3x3xf32>
    %160 = stablehlo.multiply %140, %159 : tensor<64x32x3x3xf32>
    %161 = stablehlo.subtract %arg2, %160 : tensor<64x32x3x3xf32>
    %162 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %163 = stablehlo.constant dense<1.000000e-01> : tensor<64xf32>
    %164 = stablehlo.multiply %163, %74 : tensor<64xf32>
    %165 = stablehlo.constant dense<9.000000e-01> : tensor<64xf32>
    %166 = stablehlo.multiply %165, %arg11 : tensor<64xf32>
    %167 = stablehlo.add %166, %164 : tensor<64xf32>
    %168 = stablehlo.multiply %74, %74 : tensor<64xf32>
    %169 = stablehlo.constant dense<1.000000e-03> : tensor<64xf32>
    %170 = stablehlo.multiply %169, %168 : tensor<64xf32>
    %171 = stablehlo.constant dense<9.990000e-01> : tensor<64xf32>
    %172 = stablehlo.multiply %171, %arg19 : tensor<64xf32>
    %173 = stablehlo.add %172, %170 : tensor<64xf32>
    %174 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %175 = stablehlo.divide %167, %174 : tensor<64xf32>
    %176 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %177 = stablehlo.divide %173, %176 : tensor<64xf32>
    %178 = stablehlo.constant dense<1.000000e-08> : tensor<64xf32>
    %179 = stablehlo.sqrt %177 : tensor<64xf32>
    %180 = stablehlo.add %179, %178 : tensor<64xf32>
    %181 = stablehlo.divide %175, %180 : tensor<64xf32>
    %182 = stablehlo.multiply %162, %181 : tensor<64xf32>
    %183 = stablehlo.subtract %arg3, %182 : tensor<64xf32>
    %184 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %185 = stablehlo.broadcast_in_dim %94, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %186 = stablehlo.multiply %185, %67 : tensor<128x3136xf32>
    %187 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %188 = stablehlo.multiply %187, %arg12 : tensor<128x3136xf32>
    %189 = stablehlo.add %188, %186 : tensor<128x3136xf32>
    %190 = stablehlo.multiply %67, %67 : tensor<128x3136xf32>
    %191 = stablehlo.broadcast_in_dim %101, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %192 = stablehlo.multiply %191, %190 : tensor<128x3136xf32>
    %193 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %194 = stablehlo.multiply %193, %arg20 : tensor<128x3136xf32>
    %195 = stablehlo.add %194, %192 : tensor<128x3136xf32>
    %196 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %197 = stablehlo.divide %189, %196 : tensor<128x3136xf32>
    %198 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %199 = stablehlo.divide %195, %198 : tensor<128x3136xf32>
    %200 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<f32>) -> tensor<128x3136xf32>
    %201 = stablehlo.sqrt %199 : tensor<128x3136xf32>
    %202 = stablehlo.add %201, %200 : tensor<128x3136xf32>
    %203 = stablehlo.divide %197, %202 : tensor<128x3136xf32>
    %204 = stablehlo.multiply %184, %203 : tensor<128x3136xf32>
    %205 = stablehlo.subtract %arg4, %204 : tensor<128x3136xf32>
    %206 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %207 = stablehlo.constant dense<1.000000e-01> : tensor<128xf32>
    %208 = stablehlo.multiply %207, %65 : tensor<128xf32>
    %209 = stablehlo.constant dense<9.000000e-01> : tensor<128xf32>
    %210 = stablehlo.multiply %209, %arg13 : tensor<128xf32>
    %211 = stablehlo.add %210, %208 : tensor<128xf32>
    %212 = stablehlo.multiply %65, %65 : tensor<128xf32>
    %213 = stablehlo.constant dense<1.000000e-03> : tensor<128xf32>
    %214 = stablehlo.multiply %213, %212 : tensor<128xf32>
    %215 = stablehlo.constant dense<9.990000e-01> : tensor<128xf32>
    %216 = stablehlo.multiply %215, %arg21 : tensor<128xf32>
    %217 = stablehlo.add %216, %214 : tensor<128xf32>
    %218 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %219 = stablehlo.divide %211, %218 : tensor<128xf32>
    %220 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %221 = stablehlo.divide %217, %220 : tensor<128xf32>
    %222 = stablehlo.constant dense<1.000000e-08> : tensor<128xf32>
    %223 = stablehlo.sqrt %221 : tensor<128xf32>
    %224 = stablehlo.add %223, %222 : tensor<128xf32>
    %225 = stablehlo.divide %219, %224 : tensor<128xf32>
    %226 = stablehlo.multiply %206, %225 : tensor<128xf32>
    %227 = stablehlo.subtract %arg5, %226 : tensor<128xf32>
    %228 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %229 = stablehlo.broadcast_in_dim %94, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %230 = stablehlo.multiply %229, %62 : tensor<10x128xf32>
    %231 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %232 = stablehlo.multiply %231, %arg14 : tensor<10x128xf32>
    %233 = stablehlo.add %232, %230 : tensor<10x128xf32>
    %234 = stablehlo.multiply %62, %62 : tensor<10x128xf32>
    %235 = stablehlo.broadcast_in_dim %101, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %236 = stablehlo.multiply %235, %234 : tensor<10x128xf32>
    %237 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %238 = stablehlo.multiply %237, %arg22 : tensor<10x128xf32>
    %239 = stablehlo.add %238, %236 : tensor<10x128xf32>
    %240 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %241 = stablehlo.divide %233, %240 : tensor<10x128xf32>
    %242 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %243 = stablehlo.divide %239, %242 : tensor<10x128xf32>
    %244 = stablehlo.broadcast_in_dim %111, dims = [] : (tensor<f32>) -> tensor<10x128xf32>
    %245 = stablehlo.sqrt %243 : tensor<10x128xf32>
    %246 = stablehlo.add %245, %244 : tensor<10x128xf32>
    %247 = stablehlo.divide %241, %246 : tensor<10x128xf32>
    %248 = stablehlo.multiply %228, %247 : tensor<10x128xf32>
    %249 = stablehlo.subtract %arg6, %248 : tensor<10x128xf32>
    %250 = stablehlo.broadcast_in_dim %arg26, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %251 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %252 = stablehlo.multiply %251, %60 : tensor<10xf32>
    %253 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %254 = stablehlo.multiply %253, %arg15 : tensor<10xf32>
    %255 = stablehlo.add %254, %252 : tensor<10xf32>
    %256 = stablehlo.multiply %60, %60 : tensor<10xf32>
    %257 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %258 = stablehlo.multiply %257, %256 : tensor<10xf32>
    %259 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %260 = stablehlo.multiply %259, %arg23 : tensor<10xf32>
    %261 = stablehlo.add %260, %258 : tensor<10xf32>
    %262 = stablehlo.broadcast_in_dim %89, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %263 = stablehlo.divide %255, %262 : tensor<10xf32>
    %264 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %265 = stablehlo.divide %261, %264 : tensor<10xf32>
    %266 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %267 = stablehlo.sqrt %265 : tensor<10xf32>
    %268 = stablehlo.add %267, %266 : tensor<10xf32>
    %269 = stablehlo.divide %263, %268 : tensor<10xf32>
    %270 = stablehlo.multiply %250, %269 : tensor<10xf32>
    %271 = stablehlo.subtract %arg7, %270 : tensor<10xf32>
    return %117, %139, %161, %183, %205, %227, %249, %271, %99, %123, %145, %167, %189, %211, %233, %255, %106, %129, %151, %173, %195, %217, %239, %261, %42 : tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<128x3136xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>, tensor<f32>
  }
}
