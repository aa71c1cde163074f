module @mnist_cnn_train_step {
  func.func public @main(%arg0: tensor<32x1x3x3xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x32x3x3xf32>, %arg4: tensor<32xf32>, %arg5: tensor<32xf32>, %arg6: tensor<64x32x3x3xf32>, %arg7: tensor<64xf32>, %arg8: tensor<64xf32>, %arg9: tensor<64x64x3x3xf32>, %arg10: tensor<64xf32>, %arg11: tensor<64xf32>, %arg12: tensor<512x3136xf32>, %arg13: tensor<512xf32>, %arg14: tensor<10x512xf32>, %arg15: tensor<10xf32>, %arg16: tensor<32x1x3x3xf32>, %arg17: tensor<32xf32>, %arg18: tensor<32xf32>, %arg19: tensor<32x32x3x3xf32>, %arg20: tensor<32xf32>, %arg21: tensor<32xf32>, %arg22: tensor<64x32x3x3xf32>, %arg23: tensor<64xf32>, %arg24: tensor<64xf32>, %arg25: tensor<64x64x3x3xf32>, %arg26: tensor<64xf32>, %arg27: tensor<64xf32>, %arg28: tensor<512x3136xf32>, %arg29: tensor<512xf32>, %arg30: tensor<10x512xf32>, %arg31: tensor<10xf32>, %arg32: tensor<32x1x3x3xf32>, %arg33: tensor<32xf32>, %arg34: tensor<32xf32>, %arg35: tensor<32x32x3x3xf32>, %arg36: tensor<32xf32>, %arg37: tensor<32xf32>, %arg38: tensor<64x32x3x3xf32>, %arg39: tensor<64xf32>, %arg40: tensor<64xf32>, %arg41: tensor<64x64x3x3xf32>, %arg42: tensor<64xf32>, %arg43: tensor<64xf32>, %arg44: tensor<512x3136xf32>, %arg45: tensor<512xf32>, %arg46: tensor<10x512xf32>, %arg47: tensor<10xf32>, %arg48: tensor<8x1x28x28xf32>, %arg49: tensor<8xi32>, %arg50: tensor<f32>, %arg51: tensor<i32>) -> (tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.convolution(%arg48, %arg0) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<32x1x3x3xf32>) -> tensor<8x32x28x28xf32>
    %3 = stablehlo.reduce(%2 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %4 = stablehlo.constant dense<1.5943877e-04> : tensor<32xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<32xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %7 = stablehlo.subtract %2, %6 : tensor<8x32x28x28xf32>
    %8 = stablehlo.multiply %7, %7 : tensor<8x32x28x28xf32>
    %9 = stablehlo.reduce(%8 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %10 = stablehlo.multiply %9, %4 : tensor<32xf32>
    %11 = stablehlo.constant dense<1.000000e-05> : tensor<32xf32>
    %12 = stablehlo.add %10, %11 : tensor<32xf32>
    %13 = stablehlo.rsqrt %12 : tensor<32xf32>
    %14 = stablehlo.multiply %arg1, %13 : tensor<32xf32>
    %15 = stablehlo.multiply %5, %14 : tensor<32xf32>
    %16 = stablehlo.subtract %arg2, %15 : tensor<32xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %18 = stablehlo.broadcast_in_dim %14, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %19 = stablehlo.multiply %2, %18 : tensor<8x32x28x28xf32>
    %20 = stablehlo.add %19, %17 : tensor<8x32x28x28xf32>
    %21 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x32x28x28xf32>
    %22 = stablehlo.maximum %20, %21 : tensor<8x32x28x28xf32>
    %23 = stablehlo.convolution(%22, %arg3) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x28x28xf32>
    %24 = stablehlo.reduce(%23 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %25 = stablehlo.multiply %24, %4 : tensor<32xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %27 = stablehlo.subtract %23, %26 : tensor<8x32x28x28xf32>
    %28 = stablehlo.multiply %27, %27 : tensor<8x32x28x28xf32>
    %29 = stablehlo.reduce(%28 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %30 = stablehlo.multiply %29, %4 : tensor<32xf32>
    %31 = stablehlo.add %30, %11 : tensor<32xf32>
    %32 = stablehlo.rsqrt %31 : tensor<32xf32>
    %33 = stablehlo.multiply %arg4, %32 : tensor<32xf32>
    %34 = stablehlo.multiply %25, %33 : tensor<32xf32>
    %35 = stablehlo.subtract %arg5, %34 : tensor<32xf32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %37 = stablehlo.broadcast_in_dim %33, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %38 = stablehlo.multiply %23, %37 : tensor<8x32x28x28xf32>
    %39 = stablehlo.add %38, %36 : tensor<8x32x28x28xf32>
    %40 = stablehlo.maximum %39, %21 : tensor<8x32x28x28xf32>
    %41 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %42 = "stablehlo.reduce_window"(%40, %41) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg52: tensor<f32>, %arg53: tensor<f32>):
      %43 = stablehlo.maximum %arg52, %arg53 : tensor<f32>
      stablehlo.return %43 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<8x32x14x14xf32>
    %44 = stablehlo.convolution(%42, %arg6) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<64x32x3x3xf32>) -> tensor<8x64x14x14xf32>
    %45 = stablehlo.reduce(%44 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %46 = stablehlo.constant dense<6.377551e-04> : tensor<64xf32>
    %47 = stablehlo.multiply %45, %46 : tensor<64xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %49 = stablehlo.subtract %44, %48 : tensor<8x64x14x14xf32>
    %50 = stablehlo.multiply %49, %49 : tensor<8x64x14x14xf32>
    %51 = stablehlo.reduce(%50 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %52 = stablehlo.multiply %51, %46 : tensor<64xf32>
    %53 = stablehlo.constant dense<1.000000e-05> : tensor<64xf32>
    %54 = stablehlo.add %52, %53 : tensor<64xf32>
    %55 = stablehlo.rsqrt %54 : tensor<64xf32>
    %56 = stablehlo.multiply %arg7, %55 : tensor<64xf32>
    %57 = stablehlo.multiply %47, %56 : tensor<64xf32>
    %58 = stablehlo.subtract %arg8, %57 : tensor<64xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %60 = stablehlo.broadcast_in_dim %56, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %61 = stablehlo.multiply %44, %60 : tensor<8x64x14x14xf32>
    %62 = stablehlo.add %61, %59 : tensor<8x64x14x14xf32>
    %63 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x64x14x14xf32>
    %64 = stablehlo.maximum %62, %63 : tensor<8x64x14x14xf32>
    %65 = stablehlo.convolution(%64, %arg9) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x14x14xf32>
    %66 = stablehlo.reduce(%65 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %67 = stablehlo.multiply %66, %46 : tensor<64xf32>
    %68 = stablehlo.broadcast_in_dim %67, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %69 = stablehlo.subtract %65, %68 : tensor<8x64x14x14xf32>
    %70 = stablehlo.multiply %69, %69 : tensor<8x64x14x14xf32>
    %71 = stablehlo.reduce(%70 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %72 = stablehlo.multiply %71, %46 : tensor<64xf32>
    %73 = stablehlo.add %72, %53 : tensor<64xf32>
    %74 = stablehlo.rsqrt %73 : tensor<64xf32>
    %75 = stablehlo.multiply %arg10, %74 : tensor<64xf32>
    %76 = stablehlo.multiply %67, %75 : tensor<64xf32>
    %77 = stablehlo.subtract %arg11, %76 : tensor<64xf32>
    %78 = stablehlo.broadcast_in_dim %77, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %79 = stablehlo.broadcast_in_dim %75, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %80 = stablehlo.multiply %65, %79 : tensor<8x64x14x14xf32>
    %81 = stablehlo.add %80, %78 : tensor<8x64x14x14xf32>
    %82 = stablehlo.maximum %81, %63 : tensor<8x64x14x14xf32>
    %83 = "stablehlo.reduce_window"(%82, %41) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg54: tensor<f32>, %arg55: tensor<f32>):
      %84 = stablehlo.maximum %arg54, %arg55 : tensor<f32>
      stablehlo.return %84 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<8x64x7x7xf32>
    %85 = stablehlo.reshape %83 : (tensor<8x64x7x7xf32>) -> tensor<8x3136xf32>
    %86 = stablehlo.dot_general %85, %arg12, contracting_dims = [1] x [1] : (tensor<8x3136xf32>, tensor<512x3136xf32>) -> tensor<8x512xf32>
    %87 = stablehlo.broadcast_in_dim %arg13, dims = [1] : (tensor<512xf32>) -> tensor<8x512xf32>
    %88 = stablehlo.add %86, %87 : tensor<8x512xf32>
    %89 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %90 = stablehlo.maximum %88, %89 : tensor<8x512xf32>
    %91 = stablehlo.dot_general %90, %arg14, contracting_dims = [1] x [1] : (tensor<8x512xf32>, tensor<10x512xf32>) -> tensor<8x10xf32>
    %92 = stablehlo.broadcast_in_dim %arg15, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %93 = stablehlo.add %91, %92 : tensor<8x10xf32>
    %94 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %95 = stablehlo.broadcast_in_dim %arg49, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %96 = stablehlo.compare  EQ, %94, %95,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %97 = stablehlo.convert %96 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %98 = stablehlo.constant dense<0.000000e+00> : tensor<8x10xf32>
    %99 = stablehlo.reduce(%93 init: %41) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %100 = stablehlo.broadcast_in_dim %99, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %101 = stablehlo.subtract %93, %100 : tensor<8x10xf32>
    %102 = stablehlo.exponential %101 : tensor<8x10xf32>
    %103 = stablehlo.reduce(%102 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %104 = stablehlo.log %103 : tensor<8xf32>
    %105 = stablehlo.broadcast_in_dim %104, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %106 = stablehlo.subtract %101, %105 : tensor<8x10xf32>
    %107 = stablehlo.multiply %97, %106 : tensor<8x10xf32>
    %108 = stablehlo.reduce(%107 init: %1) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %109 = stablehlo.constant dense<-1.250000e-01> : tensor<f32>
    %110 = stablehlo.multiply %108, %109 : tensor<f32>
    %111 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %112 = stablehlo.multiply %111, %97 : tensor<8x10xf32>
    %113 = stablehlo.negate %112 : tensor<8x10xf32>
    %114 = stablehlo.reduce(%113 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %115 = stablehlo.divide %114, %103 : tensor<8xf32>
    %116 = stablehlo.broadcast_in_dim %115, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %117 = stablehlo.multiply %116, %102 : tensor<8x10xf32>
    %118 = stablehlo.add %112, %117 : tensor<8x10xf32>
    %119 = stablehlo.negate %118 : tensor<8x10xf32>
    %120 = stablehlo.reduce(%119 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %121 = stablehlo.compare  EQ, %93, %100,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %122 = stablehlo.convert %121 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %123 = stablehlo.reduce(%122 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %124 = stablehlo.divide %120, %123 : tensor<8xf32>
    %125 = stablehlo.broadcast_in_dim %124, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %126 = stablehlo.select %121, %125, %98 : tensor<8x10xi1>, tensor<8x10xf32>
    %127 = stablehlo.add %118, %126 : tensor<8x10xf32>
    %128 = stablehlo.reduce(%127 init: %1) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %129 = stablehlo.dot_general %127, %arg14, contracting_dims = [1] x [0] : (tensor<8x10xf32>, tensor<10x512xf32>) -> tensor<8x512xf32>
    %130 = stablehlo.dot_general %127, %90, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x512xf32>) -> tensor<10x512xf32>
    %131 = stablehlo.compare  GE, %88, %89,  FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
    %132 = stablehlo.select %131, %129, %89 : tensor<8x512xi1>, tensor<8x512xf32>
    %133 = stablehlo.reduce(%132 init: %1) applies stablehlo.add across dimensions = [0] : (tensor<8x512xf32>, tensor<f32>) -> tensor<512xf32>
    %134 = stablehlo.dot_general %132, %arg12, contracting_dims = [1] x [0] : (tensor<8x512xf32>, tensor<512x3136xf32>) -> tensor<8x3136xf32>
    %135 = stablehlo.dot_general %132, %85, contracting_dims = [0] x [0] : (tensor<8x512xf32>, tensor<8x3136xf32>) -> tensor<512x3136xf32>
    %136 = stablehlo.reshape %134 : (tensor<8x3136xf32>) -> tensor<8x64x7x7xf32>
    %137 = "stablehlo.select_and_scatter"(%82, %136, %1) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg56: tensor<f32>, %arg57: tensor<f32>):
      %138 = stablehlo.compare  GE, %arg56, %arg57,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %138 : tensor<i1>
    }, {
    ^bb0(%arg58: tensor<f32>, %arg59: tensor<f32>):
      %139 = stablehlo.add %arg58, %arg59 : tensor<f32>
      stablehlo.return %139 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<8x64x7x7xf32>, tensor<f32>) -> tensor<8x64x14x14xf32>
    %140 = stablehlo.compare  GE, %81, %63,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
    %141 = stablehlo.select %140, %137, %63 : tensor<8x64x14x14xi1>, tensor<8x64x14x14xf32>
    %142 = stablehlo.multiply %141, %79 : tensor<8x64x14x14xf32>
    %143 = stablehlo.multiply %141, %65 : tensor<8x64x14x14xf32>
    %144 = stablehlo.reduce(%143 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %145 = stablehlo.reduce(%141 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %146 = stablehlo.negate %145 : tensor<64xf32>
    %147 = stablehlo.multiply %146, %75 : tensor<64xf32>
    %148 = stablehlo.multiply %146, %67 : tensor<64xf32>
    %149 = stablehlo.add %144, %148 : tensor<64xf32>
    %150 = stablehlo.multiply %149, %74 : tensor<64xf32>
    %151 = stablehlo.multiply %149, %arg10 : tensor<64xf32>
    %152 = stablehlo.divide %74, %73 : tensor<64xf32>
    %153 = stablehlo.constant dense<-5.000000e-01> : tensor<64xf32>
    %154 = stablehlo.multiply %151, %153 : tensor<64xf32>
    %155 = stablehlo.multiply %154, %152 : tensor<64xf32>
    %156 = stablehlo.multiply %155, %46 : tensor<64xf32>
    %157 = stablehlo.broadcast_in_dim %156, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %158 = stablehlo.multiply %157, %69 : tensor<8x64x14x14xf32>
    %159 = stablehlo.add %158, %158 : tensor<8x64x14x14xf32>
    %160 = stablehlo.negate %159 : tensor<8x64x14x14xf32>
    %161 = stablehlo.add %142, %159 : tensor<8x64x14x14xf32>
    %162 = stablehlo.reduce(%160 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %163 = stablehlo.add %147, %162 : tensor<64xf32>
    %164 = stablehlo.multiply %163, %46 : tensor<64xf32>
    %165 = stablehlo.broadcast_in_dim %164, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %166 = stablehlo.add %161, %165 : tensor<8x64x14x14xf32>
    %167 = stablehlo.transpose %arg9, dims = [1, 0, 2, 3] : (tensor<64x64x3x3xf32>) -> tensor<64x64x3x3xf32>
    %168 = stablehlo.reverse %167, dims = [2, 3] : tensor<64x64x3x3xf32>
    %169 = stablehlo.convolution(%166, %168) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x14x14xf32>
    %170 = stablehlo.convolution(%64, %166) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x64x3x3xf32>
    %171 = stablehlo.compare  GE, %62, %63,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
    %172 = stablehlo.select %171, %169, %63 : tensor<8x64x14x14xi1>, tensor<8x64x14x14xf32>
    %173 = stablehlo.multiply %172, %60 : tensor<8x64x14x14xf32>
    %174 = stablehlo.multiply %172, %44 : tensor<8x64x14x14xf32>
    %175 = stablehlo.reduce(%174 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %176 = stablehlo.reduce(%172 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %177 = stablehlo.negate %176 : tensor<64xf32>
    %178 = stablehlo.multiply %177, %56 : tensor<64xf32>
    %179 = stablehlo.multiply %177, %47 : tensor<64xf32>
    %180 = stablehlo.add %175, %179 : tensor<64xf32>
    %181 = stablehlo.multiply %180, %55 : tensor<64xf32>
    %182 = stablehlo.multiply %180, %arg7 : tensor<64xf32>
    %183 = stablehlo.divide %55, %54 : tensor<64xf32>
    %184 = stablehlo.multiply %182, %153 : tensor<64xf32>
    %185 = stablehlo.multiply %184, %183 : tensor<64xf32>
    %186 = stablehlo.multiply %185, %46 : tensor<64xf32>
    %187 = stablehlo.broadcast_in_dim %186, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %188 = stablehlo.multiply %187, %49 : tensor<8x64x14x14xf32>
    %189 = stablehlo.add %188, %188 : tensor<8x64x14x14xf32>
    %190 = stablehlo.negate %189 : tensor<8x64x14x14xf32>
    %191 = stablehlo.add %173, %189 : tensor<8x64x14x14xf32>
    %192 = stablehlo.reduce(%190 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %193 = stablehlo.add %178, %192 : tensor<64xf32>
    %194 = stablehlo.multiply %193, %46 : tensor<64xf32>
    %195 = stablehlo.broadcast_in_dim %194, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %196 = stablehlo.add %191, %195 : tensor<8x64x14x14xf32>
    %197 = stablehlo.transpose %arg6, dims = [1, 0, 2, 3] : (tensor<64x32x3x3xf32>) -> tensor<32x64x3x3xf32>
    %198 = stablehlo.reverse %197, dims = [2, 3] : tensor<32x64x3x3xf32>
    %199 = stablehlo.convolution(%196, %198) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<32x64x3x3xf32>) -> tensor<8x32x14x14xf32>
    %200 = stablehlo.convolution(%42, %196) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x32x3x3xf32>
    %201 = "stablehlo.select_and_scatter"(%40, %199, %1) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg60: tensor<f32>, %arg61: tensor<f32>):
      %202 = stablehlo.compare  GE, %arg60, %arg61,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %202 : tensor<i1>
    }, {
    ^bb0(%arg62: tensor<f32>, %arg63: tensor<f32>):
      %203 = stablehlo.add %arg62, %arg63 : tensor<f32>
      stablehlo.return %203 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<8x32x14x14xf32>, tensor<f32>) -> tensor<8x32x28x28xf32>
    %204 = stablehlo.compare  GE, %39, %21,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %205 = stablehlo.select %204, %201, %21 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %206 = stablehlo.multiply %205, %37 : tensor<8x32x28x28xf32>
    %207 = stablehlo.multiply %205, %23 : tensor<8x32x28x28xf32>
    %208 = stablehlo.reduce(%207 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %209 = stablehlo.reduce(%205 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %210 = stablehlo.negate %209 : tensor<32xf32>
    %211 = stablehlo.multiply %210, %33 : tensor<32xf32>
    %212 = stablehlo.multiply %210, %25 : tensor<32xf32>
    %213 = stablehlo.add %208, %212 : tensor<32xf32>
    %214 = stablehlo.multiply %213, %32 : tensor<32xf32>
    %215 = stablehlo.multiply %213, %arg4 : tensor<32xf32>
    %216 = stablehlo.divide %32, %31 : tensor<32xf32>
    %217 = stablehlo.constant dense<-5.000000e-01> : tensor<32xf32>
    %218 = stablehlo.multiply %215, %217 : tensor<32xf32>
    %219 = stablehlo.multiply %218, %216 : tensor<32xf32>
    %220 = stablehlo.multiply %219, %4 : tensor<32xf32>
    %221 = stablehlo.broadcast_in_dim %220, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %222 = stablehlo.multiply %221, %27 : tensor<8x32x28x28xf32>
    %223 = stablehlo.add %222, %222 : tensor<8x32x28x28xf32>
    %224 = stablehlo.negate %223 : tensor<8x32x28x28xf32>
    %225 = stablehlo.add %206, %223 : tensor<8x32x28x28xf32>
    %226 = stablehlo.reduce(%224 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %227 = stablehlo.add %211, %226 : tensor<32xf32>
    %228 = stablehlo.multiply %227, %4 : tensor<32xf32>
    %229 = stablehlo.broadcast_in_dim %228, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %230 = stablehlo.add %225, %229 : tensor<8x32x28x28xf32>
    %231 = stablehlo.transpose %arg3, dims = [1, 0, 2, 3] : (tensor<32x32x3x3xf32>) -> tensor<32x32x3x3xf32>
    %232 = stablehlo.reverse %231, dims = [2, 3] : tensor<32x32x3x3xf32>
    %233 = stablehlo.convolution(%230, %232) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x28x28xf32>
    %234 = stablehlo.convolution(%22, %230) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x32x3x3xf32>
    %235 = stablehlo.compare  GE, %20, %21,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %236 = stablehlo.select %235, %233, %21 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %237 = stablehlo.multiply %236, %18 : tensor<8x32x28x28xf32>
    %238 = stablehlo.multiply %236, %2 : tensor<8x32x28x28xf32>
    %239 = stablehlo.reduce(%238 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %240 = stablehlo.reduce(%236 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %241 = stablehlo.negate %240 : tensor<32xf32>
    %242 = stablehlo.multiply %241, %14 : tensor<32xf32>
    %243 = stablehlo.multiply %241, %5 : tensor<32xf32>
    %244 = stablehlo.add %239, %243 : tensor<32xf32>
    %245 = stablehlo.multiply %244, %13 : tensor<32xf32>
    %246 = stablehlo.multiply %244, %arg1 : tensor<32xf32>
    %247 = stablehlo.divide %13, %12 : tensor<32xf32>
    %248 = stablehlo.multiply %246, %217 : tensor<32xf32>
    %249 = stablehlo.multiply %248, %247 : tensor<32xf32>
    %250 = stablehlo.multiply %249, %4 : tensor<32xf32>
    %251 = stablehlo.broadcast_in_dim %250, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %252 = stablehlo.multiply %251, %7 : tensor<8x32x28x28xf32>
    %253 = stablehlo.add %252, %252 : tensor<8x32x28x28xf32>
    %254 = stablehlo.negate %253 : tensor<8x32x28x28xf32>
    %255 = stablehlo.add %237, %253 : tensor<8x32x28x28xf32>
    %256 = stablehlo.reduce(%254 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %257 = stablehlo.add %242, %256 : tensor<32xf32>
    %258 = stablehlo.multiply %257, %4 : tensor<32xf32>
    %259 = stablehlo.broadcast_in_dim %258, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %260 = stablehlo.add %255, %259 : tensor<8x32x28x28xf32>
    %261 = stablehlo.convolution(%arg48, %260) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x1x3x3xf32>
    %262 = stablehlo.convert %arg51 : (tensor<i32>) -> tensor<f32>
    %263 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %264 = stablehlo.power %263, %262 : tensor<f32>
    %265 = stablehlo.subtract %0, %264 : tensor<f32>
    %266 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %267 = stablehlo.power %266, %262 : tensor<f32>
    %268 = stablehlo.subtract %0, %267 : tensor<f32>
    %269 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %270 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %271 = stablehlo.broadcast_in_dim %270, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %272 = stablehlo.multiply %271, %261 : tensor<32x1x3x3xf32>
    %273 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %274 = stablehlo.multiply %273, %arg16 : tensor<32x1x3x3xf32>
    %275 = stablehlo.add %274, %272 : tensor<32x1x3x3xf32>
    %276 = stablehlo.multiply %261, %261 : tensor<32x1x3x3xf32>
    %277 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %278 = stablehlo.broadcast_in_dim %277, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %279 = stablehlo.multiply %278, %276 : tensor<32x1x3x3xf32>
    %280 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %281 = stablehlo.multiply %280, %arg32 : tensor<32x1x3x3xf32>
    %282 = stablehlo.add %281, %279 : tensor<32x1x3x3xf32>
    %283 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %284 = stablehlo.divide %275, %283 : tensor<32x1x3x3xf32>
    %285 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %286 = stablehlo.divide %282, %285 : tensor<32x1x3x3xf32>
    %287 = stablehlo.constant dense<1.000000e-08> : tensor<f32>
    %288 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %289 = stablehlo.sqrt %286 : tensor<32x1x3x3xf32>
    %290 = stablehlo.add %289, %288 : tensor<32x1x3x3xf32>
    %291 = stablehlo.divide %284, %290 : tensor<32x1x3x3xf32>
    %292 = stablehlo.multiply %269, %291 : tensor<32x1x3x3xf32>
    %293 = stablehlo.subtract %arg0, %292 : tensor<32x1x3x3xf32>
    %294 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %295 = stablehlo.constant dense<1.000000e-01> : tensor<32xf32>
    %296 = stablehlo.multiply %295, %245 : tensor<32xf32>
    %297 = stablehlo.constant dense<9.000000e-01> : tensor<32xf32>
    %298 = stablehlo.multiply %297, %arg17 : tensor<32xf32>
    %299 = stablehlo.add %298, %296 : tensor<32xf32>
    %300 = stablehlo.multiply %245, %245 : tensor<32xf32>
    %301 = stablehlo.constant dense<1.000000e-03> : tensor<32xf32>
    %302 = stablehlo.multiply %301, %300 : tensor<32xf32>
    %303 = stablehlo.constant dense<9.990000e-01> : tensor<32xf32>
    %304 = stablehlo.multiply %303, %arg33 : tensor<32xf32>
    %305 = stablehlo.add %304, %302 : tensor<32xf32>
    %306 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %307 = stablehlo.divide %299, %306 : tensor<32xf32>
    %308 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %309 = stablehlo.divide %305, %308 : tensor<32xf32>
    %310 = stablehlo.constant dense<1.000000e-08> : tensor<32xf32>
    %311 = stablehlo.sqrt %309 : tensor<32xf32>
    %312 = stablehlo.add %311, %310 : tensor<32xf32>
    %313 = stablehlo.divide %307, %312 : tensor<32xf32>
    %314 = stablehlo.multiply %294, %313 : tensor<32xf32>
    %315 = stablehlo.subtract %arg1, %314 : tensor<32xf32>
    %316 = stablehlo.multiply %295, %240 : tensor<32xf32>
    %317 = stablehlo.multiply %297, %arg18 : tensor<32xf32>
    %318 = stablehlo.add %317, %316 : tensor<32xf32>
    %319 = stablehlo.multiply %240, %240 : tensor<32xf32>
    %320 = stablehlo.multiply %301, %319 : tensor<32xf32>
    %321 = stablehlo.multiply %303, %arg34 : tensor<32xf32>
    %322 = stablehlo.add %321, %320 : tensor<32xf32>
    %323 = stablehlo.divide %318, %306 : tensor<32xf32>
    %324 = stablehlo.divide %322, %308 : tensor<32xf32>
    %325 = stablehlo.sqrt %324 : tensor<32xf32>
    %326 = stablehlo.add %325, %310 : tensor<32xf32>
    %327 = stablehlo.divide %323, %326 : tensor<32xf32>
    %328 = stablehlo.multiply %294, %327 : tensor<32xf32>
    %329 = stablehlo.subtract %arg2, %328 : tensor<32xf32>
    %330 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %331 = stablehlo.broadcast_in_dim %270, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %332 = stablehlo.multiply %331, %234 : tensor<32x32x3x3xf32>
    %333 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %334 = stablehlo.multiply %333, %arg19 : tensor<32x32x3x3xf32>
    %335 = stablehlo.add %334, %332 : tensor<32x32x3x3xf32>
    %336 = stablehlo.multiply %234, %234 : tensor<32x32x3x3xf32>
    %337 = stablehlo.broadcast_in_dim %277, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %338 = stablehlo.multiply %337, %336 : tensor<32x32x3x3xf32>
    %339 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %340 = stablehlo.multiply %339, %arg35 : tensor<32x32x3x3xf32>
    %341 = stablehlo.add %340, %338 : tensor<32x32x3x3xf32>
    %342 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %343 = stablehlo.divide %335, %342 : tensor<32x32x3x3xf32>
    %344 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %345 = stablehlo.divide %341, %344 : tensor<32x32x3x3xf32>
    %346 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %347 = stablehlo.sqrt %345 : tensor<32x32x3x3xf32>
    %348 = stablehlo.add %347, %346 : tensor<32x32x3x3xf32>
    %349 = stablehlo.divide %343, %348 : tensor<32x32x3x3xf32>
    %350 = stablehlo.multiply %330, %349 : tensor<32x32x3x3xf32>
    %351 = stablehlo.subtract %arg3, %350 : tensor<32x32x3x3xf32>
    %352 = stablehlo.multiply %295, %214 : tensor<32xf32>
    %353 = stablehlo.multiply %297, %arg20 : tensor<32xf32>
    %354 = stablehlo.add %353, %352 : tensor<32xf32>
    %355 = stablehlo.multiply %214, %214 : tensor<32xf32>
    %356 = stablehlo.multiply %301, %355 : tensor<32xf32>
    %357 = stablehlo.multiply %303, %arg36 : tensor<32xf32>
    %358 = stablehlo.add %357, %356 : tensor<32xf32>
    %359 = stablehlo.divide %354, %306 : tensor<32xf32>
    %360 = stablehlo.divide %358, %308 : tensor<32xf32>
    %361 = stablehlo.sqrt %360 : tensor<32xf32>
    %362 = stablehlo.add %361, %310 : tensor<32xf32>
    %363 = stablehlo.divide %359, %362 : tensor<32xf32>
    %364 = stablehlo.multiply %294, %363 : tensor<32xf32>
    %365 = stablehlo.subtract %arg4, %364 : tensor<32xf32>
    %366 = stablehlo.multiply %295, %209 : tensor<32xf32>
    %367 = stablehlo.multiply %297, %arg21 : tensor<32xf32>
    %368 = stablehlo.add %367, %366 : tensor<32xf32>
    %369 = stablehlo.multiply %209, %209 : tensor<32xf32>
    %370 = stablehlo.multiply %301, %369 : tensor<32xf32>
    %371 = stablehlo.multiply %303, %arg37 : tensor<32xf32>
    %372 = stablehlo.add %371, %370 : tensor<32xf32>
    %373 = stablehlo.divide %368, %306 : tensor<32xf32>
    %374 = stablehlo.divide %372, %308 : tensor<32xf32>
    %375 = stablehlo.sqrt %374 : tensor<32xf32>
    %376 = stablehlo.add %375, %310 : tensor<32xf32>
    %377 = stablehlo.divide %373, %376 : tensor<32xf32>
    %378 = stablehlo.multiply %294, %377 : tensor<32xf32>
    %379 = stablehlo.subtract %arg5, %378 : tensor<32xf32>
    %380 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %381 = stablehlo.broadcast_in_dim %270, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %382 = stablehlo.multiply %381, %200 : tensor<64x32x3x3xf32>
    %383 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %384 = stablehlo.multiply %383, %arg22 : tensor<64x32x3x3xf32>
    %385 = stablehlo.add %384, %382 : tensor<64x32x3x3xf32>
    %386 = stablehlo.multiply %200, %200 : tensor<64x32x3x3xf32>
    %387 = stablehlo.broadcast_in_dim %277, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %388 = stablehlo.multiply %387, %386 : tensor<64x32x3x3xf32>
    %389 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %390 = stablehlo.multiply %389, %arg38 : tensor<64x32x3x3xf32>
    %391 = stablehlo.add %390, %388 : tensor<64x32x3x3xf32>
    %392 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %393 = stablehlo.divide %385, %392 : tensor<64x32x3x3xf32>
    %394 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %395 = stablehlo.divide %391, %394 : tensor<64x32x3x3xf32>
    %396 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %397 = stablehlo.sqrt %395 : tensor<64x32x3x3xf32>
    %398 = stablehlo.add %397, %396 : tensor<64x32x3x3xf32>
    %399 = stablehlo.divide %393, %398 : tensor<64x32x3x3xf32>
    %400 = stablehlo.multiply %380, %399 : tensor<64x32x3x3xf32>
    %401 = stablehlo.subtract %arg6, %400 : tensor<64x32x3x3xf32>
    %402 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %403 = stablehlo.constant dense<1.000000e-01> : tensor<64xf32>
    %404 = stablehlo.multiply %403, %181 : tensor<64xf32>
    %405 = stablehlo.constant dense<9.000000e-01> : tensor<64xf32>
    %406 = stablehlo.multiply %405, %arg23 : tensor<64xf32>
    %407 = stablehlo.add %406, %404 : tensor<64xf32>
    %408 = stablehlo.multiply %181, %181 : tensor<64xf32>
    %409 = stablehlo.constant dense<1.000000e-03> : tensor<64xf32>
    %410 = stablehlo.multiply %409, %408 : tensor<64xf32>
    %411 = stablehlo.constant dense<9.990000e-01> : tensor<64xf32>
    %412 = stablehlo.multiply %411, %arg39 : tensor<64xf32>
    %413 = stablehlo.add %412, %410 : tensor<64xf32>
    %414 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %415 = stablehlo.divide %407, %414 : tensor<64xf32>
    %416 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %417 = stablehlo.divide %413, %416 : tensor<64xf32>
    %418 = stablehlo.constant dense<1.000000e-08> : tensor<64xf32>
    %419 = stablehlo.sqrt %417 : tensor<64xf32>
    %420 = stablehlo.add %419, %418 : tensor<64xf32>
    %421 = stablehlo.divide %415, %420 : tensor<64xf32>
    %422 = stablehlo.multiply %402, %421 : tensor<64xf32>
    %423 = stablehlo.subtract %arg7, %422 : tensor<64xf32>
    %424 = stablehlo.multiply %403, %176 : tensor<64xf32>
    %425 = stablehlo.multiply %405, %arg24 : tensor<64xf32>
    %426 = stablehlo.add %425, %424 : tensor<64xf32>
    %427 = stablehlo.multiply %176, %176 : tensor<64xf32>
    %428 = stablehlo.multiply %409, %427 : tensor<64xf32>
    %429 = stablehlo.multiply %411, %arg40 : tensor<64xf32>
    %430 = stablehlo.add %429, %428 : tensor<64xf32>
    %431 = stablehlo.divide %426, %414 : tensor<64xf32>
    %432 = stablehlo.divide %430, %416 : tensor<64xf32>
    %433 = stablehlo.sqrt %432 : tensor<64xf32>
    %434 = stablehlo.add %433, %418 : tensor<64xf32>
    %435 = stablehlo.divide %431, %434 : tensor<64xf32>
    %436 = stablehlo.multiply %402, %435 : tensor<64xf32>
    %437 = stablehlo.subtract %arg8, %436 : tensor<64xf32>
    %438 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %439 = stablehlo.broadcast_in_dim %270, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %440 = stablehlo.multiply %439, %170 : tensor<64x64x3x3xf32>
    %441 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %442 = stablehlo.multiply %441, %arg25 : tensor<64x64x3x3xf32>
    %443 = stablehlo.add %442, %440 : tensor<64x64x3x3xf32>
    %444 = stablehlo.multiply %170, %170 : tensor<64x64x3x3xf32>
    %445 = stablehlo.broadcast_in_dim %277, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %446 = stablehlo.multiply %445, %444 : tensor<64x64x3x3xf32>
    %447 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %448 = stablehlo.multiply %447, %arg41 : tensor<64x64x3x3xf32>
    %449 = stablehlo.add %448, %446 : tensor<64x64x3x3xf32>
    %450 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %451 = stablehlo.divide %443, %450 : tensor<64x64x3x3xf32>
    %452 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %453 = stablehlo.divide %449, %452 : tensor<64x64x3x3xf32>
    %454 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %455 = stablehlo.sqrt %453 : tensor<64x64x3x3xf32>
    %456 = stablehlo.add %455, %454 : tensor<64x64x3x3xf32>
    %457 = stablehlo.divide %451, %456 : tensor<64x64x3x3xf32>
    %458 = stablehlo.multiply %438, %457 : tensor<64x64x3x3xf32>
    %459 = stablehlo.subtract %arg9, %458 : tensor<64x64x3x3xf32>
    %460 = stablehlo.multiply %403, %150 : tensor<64xf32>
    %461 = stablehlo.multiply %405, %arg26 : tensor<64xf32>
    %462 = stablehlo.add %461, %460 : tensor<64xf32>
    %463 = stablehlo.multiply %150, %150 : tensor<64xf32>
    %464 = stablehlo.multiply %409, %463 : tensor<64xf32>
    %465 = stablehlo.multiply %411, %arg42 : tensor<64xf32>
    %466 = stablehlo.add %465, %464 : tensor<64xf32>
    %467 = stablehlo.divide %462, %414 : tensor<64xf32>
    %468 = stablehlo.divide %466, %416 : tensor<64xf32>
    %469 = stablehlo.sqrt %468 : tensor<64xf32>
    %470 = stablehlo.add %469, %418 : tensor<64xf32>
    %471 = stablehlo.divide %467, %470 : tensor<64xf32>
    %472 = stablehlo.multiply %402, %471 : tensor<64xf32>
    %473 = stablehlo.subtract %arg10, %472 : tensor<64xf32>
    %474 = stablehlo.multiply %403, %145 : tensor<64xf32>
    %475 = stablehlo.multiply %405, %arg27 : tensor<64xf32>
    %476 = stablehlo.add %475, %474 : tensor<64xf32>
    %477 = stablehlo.multiply %145, %145 : tensor<64xf32>
    %478 = stablehlo.multiply %409, %477 : tensor<64xf32>
    %479 = stablehlo.multiply %411, %arg43 : tensor<64xf32>
    %480 = stablehlo.add %479, %478 : tensor<64xf32>
    %481 = stablehlo.divide %476, %414 : tensor<64xf32>
    %482 = stablehlo.divide %480, %416 : tensor<64xf32>
    %483 = stablehlo.sqrt %482 : tensor<64xf32>
    %484 = stablehlo.add %483, %418 : tensor<64xf32>
    %485 = stablehlo.divide %481, %484 : tensor<64xf32>
    %486 = stablehlo.multiply %402, %485 : tensor<64xf32>
    %487 = stablehlo.subtract %arg11, %486 : tensor<64xf32>
    %488 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %489 = stablehlo.broadcast_in_dim %270, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %490 = stablehlo.multiply %489, %135 : tensor<512x3136xf32>
    %491 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %492 = stablehlo.multiply %491, %arg28 : tensor<512x3136xf32>
    %493 = stablehlo.add %492, %490 : tensor<512x3136xf32>
    %494 = stablehlo.multiply %135, %135 : tensor<512x3136xf32>
    %495 = stablehlo.broadcast_in_dim %277, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %496 = stablehlo.multiply %495, %494 : tensor<512x3136xf32>
    %497 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %498 = stablehlo.multiply %497, %arg44 : tensor<512x3136xf32>
    %499 = stablehlo.add %498, %496 : tensor<512x3136xf32>
    %500 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %501 = stablehlo.divide %493, %500 : tensor<512x3136xf32>
    %502 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %503 = stablehlo.divide %499, %502 : tensor<512x3136xf32>
    %504 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %505 = stablehlo.sqrt %503 : tensor<512x3136xf32>
    %506 = stablehlo.add %505, %504 : tensor<512x3136xf32>
    %507 = stablehlo.divide %501, %506 : tensor<512x3136xf32>
    %508 = stablehlo.multiply %488, %507 : tensor<512x3136xf32>
    %509 = stablehlo.subtract %arg12, %508 : tensor<512x3136xf32>
    %510 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %511 = stablehlo.broadcast_in_dim %270, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %512 = stablehlo.multiply %511, %133 : tensor<512xf32>
    %513 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %514 = stablehlo.multiply %513, %arg29 : tensor<512xf32>
    %515 = stablehlo.add %514, %512 : tensor<512xf32>
    %516 = stablehlo.multiply %133, %133 : tensor<512xf32>
    %517 = stablehlo.broadcast_in_dim %277, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %518 = stablehlo.multiply %517, %516 : tensor<512xf32>
    %519 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %520 = stablehlo.multiply %519, %arg45 : tensor<512xf32>
    %521 = stablehlo.add %520, %518 : tensor<512xf32>
    %522 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %523 = stablehlo.divide %515, %522 : tensor<512xf32>
    %524 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %525 = stablehlo.divide %521, %524 : tensor<512xf32>
    %526 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %527 = stablehlo.sqrt %525 : tensor<512xf32>
    %528 = stablehlo.add %527, %526 : tensor<512xf32>
    %529 = stablehlo.divide %523, %528 : tensor<512xf32>
    %530 = stablehlo.multiply %510, %529 : tensor<512xf32>
    %531 = stablehlo.subtract %arg13, %530 : tensor<512xf32>
    %532 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %533 = stablehlo.broadcast_in_dim %270, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %534 = stablehlo.multiply %533, %130 : tensor<10x512xf32>
    %535 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %536 = stablehlo.multiply %535, %arg30 : tensor<10x512xf32>
    %537 = stablehlo.add %536, %534 : tensor<10x512xf32>
    %538 = stablehlo.multiply %130, %130 : tensor<10x512xf32>
    %539 = stablehlo.broadcast_in_dim %277, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %540 = stablehlo.multiply %539, %538 : tensor<10x512xf32>
    %541 = stablehlo.broadcast_in_dim %266, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %542 = stablehlo.multiply %541, %arg46 : tensor<10x512xf32>
    %543 = stablehlo.add %542, %540 : tensor<10x512xf32>
    %544 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %545 = stablehlo.divide %537, %544 : tensor<10x512xf32>
    %546 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %547 = stablehlo.divide %543, %546 : tensor<10x512xf32>
    %548 = stablehlo.broadcast_in_dim %287, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %549 = stablehlo.sqrt %547 : tensor<10x512xf32>
    %550 = stablehlo.add %549, %548 : tensor<10x512xf32>
    %551 = stablehlo.divide %545, %550 : tensor<10x512xf32>
    %552 = stablehlo.multiply %532, %551 : tensor<10x512xf32>
    %553 = stablehlo.subtract %arg14, %552 : tensor<10x512xf32>
    %554 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %555 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %556 = stablehlo.multiply %555, %128 : tensor<10xf32>
    %557 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %558 = stablehlo.multiply %557, %arg31 : tensor<10xf32>
    %559 = stablehlo.add %558, %556 : tensor<10xf32>
    %560 = stablehlo.multiply %128, %128 : tensor<10xf32>
    %561 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %562 = stablehlo.multiply %561, %560 : tensor<10xf32>
    %563 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %564 = stablehlo.multiply %563, %arg47 : tensor<10xf32>
    %565 = stablehlo.add %564, %562 : tensor<10xf32>
    %566 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %567 = stablehlo.divide %559, %566 : tensor<10xf32>
    %568 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %569 = stablehlo.divide %565, %568 : tensor<10xf32>
    %570 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %571 = stablehlo.sqrt %569 : tensor<10xf32>
    %572 = stablehlo.add %571, %570 : tensor<10xf32>
    %573 = stablehlo.divide %567, %572 : tensor<10xf32>
    %574 = stablehlo.multiply %554, %573 : tensor<10xf32>
    %575 = stablehlo.subtract %arg15, %574 : tensor<10xf32>
    return %293, %315, %329, %351, %365, %379, %401, %423, %437, %459, %473, %487, %509, %531, %553, %575, %275, %299, %318, %335, %354, %368, %385, %407, %426, %443, %462, %476, %493, %515, %537, %559, %282, %305, %322, %341, %358, %372, %391, %413, %430, %449, %466, %480, %499, %521, %543, %565, %110, %5, %10, %25, %30, %47, %52, %67, %72 : tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  }
}
