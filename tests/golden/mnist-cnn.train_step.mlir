module @mnist_cnn_train_step {
  func.func public @main(%arg0: tensor<32x1x3x3xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x32x3x3xf32>, %arg4: tensor<32xf32>, %arg5: tensor<32xf32>, %arg6: tensor<64x32x3x3xf32>, %arg7: tensor<64xf32>, %arg8: tensor<64xf32>, %arg9: tensor<64x64x3x3xf32>, %arg10: tensor<64xf32>, %arg11: tensor<64xf32>, %arg12: tensor<512x3136xf32>, %arg13: tensor<512xf32>, %arg14: tensor<10x512xf32>, %arg15: tensor<10xf32>, %arg16: tensor<32x1x3x3xf32>, %arg17: tensor<32xf32>, %arg18: tensor<32xf32>, %arg19: tensor<32x32x3x3xf32>, %arg20: tensor<32xf32>, %arg21: tensor<32xf32>, %arg22: tensor<64x32x3x3xf32>, %arg23: tensor<64xf32>, %arg24: tensor<64xf32>, %arg25: tensor<64x64x3x3xf32>, %arg26: tensor<64xf32>, %arg27: tensor<64xf32>, %arg28: tensor<512x3136xf32>, %arg29: tensor<512xf32>, %arg30: tensor<10x512xf32>, %arg31: tensor<10xf32>, %arg32: tensor<32x1x3x3xf32>, %arg33: tensor<32xf32>, %arg34: tensor<32xf32>, %arg35: tensor<32x32x3x3xf32>, %arg36: tensor<32xf32>, %arg37: tensor<32xf32>, %arg38: tensor<64x32x3x3xf32>, %arg39: tensor<64xf32>, %arg40: tensor<64xf32>, %arg41: tensor<64x64x3x3xf32>, %arg42: tensor<64xf32>, %arg43: tensor<64xf32>, %arg44: tensor<512x3136xf32>, %arg45: tensor<512xf32>, %arg46: tensor<10x512xf32>, %arg47: tensor<10xf32>, %arg48: tensor<8x1x28x28xf32>, %arg49: tensor<8xi32>, %arg50: tensor<f32>, %arg51: tensor<i32>) -> (tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i32>) {
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
    %111 = stablehlo.compare  EQ, %93, %100,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %112 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %113 = stablehlo.multiply %112, %97 : tensor<8x10xf32>
    %114 = stablehlo.negate %113 : tensor<8x10xf32>
    %115 = stablehlo.reduce(%114 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %116 = stablehlo.divide %115, %103 : tensor<8xf32>
    %117 = stablehlo.broadcast_in_dim %116, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %118 = stablehlo.multiply %117, %102 : tensor<8x10xf32>
    %119 = stablehlo.add %113, %118 : tensor<8x10xf32>
    %120 = stablehlo.negate %119 : tensor<8x10xf32>
    %121 = stablehlo.reduce(%120 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %122 = stablehlo.convert %111 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %123 = stablehlo.reduce(%122 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %124 = stablehlo.divide %121, %123 : tensor<8xf32>
    %125 = stablehlo.broadcast_in_dim %124, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %126 = stablehlo.select %111, %125, %98 : tensor<8x10xi1>, tensor<8x10xf32>
    %127 = stablehlo.add %119, %126 : tensor<8x10xf32>
    %128 = stablehlo.reduce(%127 init: %1) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %129 = stablehlo.dot_general %127, %arg14, contracting_dims = [1] x [0] : (tensor<8x10xf32>, tensor<10x512xf32>) -> tensor<8x512xf32>
    %130 = stablehlo.dot_general %127, %90, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x512xf32>) -> tensor<10x512xf32>
    %131 = stablehlo.compare  GT, %90, %89,  FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
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
    %140 = stablehlo.compare  GT, %82, %63,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
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
    %167 = stablehlo.reverse %arg9, dims = [2, 3] : tensor<64x64x3x3xf32>
    %168 = stablehlo.convolution(%166, %167) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x14x14xf32>
    %169 = stablehlo.convolution(%64, %166) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x64x3x3xf32>
    %170 = stablehlo.compare  GT, %64, %63,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
    %171 = stablehlo.select %170, %168, %63 : tensor<8x64x14x14xi1>, tensor<8x64x14x14xf32>
    %172 = stablehlo.multiply %171, %60 : tensor<8x64x14x14xf32>
    %173 = stablehlo.multiply %171, %44 : tensor<8x64x14x14xf32>
    %174 = stablehlo.reduce(%173 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %175 = stablehlo.reduce(%171 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %176 = stablehlo.negate %175 : tensor<64xf32>
    %177 = stablehlo.multiply %176, %56 : tensor<64xf32>
    %178 = stablehlo.multiply %176, %47 : tensor<64xf32>
    %179 = stablehlo.add %174, %178 : tensor<64xf32>
    %180 = stablehlo.multiply %179, %55 : tensor<64xf32>
    %181 = stablehlo.multiply %179, %arg7 : tensor<64xf32>
    %182 = stablehlo.divide %55, %54 : tensor<64xf32>
    %183 = stablehlo.multiply %181, %153 : tensor<64xf32>
    %184 = stablehlo.multiply %183, %182 : tensor<64xf32>
    %185 = stablehlo.multiply %184, %46 : tensor<64xf32>
    %186 = stablehlo.broadcast_in_dim %185, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %187 = stablehlo.multiply %186, %49 : tensor<8x64x14x14xf32>
    %188 = stablehlo.add %187, %187 : tensor<8x64x14x14xf32>
    %189 = stablehlo.negate %188 : tensor<8x64x14x14xf32>
    %190 = stablehlo.add %172, %188 : tensor<8x64x14x14xf32>
    %191 = stablehlo.reduce(%189 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %192 = stablehlo.add %177, %191 : tensor<64xf32>
    %193 = stablehlo.multiply %192, %46 : tensor<64xf32>
    %194 = stablehlo.broadcast_in_dim %193, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %195 = stablehlo.add %190, %194 : tensor<8x64x14x14xf32>
    %196 = stablehlo.reverse %arg6, dims = [2, 3] : tensor<64x32x3x3xf32>
    %197 = stablehlo.convolution(%195, %196) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<64x32x3x3xf32>) -> tensor<8x32x14x14xf32>
    %198 = stablehlo.convolution(%42, %195) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x32x3x3xf32>
    %199 = "stablehlo.select_and_scatter"(%40, %197, %1) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg60: tensor<f32>, %arg61: tensor<f32>):
      %200 = stablehlo.compare  GE, %arg60, %arg61,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %200 : tensor<i1>
    }, {
    ^bb0(%arg62: tensor<f32>, %arg63: tensor<f32>):
      %201 = stablehlo.add %arg62, %arg63 : tensor<f32>
      stablehlo.return %201 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<8x32x14x14xf32>, tensor<f32>) -> tensor<8x32x28x28xf32>
    %202 = stablehlo.compare  GT, %40, %21,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %203 = stablehlo.select %202, %199, %21 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %204 = stablehlo.multiply %203, %37 : tensor<8x32x28x28xf32>
    %205 = stablehlo.multiply %203, %23 : tensor<8x32x28x28xf32>
    %206 = stablehlo.reduce(%205 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %207 = stablehlo.reduce(%203 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %208 = stablehlo.negate %207 : tensor<32xf32>
    %209 = stablehlo.multiply %208, %33 : tensor<32xf32>
    %210 = stablehlo.multiply %208, %25 : tensor<32xf32>
    %211 = stablehlo.add %206, %210 : tensor<32xf32>
    %212 = stablehlo.multiply %211, %32 : tensor<32xf32>
    %213 = stablehlo.multiply %211, %arg4 : tensor<32xf32>
    %214 = stablehlo.divide %32, %31 : tensor<32xf32>
    %215 = stablehlo.constant dense<-5.000000e-01> : tensor<32xf32>
    %216 = stablehlo.multiply %213, %215 : tensor<32xf32>
    %217 = stablehlo.multiply %216, %214 : tensor<32xf32>
    %218 = stablehlo.multiply %217, %4 : tensor<32xf32>
    %219 = stablehlo.broadcast_in_dim %218, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %220 = stablehlo.multiply %219, %27 : tensor<8x32x28x28xf32>
    %221 = stablehlo.add %220, %220 : tensor<8x32x28x28xf32>
    %222 = stablehlo.negate %221 : tensor<8x32x28x28xf32>
    %223 = stablehlo.add %204, %221 : tensor<8x32x28x28xf32>
    %224 = stablehlo.reduce(%222 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %225 = stablehlo.add %209, %224 : tensor<32xf32>
    %226 = stablehlo.multiply %225, %4 : tensor<32xf32>
    %227 = stablehlo.broadcast_in_dim %226, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %228 = stablehlo.add %223, %227 : tensor<8x32x28x28xf32>
    %229 = stablehlo.reverse %arg3, dims = [2, 3] : tensor<32x32x3x3xf32>
    %230 = stablehlo.convolution(%228, %229) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x28x28xf32>
    %231 = stablehlo.convolution(%22, %228) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x32x3x3xf32>
    %232 = stablehlo.compare  GT, %22, %21,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %233 = stablehlo.select %232, %230, %21 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %234 = stablehlo.multiply %233, %18 : tensor<8x32x28x28xf32>
    %235 = stablehlo.multiply %233, %2 : tensor<8x32x28x28xf32>
    %236 = stablehlo.reduce(%235 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %237 = stablehlo.reduce(%233 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %238 = stablehlo.negate %237 : tensor<32xf32>
    %239 = stablehlo.multiply %238, %14 : tensor<32xf32>
    %240 = stablehlo.multiply %238, %5 : tensor<32xf32>
    %241 = stablehlo.add %236, %240 : tensor<32xf32>
    %242 = stablehlo.multiply %241, %13 : tensor<32xf32>
    %243 = stablehlo.multiply %241, %arg1 : tensor<32xf32>
    %244 = stablehlo.divide %13, %12 : tensor<32xf32>
    %245 = stablehlo.multiply %243, %215 : tensor<32xf32>
    %246 = stablehlo.multiply %245, %244 : tensor<32xf32>
    %247 = stablehlo.multiply %246, %4 : tensor<32xf32>
    %248 = stablehlo.broadcast_in_dim %247, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %249 = stablehlo.multiply %248, %7 : tensor<8x32x28x28xf32>
    %250 = stablehlo.add %249, %249 : tensor<8x32x28x28xf32>
    %251 = stablehlo.negate %250 : tensor<8x32x28x28xf32>
    %252 = stablehlo.add %234, %250 : tensor<8x32x28x28xf32>
    %253 = stablehlo.reduce(%251 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %254 = stablehlo.add %239, %253 : tensor<32xf32>
    %255 = stablehlo.multiply %254, %4 : tensor<32xf32>
    %256 = stablehlo.broadcast_in_dim %255, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %257 = stablehlo.add %252, %256 : tensor<8x32x28x28xf32>
    %258 = stablehlo.convolution(%arg48, %257) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x1x3x3xf32>
    %259 = stablehlo.convert %arg51 : (tensor<i32>) -> tensor<f32>
    %260 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %261 = stablehlo.power %260, %259 : tensor<f32>
    %262 = stablehlo.subtract %0, %261 : tensor<f32>
    %263 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %264 = stablehlo.power %263, %259 : tensor<f32>
    %265 = stablehlo.subtract %0, %264 : tensor<f32>
    %266 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %267 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %268 = stablehlo.broadcast_in_dim %267, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %269 = stablehlo.multiply %268, %258 : tensor<32x1x3x3xf32>
    %270 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %271 = stablehlo.multiply %270, %arg16 : tensor<32x1x3x3xf32>
    %272 = stablehlo.add %271, %269 : tensor<32x1x3x3xf32>
    %273 = stablehlo.multiply %258, %258 : tensor<32x1x3x3xf32>
    %274 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %275 = stablehlo.broadcast_in_dim %274, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %276 = stablehlo.multiply %275, %273 : tensor<32x1x3x3xf32>
    %277 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %278 = stablehlo.multiply %277, %arg32 : tensor<32x1x3x3xf32>
    %279 = stablehlo.add %278, %276 : tensor<32x1x3x3xf32>
    %280 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %281 = stablehlo.divide %272, %280 : tensor<32x1x3x3xf32>
    %282 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %283 = stablehlo.divide %279, %282 : tensor<32x1x3x3xf32>
    %284 = stablehlo.constant dense<1.000000e-08> : tensor<f32>
    %285 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %286 = stablehlo.sqrt %283 : tensor<32x1x3x3xf32>
    %287 = stablehlo.add %286, %285 : tensor<32x1x3x3xf32>
    %288 = stablehlo.divide %281, %287 : tensor<32x1x3x3xf32>
    %289 = stablehlo.multiply %266, %288 : tensor<32x1x3x3xf32>
    %290 = stablehlo.subtract %arg0, %289 : tensor<32x1x3x3xf32>
    %291 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %292 = stablehlo.constant dense<1.000000e-01> : tensor<32xf32>
    %293 = stablehlo.multiply %292, %242 : tensor<32xf32>
    %294 = stablehlo.constant dense<9.000000e-01> : tensor<32xf32>
    %295 = stablehlo.multiply %294, %arg17 : tensor<32xf32>
    %296 = stablehlo.add %295, %293 : tensor<32xf32>
    %297 = stablehlo.multiply %242, %242 : tensor<32xf32>
    %298 = stablehlo.constant dense<1.000000e-03> : tensor<32xf32>
    %299 = stablehlo.multiply %298, %297 : tensor<32xf32>
    %300 = stablehlo.constant dense<9.990000e-01> : tensor<32xf32>
    %301 = stablehlo.multiply %300, %arg33 : tensor<32xf32>
    %302 = stablehlo.add %301, %299 : tensor<32xf32>
    %303 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %304 = stablehlo.divide %296, %303 : tensor<32xf32>
    %305 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %306 = stablehlo.divide %302, %305 : tensor<32xf32>
    %307 = stablehlo.constant dense<1.000000e-08> : tensor<32xf32>
    %308 = stablehlo.sqrt %306 : tensor<32xf32>
    %309 = stablehlo.add %308, %307 : tensor<32xf32>
    %310 = stablehlo.divide %304, %309 : tensor<32xf32>
    %311 = stablehlo.multiply %291, %310 : tensor<32xf32>
    %312 = stablehlo.subtract %arg1, %311 : tensor<32xf32>
    %313 = stablehlo.multiply %292, %237 : tensor<32xf32>
    %314 = stablehlo.multiply %294, %arg18 : tensor<32xf32>
    %315 = stablehlo.add %314, %313 : tensor<32xf32>
    %316 = stablehlo.multiply %237, %237 : tensor<32xf32>
    %317 = stablehlo.multiply %298, %316 : tensor<32xf32>
    %318 = stablehlo.multiply %300, %arg34 : tensor<32xf32>
    %319 = stablehlo.add %318, %317 : tensor<32xf32>
    %320 = stablehlo.divide %315, %303 : tensor<32xf32>
    %321 = stablehlo.divide %319, %305 : tensor<32xf32>
    %322 = stablehlo.sqrt %321 : tensor<32xf32>
    %323 = stablehlo.add %322, %307 : tensor<32xf32>
    %324 = stablehlo.divide %320, %323 : tensor<32xf32>
    %325 = stablehlo.multiply %291, %324 : tensor<32xf32>
    %326 = stablehlo.subtract %arg2, %325 : tensor<32xf32>
    %327 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %328 = stablehlo.broadcast_in_dim %267, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %329 = stablehlo.multiply %328, %231 : tensor<32x32x3x3xf32>
    %330 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %331 = stablehlo.multiply %330, %arg19 : tensor<32x32x3x3xf32>
    %332 = stablehlo.add %331, %329 : tensor<32x32x3x3xf32>
    %333 = stablehlo.multiply %231, %231 : tensor<32x32x3x3xf32>
    %334 = stablehlo.broadcast_in_dim %274, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %335 = stablehlo.multiply %334, %333 : tensor<32x32x3x3xf32>
    %336 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %337 = stablehlo.multiply %336, %arg35 : tensor<32x32x3x3xf32>
    %338 = stablehlo.add %337, %335 : tensor<32x32x3x3xf32>
    %339 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %340 = stablehlo.divide %332, %339 : tensor<32x32x3x3xf32>
    %341 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %342 = stablehlo.divide %338, %341 : tensor<32x32x3x3xf32>
    %343 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %344 = stablehlo.sqrt %342 : tensor<32x32x3x3xf32>
    %345 = stablehlo.add %344, %343 : tensor<32x32x3x3xf32>
    %346 = stablehlo.divide %340, %345 : tensor<32x32x3x3xf32>
    %347 = stablehlo.multiply %327, %346 : tensor<32x32x3x3xf32>
    %348 = stablehlo.subtract %arg3, %347 : tensor<32x32x3x3xf32>
    %349 = stablehlo.multiply %292, %212 : tensor<32xf32>
    %350 = stablehlo.multiply %294, %arg20 : tensor<32xf32>
    %351 = stablehlo.add %350, %349 : tensor<32xf32>
    %352 = stablehlo.multiply %212, %212 : tensor<32xf32>
    %353 = stablehlo.multiply %298, %352 : tensor<32xf32>
    %354 = stablehlo.multiply %300, %arg36 : tensor<32xf32>
    %355 = stablehlo.add %354, %353 : tensor<32xf32>
    %356 = stablehlo.divide %351, %303 : tensor<32xf32>
    %357 = stablehlo.divide %355, %305 : tensor<32xf32>
    %358 = stablehlo.sqrt %357 : tensor<32xf32>
    %359 = stablehlo.add %358, %307 : tensor<32xf32>
    %360 = stablehlo.divide %356, %359 : tensor<32xf32>
    %361 = stablehlo.multiply %291, %360 : tensor<32xf32>
    %362 = stablehlo.subtract %arg4, %361 : tensor<32xf32>
    %363 = stablehlo.multiply %292, %207 : tensor<32xf32>
    %364 = stablehlo.multiply %294, %arg21 : tensor<32xf32>
    %365 = stablehlo.add %364, %363 : tensor<32xf32>
    %366 = stablehlo.multiply %207, %207 : tensor<32xf32>
    %367 = stablehlo.multiply %298, %366 : tensor<32xf32>
    %368 = stablehlo.multiply %300, %arg37 : tensor<32xf32>
    %369 = stablehlo.add %368, %367 : tensor<32xf32>
    %370 = stablehlo.divide %365, %303 : tensor<32xf32>
    %371 = stablehlo.divide %369, %305 : tensor<32xf32>
    %372 = stablehlo.sqrt %371 : tensor<32xf32>
    %373 = stablehlo.add %372, %307 : tensor<32xf32>
    %374 = stablehlo.divide %370, %373 : tensor<32xf32>
    %375 = stablehlo.multiply %291, %374 : tensor<32xf32>
    %376 = stablehlo.subtract %arg5, %375 : tensor<32xf32>
    %377 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %378 = stablehlo.broadcast_in_dim %267, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %379 = stablehlo.multiply %378, %198 : tensor<64x32x3x3xf32>
    %380 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %381 = stablehlo.multiply %380, %arg22 : tensor<64x32x3x3xf32>
    %382 = stablehlo.add %381, %379 : tensor<64x32x3x3xf32>
    %383 = stablehlo.multiply %198, %198 : tensor<64x32x3x3xf32>
    %384 = stablehlo.broadcast_in_dim %274, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %385 = stablehlo.multiply %384, %383 : tensor<64x32x3x3xf32>
    %386 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %387 = stablehlo.multiply %386, %arg38 : tensor<64x32x3x3xf32>
    %388 = stablehlo.add %387, %385 : tensor<64x32x3x3xf32>
    %389 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %390 = stablehlo.divide %382, %389 : tensor<64x32x3x3xf32>
    %391 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %392 = stablehlo.divide %388, %391 : tensor<64x32x3x3xf32>
    %393 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %394 = stablehlo.sqrt %392 : tensor<64x32x3x3xf32>
    %395 = stablehlo.add %394, %393 : tensor<64x32x3x3xf32>
    %396 = stablehlo.divide %390, %395 : tensor<64x32x3x3xf32>
    %397 = stablehlo.multiply %377, %396 : tensor<64x32x3x3xf32>
    %398 = stablehlo.subtract %arg6, %397 : tensor<64x32x3x3xf32>
    %399 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %400 = stablehlo.constant dense<1.000000e-01> : tensor<64xf32>
    %401 = stablehlo.multiply %400, %180 : tensor<64xf32>
    %402 = stablehlo.constant dense<9.000000e-01> : tensor<64xf32>
    %403 = stablehlo.multiply %402, %arg23 : tensor<64xf32>
    %404 = stablehlo.add %403, %401 : tensor<64xf32>
    %405 = stablehlo.multiply %180, %180 : tensor<64xf32>
    %406 = stablehlo.constant dense<1.000000e-03> : tensor<64xf32>
    %407 = stablehlo.multiply %406, %405 : tensor<64xf32>
    %408 = stablehlo.constant dense<9.990000e-01> : tensor<64xf32>
    %409 = stablehlo.multiply %408, %arg39 : tensor<64xf32>
    %410 = stablehlo.add %409, %407 : tensor<64xf32>
    %411 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %412 = stablehlo.divide %404, %411 : tensor<64xf32>
    %413 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %414 = stablehlo.divide %410, %413 : tensor<64xf32>
    %415 = stablehlo.constant dense<1.000000e-08> : tensor<64xf32>
    %416 = stablehlo.sqrt %414 : tensor<64xf32>
    %417 = stablehlo.add %416, %415 : tensor<64xf32>
    %418 = stablehlo.divide %412, %417 : tensor<64xf32>
    %419 = stablehlo.multiply %399, %418 : tensor<64xf32>
    %420 = stablehlo.subtract %arg7, %419 : tensor<64xf32>
    %421 = stablehlo.multiply %400, %175 : tensor<64xf32>
    %422 = stablehlo.multiply %402, %arg24 : tensor<64xf32>
    %423 = stablehlo.add %422, %421 : tensor<64xf32>
    %424 = stablehlo.multiply %175, %175 : tensor<64xf32>
    %425 = stablehlo.multiply %406, %424 : tensor<64xf32>
    %426 = stablehlo.multiply %408, %arg40 : tensor<64xf32>
    %427 = stablehlo.add %426, %425 : tensor<64xf32>
    %428 = stablehlo.divide %423, %411 : tensor<64xf32>
    %429 = stablehlo.divide %427, %413 : tensor<64xf32>
    %430 = stablehlo.sqrt %429 : tensor<64xf32>
    %431 = stablehlo.add %430, %415 : tensor<64xf32>
    %432 = stablehlo.divide %428, %431 : tensor<64xf32>
    %433 = stablehlo.multiply %399, %432 : tensor<64xf32>
    %434 = stablehlo.subtract %arg8, %433 : tensor<64xf32>
    %435 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %436 = stablehlo.broadcast_in_dim %267, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %437 = stablehlo.multiply %436, %169 : tensor<64x64x3x3xf32>
    %438 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %439 = stablehlo.multiply %438, %arg25 : tensor<64x64x3x3xf32>
    %440 = stablehlo.add %439, %437 : tensor<64x64x3x3xf32>
    %441 = stablehlo.multiply %169, %169 : tensor<64x64x3x3xf32>
    %442 = stablehlo.broadcast_in_dim %274, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %443 = stablehlo.multiply %442, %441 : tensor<64x64x3x3xf32>
    %444 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %445 = stablehlo.multiply %444, %arg41 : tensor<64x64x3x3xf32>
    %446 = stablehlo.add %445, %443 : tensor<64x64x3x3xf32>
    %447 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %448 = stablehlo.divide %440, %447 : tensor<64x64x3x3xf32>
    %449 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %450 = stablehlo.divide %446, %449 : tensor<64x64x3x3xf32>
    %451 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %452 = stablehlo.sqrt %450 : tensor<64x64x3x3xf32>
    %453 = stablehlo.add %452, %451 : tensor<64x64x3x3xf32>
    %454 = stablehlo.divide %448, %453 : tensor<64x64x3x3xf32>
    %455 = stablehlo.multiply %435, %454 : tensor<64x64x3x3xf32>
    %456 = stablehlo.subtract %arg9, %455 : tensor<64x64x3x3xf32>
    %457 = stablehlo.multiply %400, %150 : tensor<64xf32>
    %458 = stablehlo.multiply %402, %arg26 : tensor<64xf32>
    %459 = stablehlo.add %458, %457 : tensor<64xf32>
    %460 = stablehlo.multiply %150, %150 : tensor<64xf32>
    %461 = stablehlo.multiply %406, %460 : tensor<64xf32>
    %462 = stablehlo.multiply %408, %arg42 : tensor<64xf32>
    %463 = stablehlo.add %462, %461 : tensor<64xf32>
    %464 = stablehlo.divide %459, %411 : tensor<64xf32>
    %465 = stablehlo.divide %463, %413 : tensor<64xf32>
    %466 = stablehlo.sqrt %465 : tensor<64xf32>
    %467 = stablehlo.add %466, %415 : tensor<64xf32>
    %468 = stablehlo.divide %464, %467 : tensor<64xf32>
    %469 = stablehlo.multiply %399, %468 : tensor<64xf32>
    %470 = stablehlo.subtract %arg10, %469 : tensor<64xf32>
    %471 = stablehlo.multiply %400, %145 : tensor<64xf32>
    %472 = stablehlo.multiply %402, %arg27 : tensor<64xf32>
    %473 = stablehlo.add %472, %471 : tensor<64xf32>
    %474 = stablehlo.multiply %145, %145 : tensor<64xf32>
    %475 = stablehlo.multiply %406, %474 : tensor<64xf32>
    %476 = stablehlo.multiply %408, %arg43 : tensor<64xf32>
    %477 = stablehlo.add %476, %475 : tensor<64xf32>
    %478 = stablehlo.divide %473, %411 : tensor<64xf32>
    %479 = stablehlo.divide %477, %413 : tensor<64xf32>
    %480 = stablehlo.sqrt %479 : tensor<64xf32>
    %481 = stablehlo.add %480, %415 : tensor<64xf32>
    %482 = stablehlo.divide %478, %481 : tensor<64xf32>
    %483 = stablehlo.multiply %399, %482 : tensor<64xf32>
    %484 = stablehlo.subtract %arg11, %483 : tensor<64xf32>
    %485 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %486 = stablehlo.broadcast_in_dim %267, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %487 = stablehlo.multiply %486, %135 : tensor<512x3136xf32>
    %488 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %489 = stablehlo.multiply %488, %arg28 : tensor<512x3136xf32>
    %490 = stablehlo.add %489, %487 : tensor<512x3136xf32>
    %491 = stablehlo.multiply %135, %135 : tensor<512x3136xf32>
    %492 = stablehlo.broadcast_in_dim %274, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %493 = stablehlo.multiply %492, %491 : tensor<512x3136xf32>
    %494 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %495 = stablehlo.multiply %494, %arg44 : tensor<512x3136xf32>
    %496 = stablehlo.add %495, %493 : tensor<512x3136xf32>
    %497 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %498 = stablehlo.divide %490, %497 : tensor<512x3136xf32>
    %499 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %500 = stablehlo.divide %496, %499 : tensor<512x3136xf32>
    %501 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %502 = stablehlo.sqrt %500 : tensor<512x3136xf32>
    %503 = stablehlo.add %502, %501 : tensor<512x3136xf32>
    %504 = stablehlo.divide %498, %503 : tensor<512x3136xf32>
    %505 = stablehlo.multiply %485, %504 : tensor<512x3136xf32>
    %506 = stablehlo.subtract %arg12, %505 : tensor<512x3136xf32>
    %507 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %508 = stablehlo.broadcast_in_dim %267, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %509 = stablehlo.multiply %508, %133 : tensor<512xf32>
    %510 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %511 = stablehlo.multiply %510, %arg29 : tensor<512xf32>
    %512 = stablehlo.add %511, %509 : tensor<512xf32>
    %513 = stablehlo.multiply %133, %133 : tensor<512xf32>
    %514 = stablehlo.broadcast_in_dim %274, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %515 = stablehlo.multiply %514, %513 : tensor<512xf32>
    %516 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %517 = stablehlo.multiply %516, %arg45 : tensor<512xf32>
    %518 = stablehlo.add %517, %515 : tensor<512xf32>
    %519 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %520 = stablehlo.divide %512, %519 : tensor<512xf32>
    %521 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %522 = stablehlo.divide %518, %521 : tensor<512xf32>
    %523 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %524 = stablehlo.sqrt %522 : tensor<512xf32>
    %525 = stablehlo.add %524, %523 : tensor<512xf32>
    %526 = stablehlo.divide %520, %525 : tensor<512xf32>
    %527 = stablehlo.multiply %507, %526 : tensor<512xf32>
    %528 = stablehlo.subtract %arg13, %527 : tensor<512xf32>
    %529 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %530 = stablehlo.broadcast_in_dim %267, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %531 = stablehlo.multiply %530, %130 : tensor<10x512xf32>
    %532 = stablehlo.broadcast_in_dim %260, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %533 = stablehlo.multiply %532, %arg30 : tensor<10x512xf32>
    %534 = stablehlo.add %533, %531 : tensor<10x512xf32>
    %535 = stablehlo.multiply %130, %130 : tensor<10x512xf32>
    %536 = stablehlo.broadcast_in_dim %274, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %537 = stablehlo.multiply %536, %535 : tensor<10x512xf32>
    %538 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %539 = stablehlo.multiply %538, %arg46 : tensor<10x512xf32>
    %540 = stablehlo.add %539, %537 : tensor<10x512xf32>
    %541 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %542 = stablehlo.divide %534, %541 : tensor<10x512xf32>
    %543 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %544 = stablehlo.divide %540, %543 : tensor<10x512xf32>
    %545 = stablehlo.broadcast_in_dim %284, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %546 = stablehlo.sqrt %544 : tensor<10x512xf32>
    %547 = stablehlo.add %546, %545 : tensor<10x512xf32>
    %548 = stablehlo.divide %542, %547 : tensor<10x512xf32>
    %549 = stablehlo.multiply %529, %548 : tensor<10x512xf32>
    %550 = stablehlo.subtract %arg14, %549 : tensor<10x512xf32>
    %551 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %552 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %553 = stablehlo.multiply %552, %128 : tensor<10xf32>
    %554 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %555 = stablehlo.multiply %554, %arg31 : tensor<10xf32>
    %556 = stablehlo.add %555, %553 : tensor<10xf32>
    %557 = stablehlo.multiply %128, %128 : tensor<10xf32>
    %558 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %559 = stablehlo.multiply %558, %557 : tensor<10xf32>
    %560 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %561 = stablehlo.multiply %560, %arg47 : tensor<10xf32>
    %562 = stablehlo.add %561, %559 : tensor<10xf32>
    %563 = stablehlo.broadcast_in_dim %262, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %564 = stablehlo.divide %556, %563 : tensor<10xf32>
    %565 = stablehlo.broadcast_in_dim %265, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %566 = stablehlo.divide %562, %565 : tensor<10xf32>
    %567 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %568 = stablehlo.sqrt %566 : tensor<10xf32>
    %569 = stablehlo.add %568, %567 : tensor<10xf32>
    %570 = stablehlo.divide %564, %569 : tensor<10xf32>
    %571 = stablehlo.multiply %551, %570 : tensor<10xf32>
    %572 = stablehlo.subtract %arg15, %571 : tensor<10xf32>
    %573 = stablehlo.constant dense<0> : tensor<i32>
    %574 = stablehlo.constant dense<10> : tensor<i32>
    %575 = stablehlo.constant dense<10> : tensor<8x10xi32>
    %576 = stablehlo.select %111, %94, %575 : tensor<8x10xi1>, tensor<8x10xi32>
    %577 = stablehlo.reduce(%576 init: %574) applies stablehlo.minimum across dimensions = [1] : (tensor<8x10xi32>, tensor<i32>) -> tensor<8xi32>
    %578 = stablehlo.compare  EQ, %577, %arg49,  SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %579 = stablehlo.convert %578 : (tensor<8xi1>) -> tensor<8xi32>
    %580 = stablehlo.reduce(%579 init: %573) applies stablehlo.add across dimensions = [0] : (tensor<8xi32>, tensor<i32>) -> tensor<i32>
    return %290, %312, %326, %348, %362, %376, %398, %420, %434, %456, %470, %484, %506, %528, %550, %572, %272, %296, %315, %332, %351, %365, %382, %404, %423, %440, %459, %473, %490, %512, %534, %556, %279, %302, %319, %338, %355, %369, %388, %410, %427, %446, %463, %477, %496, %518, %540, %562, %110, %5, %10, %25, %30, %47, %52, %67, %72, %580 : tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i32>
  }
}
