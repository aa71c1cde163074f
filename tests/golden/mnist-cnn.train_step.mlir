module @mnist_cnn_train_step {
  func.func private @stop_gradient__32f32(%arg0: tensor<32xf32>) -> tensor<32xf32> {
    return %arg0 : tensor<32xf32>
  }
  func.func private @stop_gradient__64f32(%arg0: tensor<64xf32>) -> tensor<64xf32> {
    return %arg0 : tensor<64xf32>
  }
  func.func public @main(%arg0: tensor<32x1x3x3xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x32x3x3xf32>, %arg4: tensor<32xf32>, %arg5: tensor<32xf32>, %arg6: tensor<64x32x3x3xf32>, %arg7: tensor<64xf32>, %arg8: tensor<64xf32>, %arg9: tensor<64x64x3x3xf32>, %arg10: tensor<64xf32>, %arg11: tensor<64xf32>, %arg12: tensor<512x3136xf32>, %arg13: tensor<512xf32>, %arg14: tensor<10x512xf32>, %arg15: tensor<10xf32>, %arg16: tensor<32x1x3x3xf32>, %arg17: tensor<32xf32>, %arg18: tensor<32xf32>, %arg19: tensor<32x32x3x3xf32>, %arg20: tensor<32xf32>, %arg21: tensor<32xf32>, %arg22: tensor<64x32x3x3xf32>, %arg23: tensor<64xf32>, %arg24: tensor<64xf32>, %arg25: tensor<64x64x3x3xf32>, %arg26: tensor<64xf32>, %arg27: tensor<64xf32>, %arg28: tensor<512x3136xf32>, %arg29: tensor<512xf32>, %arg30: tensor<10x512xf32>, %arg31: tensor<10xf32>, %arg32: tensor<32x1x3x3xf32>, %arg33: tensor<32xf32>, %arg34: tensor<32xf32>, %arg35: tensor<32x32x3x3xf32>, %arg36: tensor<32xf32>, %arg37: tensor<32xf32>, %arg38: tensor<64x32x3x3xf32>, %arg39: tensor<64xf32>, %arg40: tensor<64xf32>, %arg41: tensor<64x64x3x3xf32>, %arg42: tensor<64xf32>, %arg43: tensor<64xf32>, %arg44: tensor<512x3136xf32>, %arg45: tensor<512xf32>, %arg46: tensor<10x512xf32>, %arg47: tensor<10xf32>, %arg48: tensor<8x1x28x28xf32>, %arg49: tensor<8xi32>, %arg50: tensor<f32>, %arg51: tensor<i32>) -> (tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i32>) {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.convolution(%arg48, %arg0) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<32x1x3x3xf32>) -> tensor<8x32x28x28xf32>
    %3 = stablehlo.reduce(%2 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %4 = stablehlo.constant dense<1.5943877e-04> : tensor<32xf32>
    %5 = stablehlo.constant dense<6.272000e+03> : tensor<32xf32>
    %6 = stablehlo.divide %3, %5 : tensor<32xf32>
    %7 = call @stop_gradient__32f32(%6) : (tensor<32xf32>) -> tensor<32xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %9 = stablehlo.subtract %2, %8 : tensor<8x32x28x28xf32>
    %10 = stablehlo.multiply %9, %9 : tensor<8x32x28x28xf32>
    %11 = stablehlo.reduce(%10 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %12 = stablehlo.multiply %11, %4 : tensor<32xf32>
    %13 = stablehlo.constant dense<1.000000e-05> : tensor<32xf32>
    %14 = stablehlo.add %12, %13 : tensor<32xf32>
    %15 = stablehlo.rsqrt %14 : tensor<32xf32>
    %16 = stablehlo.multiply %arg1, %15 : tensor<32xf32>
    %17 = stablehlo.multiply %6, %16 : tensor<32xf32>
    %18 = stablehlo.subtract %arg2, %17 : tensor<32xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %20 = stablehlo.broadcast_in_dim %16, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %21 = stablehlo.multiply %2, %20 : tensor<8x32x28x28xf32>
    %22 = stablehlo.add %21, %19 : tensor<8x32x28x28xf32>
    %23 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x32x28x28xf32>
    %24 = stablehlo.maximum %22, %23 : tensor<8x32x28x28xf32>
    %25 = stablehlo.convolution(%24, %arg3) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x28x28xf32>
    %26 = stablehlo.reduce(%25 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %27 = stablehlo.divide %26, %5 : tensor<32xf32>
    %28 = call @stop_gradient__32f32(%27) : (tensor<32xf32>) -> tensor<32xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %30 = stablehlo.subtract %25, %29 : tensor<8x32x28x28xf32>
    %31 = stablehlo.multiply %30, %30 : tensor<8x32x28x28xf32>
    %32 = stablehlo.reduce(%31 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %33 = stablehlo.multiply %32, %4 : tensor<32xf32>
    %34 = stablehlo.add %33, %13 : tensor<32xf32>
    %35 = stablehlo.rsqrt %34 : tensor<32xf32>
    %36 = stablehlo.multiply %arg4, %35 : tensor<32xf32>
    %37 = stablehlo.multiply %27, %36 : tensor<32xf32>
    %38 = stablehlo.subtract %arg5, %37 : tensor<32xf32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %40 = stablehlo.broadcast_in_dim %36, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %41 = stablehlo.multiply %25, %40 : tensor<8x32x28x28xf32>
    %42 = stablehlo.add %41, %39 : tensor<8x32x28x28xf32>
    %43 = stablehlo.maximum %42, %23 : tensor<8x32x28x28xf32>
    %44 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %45 = "stablehlo.reduce_window"(%43, %44) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg52: tensor<f32>, %arg53: tensor<f32>):
      %46 = stablehlo.maximum %arg52, %arg53 : tensor<f32>
      stablehlo.return %46 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<8x32x14x14xf32>
    %47 = stablehlo.convolution(%45, %arg6) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<64x32x3x3xf32>) -> tensor<8x64x14x14xf32>
    %48 = stablehlo.reduce(%47 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %49 = stablehlo.constant dense<6.377551e-04> : tensor<64xf32>
    %50 = stablehlo.constant dense<1.568000e+03> : tensor<64xf32>
    %51 = stablehlo.divide %48, %50 : tensor<64xf32>
    %52 = call @stop_gradient__64f32(%51) : (tensor<64xf32>) -> tensor<64xf32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %54 = stablehlo.subtract %47, %53 : tensor<8x64x14x14xf32>
    %55 = stablehlo.multiply %54, %54 : tensor<8x64x14x14xf32>
    %56 = stablehlo.reduce(%55 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %57 = stablehlo.multiply %56, %49 : tensor<64xf32>
    %58 = stablehlo.constant dense<1.000000e-05> : tensor<64xf32>
    %59 = stablehlo.add %57, %58 : tensor<64xf32>
    %60 = stablehlo.rsqrt %59 : tensor<64xf32>
    %61 = stablehlo.multiply %arg7, %60 : tensor<64xf32>
    %62 = stablehlo.multiply %51, %61 : tensor<64xf32>
    %63 = stablehlo.subtract %arg8, %62 : tensor<64xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %65 = stablehlo.broadcast_in_dim %61, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %66 = stablehlo.multiply %47, %65 : tensor<8x64x14x14xf32>
    %67 = stablehlo.add %66, %64 : tensor<8x64x14x14xf32>
    %68 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x64x14x14xf32>
    %69 = stablehlo.maximum %67, %68 : tensor<8x64x14x14xf32>
    %70 = stablehlo.convolution(%69, %arg9) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x14x14xf32>
    %71 = stablehlo.reduce(%70 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %72 = stablehlo.divide %71, %50 : tensor<64xf32>
    %73 = call @stop_gradient__64f32(%72) : (tensor<64xf32>) -> tensor<64xf32>
    %74 = stablehlo.broadcast_in_dim %73, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %75 = stablehlo.subtract %70, %74 : tensor<8x64x14x14xf32>
    %76 = stablehlo.multiply %75, %75 : tensor<8x64x14x14xf32>
    %77 = stablehlo.reduce(%76 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %78 = stablehlo.multiply %77, %49 : tensor<64xf32>
    %79 = stablehlo.add %78, %58 : tensor<64xf32>
    %80 = stablehlo.rsqrt %79 : tensor<64xf32>
    %81 = stablehlo.multiply %arg10, %80 : tensor<64xf32>
    %82 = stablehlo.multiply %72, %81 : tensor<64xf32>
    %83 = stablehlo.subtract %arg11, %82 : tensor<64xf32>
    %84 = stablehlo.broadcast_in_dim %83, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %85 = stablehlo.broadcast_in_dim %81, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %86 = stablehlo.multiply %70, %85 : tensor<8x64x14x14xf32>
    %87 = stablehlo.add %86, %84 : tensor<8x64x14x14xf32>
    %88 = stablehlo.maximum %87, %68 : tensor<8x64x14x14xf32>
    %89 = "stablehlo.reduce_window"(%88, %44) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg54: tensor<f32>, %arg55: tensor<f32>):
      %90 = stablehlo.maximum %arg54, %arg55 : tensor<f32>
      stablehlo.return %90 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<8x64x7x7xf32>
    %91 = stablehlo.reshape %89 : (tensor<8x64x7x7xf32>) -> tensor<8x3136xf32>
    %92 = stablehlo.dot_general %91, %arg12, contracting_dims = [1] x [1] : (tensor<8x3136xf32>, tensor<512x3136xf32>) -> tensor<8x512xf32>
    %93 = stablehlo.broadcast_in_dim %arg13, dims = [1] : (tensor<512xf32>) -> tensor<8x512xf32>
    %94 = stablehlo.add %92, %93 : tensor<8x512xf32>
    %95 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
    %96 = stablehlo.maximum %94, %95 : tensor<8x512xf32>
    %97 = stablehlo.dot_general %96, %arg14, contracting_dims = [1] x [1] : (tensor<8x512xf32>, tensor<10x512xf32>) -> tensor<8x10xf32>
    %98 = stablehlo.broadcast_in_dim %arg15, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %99 = stablehlo.add %97, %98 : tensor<8x10xf32>
    %100 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %101 = stablehlo.broadcast_in_dim %arg49, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %102 = stablehlo.compare  EQ, %100, %101,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %103 = stablehlo.convert %102 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %104 = stablehlo.constant dense<0.000000e+00> : tensor<8x10xf32>
    %105 = stablehlo.reduce(%99 init: %44) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %106 = stablehlo.broadcast_in_dim %105, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %107 = stablehlo.subtract %99, %106 : tensor<8x10xf32>
    %108 = stablehlo.exponential %107 : tensor<8x10xf32>
    %109 = stablehlo.reduce(%108 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %110 = stablehlo.log %109 : tensor<8xf32>
    %111 = stablehlo.broadcast_in_dim %110, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %112 = stablehlo.subtract %107, %111 : tensor<8x10xf32>
    %113 = stablehlo.multiply %103, %112 : tensor<8x10xf32>
    %114 = stablehlo.reduce(%113 init: %1) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %115 = stablehlo.constant dense<-1.250000e-01> : tensor<f32>
    %116 = stablehlo.multiply %114, %115 : tensor<f32>
    %117 = stablehlo.compare  EQ, %99, %106,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %118 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %119 = stablehlo.multiply %118, %103 : tensor<8x10xf32>
    %120 = stablehlo.negate %119 : tensor<8x10xf32>
    %121 = stablehlo.reduce(%120 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %122 = stablehlo.divide %121, %109 : tensor<8xf32>
    %123 = stablehlo.broadcast_in_dim %122, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %124 = stablehlo.multiply %123, %108 : tensor<8x10xf32>
    %125 = stablehlo.add %119, %124 : tensor<8x10xf32>
    %126 = stablehlo.negate %125 : tensor<8x10xf32>
    %127 = stablehlo.reduce(%126 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %128 = stablehlo.convert %117 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %129 = stablehlo.reduce(%128 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %130 = stablehlo.divide %127, %129 : tensor<8xf32>
    %131 = stablehlo.broadcast_in_dim %130, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %132 = stablehlo.select %117, %131, %104 : tensor<8x10xi1>, tensor<8x10xf32>
    %133 = stablehlo.add %125, %132 : tensor<8x10xf32>
    %134 = stablehlo.reduce(%133 init: %1) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %135 = stablehlo.dot_general %133, %arg14, contracting_dims = [1] x [0] : (tensor<8x10xf32>, tensor<10x512xf32>) -> tensor<8x512xf32>
    %136 = stablehlo.dot_general %133, %96, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x512xf32>) -> tensor<10x512xf32>
    %137 = stablehlo.compare  GT, %96, %95,  FLOAT : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xi1>
    %138 = stablehlo.select %137, %135, %95 : tensor<8x512xi1>, tensor<8x512xf32>
    %139 = stablehlo.reduce(%138 init: %1) applies stablehlo.add across dimensions = [0] : (tensor<8x512xf32>, tensor<f32>) -> tensor<512xf32>
    %140 = stablehlo.dot_general %138, %arg12, contracting_dims = [1] x [0] : (tensor<8x512xf32>, tensor<512x3136xf32>) -> tensor<8x3136xf32>
    %141 = stablehlo.dot_general %138, %91, contracting_dims = [0] x [0] : (tensor<8x512xf32>, tensor<8x3136xf32>) -> tensor<512x3136xf32>
    %142 = stablehlo.reshape %140 : (tensor<8x3136xf32>) -> tensor<8x64x7x7xf32>
    %143 = "stablehlo.select_and_scatter"(%88, %142, %1) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg56: tensor<f32>, %arg57: tensor<f32>):
      %144 = stablehlo.compare  GE, %arg56, %arg57,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %144 : tensor<i1>
    }, {
    ^bb0(%arg58: tensor<f32>, %arg59: tensor<f32>):
      %145 = stablehlo.add %arg58, %arg59 : tensor<f32>
      stablehlo.return %145 : tensor<f32>
    }) : (tensor<8x64x14x14xf32>, tensor<8x64x7x7xf32>, tensor<f32>) -> tensor<8x64x14x14xf32>
    %146 = stablehlo.compare  GT, %88, %68,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
    %147 = stablehlo.select %146, %143, %68 : tensor<8x64x14x14xi1>, tensor<8x64x14x14xf32>
    %148 = stablehlo.multiply %147, %85 : tensor<8x64x14x14xf32>
    %149 = stablehlo.multiply %147, %70 : tensor<8x64x14x14xf32>
    %150 = stablehlo.reduce(%149 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %151 = stablehlo.reduce(%147 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %152 = stablehlo.negate %151 : tensor<64xf32>
    %153 = stablehlo.multiply %152, %81 : tensor<64xf32>
    %154 = stablehlo.multiply %152, %72 : tensor<64xf32>
    %155 = stablehlo.add %150, %154 : tensor<64xf32>
    %156 = stablehlo.multiply %155, %80 : tensor<64xf32>
    %157 = stablehlo.multiply %155, %arg10 : tensor<64xf32>
    %158 = stablehlo.divide %80, %79 : tensor<64xf32>
    %159 = stablehlo.constant dense<-5.000000e-01> : tensor<64xf32>
    %160 = stablehlo.multiply %157, %159 : tensor<64xf32>
    %161 = stablehlo.multiply %160, %158 : tensor<64xf32>
    %162 = stablehlo.multiply %161, %49 : tensor<64xf32>
    %163 = stablehlo.broadcast_in_dim %162, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %164 = stablehlo.multiply %163, %75 : tensor<8x64x14x14xf32>
    %165 = stablehlo.add %164, %164 : tensor<8x64x14x14xf32>
    %166 = stablehlo.add %148, %165 : tensor<8x64x14x14xf32>
    %167 = stablehlo.divide %153, %50 : tensor<64xf32>
    %168 = stablehlo.broadcast_in_dim %167, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %169 = stablehlo.add %166, %168 : tensor<8x64x14x14xf32>
    %170 = stablehlo.reverse %arg9, dims = [2, 3] : tensor<64x64x3x3xf32>
    %171 = stablehlo.convolution(%169, %170) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x14x14xf32>
    %172 = stablehlo.convolution(%69, %169) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x64x3x3xf32>
    %173 = stablehlo.compare  GT, %69, %68,  FLOAT : (tensor<8x64x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<8x64x14x14xi1>
    %174 = stablehlo.select %173, %171, %68 : tensor<8x64x14x14xi1>, tensor<8x64x14x14xf32>
    %175 = stablehlo.multiply %174, %65 : tensor<8x64x14x14xf32>
    %176 = stablehlo.multiply %174, %47 : tensor<8x64x14x14xf32>
    %177 = stablehlo.reduce(%176 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %178 = stablehlo.reduce(%174 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x64x14x14xf32>, tensor<f32>) -> tensor<64xf32>
    %179 = stablehlo.negate %178 : tensor<64xf32>
    %180 = stablehlo.multiply %179, %61 : tensor<64xf32>
    %181 = stablehlo.multiply %179, %51 : tensor<64xf32>
    %182 = stablehlo.add %177, %181 : tensor<64xf32>
    %183 = stablehlo.multiply %182, %60 : tensor<64xf32>
    %184 = stablehlo.multiply %182, %arg7 : tensor<64xf32>
    %185 = stablehlo.divide %60, %59 : tensor<64xf32>
    %186 = stablehlo.multiply %184, %159 : tensor<64xf32>
    %187 = stablehlo.multiply %186, %185 : tensor<64xf32>
    %188 = stablehlo.multiply %187, %49 : tensor<64xf32>
    %189 = stablehlo.broadcast_in_dim %188, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %190 = stablehlo.multiply %189, %54 : tensor<8x64x14x14xf32>
    %191 = stablehlo.add %190, %190 : tensor<8x64x14x14xf32>
    %192 = stablehlo.add %175, %191 : tensor<8x64x14x14xf32>
    %193 = stablehlo.divide %180, %50 : tensor<64xf32>
    %194 = stablehlo.broadcast_in_dim %193, dims = [1] : (tensor<64xf32>) -> tensor<8x64x14x14xf32>
    %195 = stablehlo.add %192, %194 : tensor<8x64x14x14xf32>
    %196 = stablehlo.reverse %arg6, dims = [2, 3] : tensor<64x32x3x3xf32>
    %197 = stablehlo.convolution(%195, %196) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x64x14x14xf32>, tensor<64x32x3x3xf32>) -> tensor<8x32x14x14xf32>
    %198 = stablehlo.convolution(%45, %195) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x14x14xf32>, tensor<8x64x14x14xf32>) -> tensor<64x32x3x3xf32>
    %199 = "stablehlo.select_and_scatter"(%43, %197, %1) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg60: tensor<f32>, %arg61: tensor<f32>):
      %200 = stablehlo.compare  GE, %arg60, %arg61,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %200 : tensor<i1>
    }, {
    ^bb0(%arg62: tensor<f32>, %arg63: tensor<f32>):
      %201 = stablehlo.add %arg62, %arg63 : tensor<f32>
      stablehlo.return %201 : tensor<f32>
    }) : (tensor<8x32x28x28xf32>, tensor<8x32x14x14xf32>, tensor<f32>) -> tensor<8x32x28x28xf32>
    %202 = stablehlo.compare  GT, %43, %23,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %203 = stablehlo.select %202, %199, %23 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %204 = stablehlo.multiply %203, %40 : tensor<8x32x28x28xf32>
    %205 = stablehlo.multiply %203, %25 : tensor<8x32x28x28xf32>
    %206 = stablehlo.reduce(%205 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %207 = stablehlo.reduce(%203 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %208 = stablehlo.negate %207 : tensor<32xf32>
    %209 = stablehlo.multiply %208, %36 : tensor<32xf32>
    %210 = stablehlo.multiply %208, %27 : tensor<32xf32>
    %211 = stablehlo.add %206, %210 : tensor<32xf32>
    %212 = stablehlo.multiply %211, %35 : tensor<32xf32>
    %213 = stablehlo.multiply %211, %arg4 : tensor<32xf32>
    %214 = stablehlo.divide %35, %34 : tensor<32xf32>
    %215 = stablehlo.constant dense<-5.000000e-01> : tensor<32xf32>
    %216 = stablehlo.multiply %213, %215 : tensor<32xf32>
    %217 = stablehlo.multiply %216, %214 : tensor<32xf32>
    %218 = stablehlo.multiply %217, %4 : tensor<32xf32>
    %219 = stablehlo.broadcast_in_dim %218, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %220 = stablehlo.multiply %219, %30 : tensor<8x32x28x28xf32>
    %221 = stablehlo.add %220, %220 : tensor<8x32x28x28xf32>
    %222 = stablehlo.add %204, %221 : tensor<8x32x28x28xf32>
    %223 = stablehlo.divide %209, %5 : tensor<32xf32>
    %224 = stablehlo.broadcast_in_dim %223, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %225 = stablehlo.add %222, %224 : tensor<8x32x28x28xf32>
    %226 = stablehlo.reverse %arg3, dims = [2, 3] : tensor<32x32x3x3xf32>
    %227 = stablehlo.convolution(%225, %226) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x28x28xf32>
    %228 = stablehlo.convolution(%24, %225) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x32x3x3xf32>
    %229 = stablehlo.compare  GT, %24, %23,  FLOAT : (tensor<8x32x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xi1>
    %230 = stablehlo.select %229, %227, %23 : tensor<8x32x28x28xi1>, tensor<8x32x28x28xf32>
    %231 = stablehlo.multiply %230, %20 : tensor<8x32x28x28xf32>
    %232 = stablehlo.multiply %230, %2 : tensor<8x32x28x28xf32>
    %233 = stablehlo.reduce(%232 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %234 = stablehlo.reduce(%230 init: %1) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<8x32x28x28xf32>, tensor<f32>) -> tensor<32xf32>
    %235 = stablehlo.negate %234 : tensor<32xf32>
    %236 = stablehlo.multiply %235, %16 : tensor<32xf32>
    %237 = stablehlo.multiply %235, %6 : tensor<32xf32>
    %238 = stablehlo.add %233, %237 : tensor<32xf32>
    %239 = stablehlo.multiply %238, %15 : tensor<32xf32>
    %240 = stablehlo.multiply %238, %arg1 : tensor<32xf32>
    %241 = stablehlo.divide %15, %14 : tensor<32xf32>
    %242 = stablehlo.multiply %240, %215 : tensor<32xf32>
    %243 = stablehlo.multiply %242, %241 : tensor<32xf32>
    %244 = stablehlo.multiply %243, %4 : tensor<32xf32>
    %245 = stablehlo.broadcast_in_dim %244, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %246 = stablehlo.multiply %245, %9 : tensor<8x32x28x28xf32>
    %247 = stablehlo.add %246, %246 : tensor<8x32x28x28xf32>
    %248 = stablehlo.add %231, %247 : tensor<8x32x28x28xf32>
    %249 = stablehlo.divide %236, %5 : tensor<32xf32>
    %250 = stablehlo.broadcast_in_dim %249, dims = [1] : (tensor<32xf32>) -> tensor<8x32x28x28xf32>
    %251 = stablehlo.add %248, %250 : tensor<8x32x28x28xf32>
    %252 = stablehlo.convolution(%arg48, %251) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x1x28x28xf32>, tensor<8x32x28x28xf32>) -> tensor<32x1x3x3xf32>
    %253 = stablehlo.convert %arg51 : (tensor<i32>) -> tensor<f32>
    %254 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %255 = stablehlo.power %254, %253 : tensor<f32>
    %256 = stablehlo.subtract %0, %255 : tensor<f32>
    %257 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %258 = stablehlo.power %257, %253 : tensor<f32>
    %259 = stablehlo.subtract %0, %258 : tensor<f32>
    %260 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %261 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %262 = stablehlo.broadcast_in_dim %261, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %263 = stablehlo.multiply %262, %252 : tensor<32x1x3x3xf32>
    %264 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %265 = stablehlo.multiply %264, %arg16 : tensor<32x1x3x3xf32>
    %266 = stablehlo.add %265, %263 : tensor<32x1x3x3xf32>
    %267 = stablehlo.multiply %252, %252 : tensor<32x1x3x3xf32>
    %268 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %269 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %270 = stablehlo.multiply %269, %267 : tensor<32x1x3x3xf32>
    %271 = stablehlo.broadcast_in_dim %257, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %272 = stablehlo.multiply %271, %arg32 : tensor<32x1x3x3xf32>
    %273 = stablehlo.add %272, %270 : tensor<32x1x3x3xf32>
    %274 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %275 = stablehlo.divide %266, %274 : tensor<32x1x3x3xf32>
    %276 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %277 = stablehlo.divide %273, %276 : tensor<32x1x3x3xf32>
    %278 = stablehlo.constant dense<1.000000e-08> : tensor<f32>
    %279 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<f32>) -> tensor<32x1x3x3xf32>
    %280 = stablehlo.sqrt %277 : tensor<32x1x3x3xf32>
    %281 = stablehlo.add %280, %279 : tensor<32x1x3x3xf32>
    %282 = stablehlo.divide %275, %281 : tensor<32x1x3x3xf32>
    %283 = stablehlo.multiply %260, %282 : tensor<32x1x3x3xf32>
    %284 = stablehlo.subtract %arg0, %283 : tensor<32x1x3x3xf32>
    %285 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %286 = stablehlo.constant dense<1.000000e-01> : tensor<32xf32>
    %287 = stablehlo.multiply %286, %239 : tensor<32xf32>
    %288 = stablehlo.constant dense<9.000000e-01> : tensor<32xf32>
    %289 = stablehlo.multiply %288, %arg17 : tensor<32xf32>
    %290 = stablehlo.add %289, %287 : tensor<32xf32>
    %291 = stablehlo.multiply %239, %239 : tensor<32xf32>
    %292 = stablehlo.constant dense<1.000000e-03> : tensor<32xf32>
    %293 = stablehlo.multiply %292, %291 : tensor<32xf32>
    %294 = stablehlo.constant dense<9.990000e-01> : tensor<32xf32>
    %295 = stablehlo.multiply %294, %arg33 : tensor<32xf32>
    %296 = stablehlo.add %295, %293 : tensor<32xf32>
    %297 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %298 = stablehlo.divide %290, %297 : tensor<32xf32>
    %299 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %300 = stablehlo.divide %296, %299 : tensor<32xf32>
    %301 = stablehlo.constant dense<1.000000e-08> : tensor<32xf32>
    %302 = stablehlo.sqrt %300 : tensor<32xf32>
    %303 = stablehlo.add %302, %301 : tensor<32xf32>
    %304 = stablehlo.divide %298, %303 : tensor<32xf32>
    %305 = stablehlo.multiply %285, %304 : tensor<32xf32>
    %306 = stablehlo.subtract %arg1, %305 : tensor<32xf32>
    %307 = stablehlo.multiply %286, %234 : tensor<32xf32>
    %308 = stablehlo.multiply %288, %arg18 : tensor<32xf32>
    %309 = stablehlo.add %308, %307 : tensor<32xf32>
    %310 = stablehlo.multiply %234, %234 : tensor<32xf32>
    %311 = stablehlo.multiply %292, %310 : tensor<32xf32>
    %312 = stablehlo.multiply %294, %arg34 : tensor<32xf32>
    %313 = stablehlo.add %312, %311 : tensor<32xf32>
    %314 = stablehlo.divide %309, %297 : tensor<32xf32>
    %315 = stablehlo.divide %313, %299 : tensor<32xf32>
    %316 = stablehlo.sqrt %315 : tensor<32xf32>
    %317 = stablehlo.add %316, %301 : tensor<32xf32>
    %318 = stablehlo.divide %314, %317 : tensor<32xf32>
    %319 = stablehlo.multiply %285, %318 : tensor<32xf32>
    %320 = stablehlo.subtract %arg2, %319 : tensor<32xf32>
    %321 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %322 = stablehlo.broadcast_in_dim %261, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %323 = stablehlo.multiply %322, %228 : tensor<32x32x3x3xf32>
    %324 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %325 = stablehlo.multiply %324, %arg19 : tensor<32x32x3x3xf32>
    %326 = stablehlo.add %325, %323 : tensor<32x32x3x3xf32>
    %327 = stablehlo.multiply %228, %228 : tensor<32x32x3x3xf32>
    %328 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %329 = stablehlo.multiply %328, %327 : tensor<32x32x3x3xf32>
    %330 = stablehlo.broadcast_in_dim %257, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %331 = stablehlo.multiply %330, %arg35 : tensor<32x32x3x3xf32>
    %332 = stablehlo.add %331, %329 : tensor<32x32x3x3xf32>
    %333 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %334 = stablehlo.divide %326, %333 : tensor<32x32x3x3xf32>
    %335 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %336 = stablehlo.divide %332, %335 : tensor<32x32x3x3xf32>
    %337 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<f32>) -> tensor<32x32x3x3xf32>
    %338 = stablehlo.sqrt %336 : tensor<32x32x3x3xf32>
    %339 = stablehlo.add %338, %337 : tensor<32x32x3x3xf32>
    %340 = stablehlo.divide %334, %339 : tensor<32x32x3x3xf32>
    %341 = stablehlo.multiply %321, %340 : tensor<32x32x3x3xf32>
    %342 = stablehlo.subtract %arg3, %341 : tensor<32x32x3x3xf32>
    %343 = stablehlo.multiply %286, %212 : tensor<32xf32>
    %344 = stablehlo.multiply %288, %arg20 : tensor<32xf32>
    %345 = stablehlo.add %344, %343 : tensor<32xf32>
    %346 = stablehlo.multiply %212, %212 : tensor<32xf32>
    %347 = stablehlo.multiply %292, %346 : tensor<32xf32>
    %348 = stablehlo.multiply %294, %arg36 : tensor<32xf32>
    %349 = stablehlo.add %348, %347 : tensor<32xf32>
    %350 = stablehlo.divide %345, %297 : tensor<32xf32>
    %351 = stablehlo.divide %349, %299 : tensor<32xf32>
    %352 = stablehlo.sqrt %351 : tensor<32xf32>
    %353 = stablehlo.add %352, %301 : tensor<32xf32>
    %354 = stablehlo.divide %350, %353 : tensor<32xf32>
    %355 = stablehlo.multiply %285, %354 : tensor<32xf32>
    %356 = stablehlo.subtract %arg4, %355 : tensor<32xf32>
    %357 = stablehlo.multiply %286, %207 : tensor<32xf32>
    %358 = stablehlo.multiply %288, %arg21 : tensor<32xf32>
    %359 = stablehlo.add %358, %357 : tensor<32xf32>
    %360 = stablehlo.multiply %207, %207 : tensor<32xf32>
    %361 = stablehlo.multiply %292, %360 : tensor<32xf32>
    %362 = stablehlo.multiply %294, %arg37 : tensor<32xf32>
    %363 = stablehlo.add %362, %361 : tensor<32xf32>
    %364 = stablehlo.divide %359, %297 : tensor<32xf32>
    %365 = stablehlo.divide %363, %299 : tensor<32xf32>
    %366 = stablehlo.sqrt %365 : tensor<32xf32>
    %367 = stablehlo.add %366, %301 : tensor<32xf32>
    %368 = stablehlo.divide %364, %367 : tensor<32xf32>
    %369 = stablehlo.multiply %285, %368 : tensor<32xf32>
    %370 = stablehlo.subtract %arg5, %369 : tensor<32xf32>
    %371 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %372 = stablehlo.broadcast_in_dim %261, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %373 = stablehlo.multiply %372, %198 : tensor<64x32x3x3xf32>
    %374 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %375 = stablehlo.multiply %374, %arg22 : tensor<64x32x3x3xf32>
    %376 = stablehlo.add %375, %373 : tensor<64x32x3x3xf32>
    %377 = stablehlo.multiply %198, %198 : tensor<64x32x3x3xf32>
    %378 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %379 = stablehlo.multiply %378, %377 : tensor<64x32x3x3xf32>
    %380 = stablehlo.broadcast_in_dim %257, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %381 = stablehlo.multiply %380, %arg38 : tensor<64x32x3x3xf32>
    %382 = stablehlo.add %381, %379 : tensor<64x32x3x3xf32>
    %383 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %384 = stablehlo.divide %376, %383 : tensor<64x32x3x3xf32>
    %385 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %386 = stablehlo.divide %382, %385 : tensor<64x32x3x3xf32>
    %387 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<f32>) -> tensor<64x32x3x3xf32>
    %388 = stablehlo.sqrt %386 : tensor<64x32x3x3xf32>
    %389 = stablehlo.add %388, %387 : tensor<64x32x3x3xf32>
    %390 = stablehlo.divide %384, %389 : tensor<64x32x3x3xf32>
    %391 = stablehlo.multiply %371, %390 : tensor<64x32x3x3xf32>
    %392 = stablehlo.subtract %arg6, %391 : tensor<64x32x3x3xf32>
    %393 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %394 = stablehlo.constant dense<1.000000e-01> : tensor<64xf32>
    %395 = stablehlo.multiply %394, %183 : tensor<64xf32>
    %396 = stablehlo.constant dense<9.000000e-01> : tensor<64xf32>
    %397 = stablehlo.multiply %396, %arg23 : tensor<64xf32>
    %398 = stablehlo.add %397, %395 : tensor<64xf32>
    %399 = stablehlo.multiply %183, %183 : tensor<64xf32>
    %400 = stablehlo.constant dense<1.000000e-03> : tensor<64xf32>
    %401 = stablehlo.multiply %400, %399 : tensor<64xf32>
    %402 = stablehlo.constant dense<9.990000e-01> : tensor<64xf32>
    %403 = stablehlo.multiply %402, %arg39 : tensor<64xf32>
    %404 = stablehlo.add %403, %401 : tensor<64xf32>
    %405 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %406 = stablehlo.divide %398, %405 : tensor<64xf32>
    %407 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %408 = stablehlo.divide %404, %407 : tensor<64xf32>
    %409 = stablehlo.constant dense<1.000000e-08> : tensor<64xf32>
    %410 = stablehlo.sqrt %408 : tensor<64xf32>
    %411 = stablehlo.add %410, %409 : tensor<64xf32>
    %412 = stablehlo.divide %406, %411 : tensor<64xf32>
    %413 = stablehlo.multiply %393, %412 : tensor<64xf32>
    %414 = stablehlo.subtract %arg7, %413 : tensor<64xf32>
    %415 = stablehlo.multiply %394, %178 : tensor<64xf32>
    %416 = stablehlo.multiply %396, %arg24 : tensor<64xf32>
    %417 = stablehlo.add %416, %415 : tensor<64xf32>
    %418 = stablehlo.multiply %178, %178 : tensor<64xf32>
    %419 = stablehlo.multiply %400, %418 : tensor<64xf32>
    %420 = stablehlo.multiply %402, %arg40 : tensor<64xf32>
    %421 = stablehlo.add %420, %419 : tensor<64xf32>
    %422 = stablehlo.divide %417, %405 : tensor<64xf32>
    %423 = stablehlo.divide %421, %407 : tensor<64xf32>
    %424 = stablehlo.sqrt %423 : tensor<64xf32>
    %425 = stablehlo.add %424, %409 : tensor<64xf32>
    %426 = stablehlo.divide %422, %425 : tensor<64xf32>
    %427 = stablehlo.multiply %393, %426 : tensor<64xf32>
    %428 = stablehlo.subtract %arg8, %427 : tensor<64xf32>
    %429 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %430 = stablehlo.broadcast_in_dim %261, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %431 = stablehlo.multiply %430, %172 : tensor<64x64x3x3xf32>
    %432 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %433 = stablehlo.multiply %432, %arg25 : tensor<64x64x3x3xf32>
    %434 = stablehlo.add %433, %431 : tensor<64x64x3x3xf32>
    %435 = stablehlo.multiply %172, %172 : tensor<64x64x3x3xf32>
    %436 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %437 = stablehlo.multiply %436, %435 : tensor<64x64x3x3xf32>
    %438 = stablehlo.broadcast_in_dim %257, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %439 = stablehlo.multiply %438, %arg41 : tensor<64x64x3x3xf32>
    %440 = stablehlo.add %439, %437 : tensor<64x64x3x3xf32>
    %441 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %442 = stablehlo.divide %434, %441 : tensor<64x64x3x3xf32>
    %443 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %444 = stablehlo.divide %440, %443 : tensor<64x64x3x3xf32>
    %445 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<f32>) -> tensor<64x64x3x3xf32>
    %446 = stablehlo.sqrt %444 : tensor<64x64x3x3xf32>
    %447 = stablehlo.add %446, %445 : tensor<64x64x3x3xf32>
    %448 = stablehlo.divide %442, %447 : tensor<64x64x3x3xf32>
    %449 = stablehlo.multiply %429, %448 : tensor<64x64x3x3xf32>
    %450 = stablehlo.subtract %arg9, %449 : tensor<64x64x3x3xf32>
    %451 = stablehlo.multiply %394, %156 : tensor<64xf32>
    %452 = stablehlo.multiply %396, %arg26 : tensor<64xf32>
    %453 = stablehlo.add %452, %451 : tensor<64xf32>
    %454 = stablehlo.multiply %156, %156 : tensor<64xf32>
    %455 = stablehlo.multiply %400, %454 : tensor<64xf32>
    %456 = stablehlo.multiply %402, %arg42 : tensor<64xf32>
    %457 = stablehlo.add %456, %455 : tensor<64xf32>
    %458 = stablehlo.divide %453, %405 : tensor<64xf32>
    %459 = stablehlo.divide %457, %407 : tensor<64xf32>
    %460 = stablehlo.sqrt %459 : tensor<64xf32>
    %461 = stablehlo.add %460, %409 : tensor<64xf32>
    %462 = stablehlo.divide %458, %461 : tensor<64xf32>
    %463 = stablehlo.multiply %393, %462 : tensor<64xf32>
    %464 = stablehlo.subtract %arg10, %463 : tensor<64xf32>
    %465 = stablehlo.multiply %394, %151 : tensor<64xf32>
    %466 = stablehlo.multiply %396, %arg27 : tensor<64xf32>
    %467 = stablehlo.add %466, %465 : tensor<64xf32>
    %468 = stablehlo.multiply %151, %151 : tensor<64xf32>
    %469 = stablehlo.multiply %400, %468 : tensor<64xf32>
    %470 = stablehlo.multiply %402, %arg43 : tensor<64xf32>
    %471 = stablehlo.add %470, %469 : tensor<64xf32>
    %472 = stablehlo.divide %467, %405 : tensor<64xf32>
    %473 = stablehlo.divide %471, %407 : tensor<64xf32>
    %474 = stablehlo.sqrt %473 : tensor<64xf32>
    %475 = stablehlo.add %474, %409 : tensor<64xf32>
    %476 = stablehlo.divide %472, %475 : tensor<64xf32>
    %477 = stablehlo.multiply %393, %476 : tensor<64xf32>
    %478 = stablehlo.subtract %arg11, %477 : tensor<64xf32>
    %479 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %480 = stablehlo.broadcast_in_dim %261, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %481 = stablehlo.multiply %480, %141 : tensor<512x3136xf32>
    %482 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %483 = stablehlo.multiply %482, %arg28 : tensor<512x3136xf32>
    %484 = stablehlo.add %483, %481 : tensor<512x3136xf32>
    %485 = stablehlo.multiply %141, %141 : tensor<512x3136xf32>
    %486 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %487 = stablehlo.multiply %486, %485 : tensor<512x3136xf32>
    %488 = stablehlo.broadcast_in_dim %257, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %489 = stablehlo.multiply %488, %arg44 : tensor<512x3136xf32>
    %490 = stablehlo.add %489, %487 : tensor<512x3136xf32>
    %491 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %492 = stablehlo.divide %484, %491 : tensor<512x3136xf32>
    %493 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %494 = stablehlo.divide %490, %493 : tensor<512x3136xf32>
    %495 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<f32>) -> tensor<512x3136xf32>
    %496 = stablehlo.sqrt %494 : tensor<512x3136xf32>
    %497 = stablehlo.add %496, %495 : tensor<512x3136xf32>
    %498 = stablehlo.divide %492, %497 : tensor<512x3136xf32>
    %499 = stablehlo.multiply %479, %498 : tensor<512x3136xf32>
    %500 = stablehlo.subtract %arg12, %499 : tensor<512x3136xf32>
    %501 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %502 = stablehlo.broadcast_in_dim %261, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %503 = stablehlo.multiply %502, %139 : tensor<512xf32>
    %504 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %505 = stablehlo.multiply %504, %arg29 : tensor<512xf32>
    %506 = stablehlo.add %505, %503 : tensor<512xf32>
    %507 = stablehlo.multiply %139, %139 : tensor<512xf32>
    %508 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %509 = stablehlo.multiply %508, %507 : tensor<512xf32>
    %510 = stablehlo.broadcast_in_dim %257, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %511 = stablehlo.multiply %510, %arg45 : tensor<512xf32>
    %512 = stablehlo.add %511, %509 : tensor<512xf32>
    %513 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %514 = stablehlo.divide %506, %513 : tensor<512xf32>
    %515 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %516 = stablehlo.divide %512, %515 : tensor<512xf32>
    %517 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %518 = stablehlo.sqrt %516 : tensor<512xf32>
    %519 = stablehlo.add %518, %517 : tensor<512xf32>
    %520 = stablehlo.divide %514, %519 : tensor<512xf32>
    %521 = stablehlo.multiply %501, %520 : tensor<512xf32>
    %522 = stablehlo.subtract %arg13, %521 : tensor<512xf32>
    %523 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %524 = stablehlo.broadcast_in_dim %261, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %525 = stablehlo.multiply %524, %136 : tensor<10x512xf32>
    %526 = stablehlo.broadcast_in_dim %254, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %527 = stablehlo.multiply %526, %arg30 : tensor<10x512xf32>
    %528 = stablehlo.add %527, %525 : tensor<10x512xf32>
    %529 = stablehlo.multiply %136, %136 : tensor<10x512xf32>
    %530 = stablehlo.broadcast_in_dim %268, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %531 = stablehlo.multiply %530, %529 : tensor<10x512xf32>
    %532 = stablehlo.broadcast_in_dim %257, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %533 = stablehlo.multiply %532, %arg46 : tensor<10x512xf32>
    %534 = stablehlo.add %533, %531 : tensor<10x512xf32>
    %535 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %536 = stablehlo.divide %528, %535 : tensor<10x512xf32>
    %537 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %538 = stablehlo.divide %534, %537 : tensor<10x512xf32>
    %539 = stablehlo.broadcast_in_dim %278, dims = [] : (tensor<f32>) -> tensor<10x512xf32>
    %540 = stablehlo.sqrt %538 : tensor<10x512xf32>
    %541 = stablehlo.add %540, %539 : tensor<10x512xf32>
    %542 = stablehlo.divide %536, %541 : tensor<10x512xf32>
    %543 = stablehlo.multiply %523, %542 : tensor<10x512xf32>
    %544 = stablehlo.subtract %arg14, %543 : tensor<10x512xf32>
    %545 = stablehlo.broadcast_in_dim %arg50, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %546 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %547 = stablehlo.multiply %546, %134 : tensor<10xf32>
    %548 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %549 = stablehlo.multiply %548, %arg31 : tensor<10xf32>
    %550 = stablehlo.add %549, %547 : tensor<10xf32>
    %551 = stablehlo.multiply %134, %134 : tensor<10xf32>
    %552 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %553 = stablehlo.multiply %552, %551 : tensor<10xf32>
    %554 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %555 = stablehlo.multiply %554, %arg47 : tensor<10xf32>
    %556 = stablehlo.add %555, %553 : tensor<10xf32>
    %557 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %558 = stablehlo.divide %550, %557 : tensor<10xf32>
    %559 = stablehlo.broadcast_in_dim %259, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %560 = stablehlo.divide %556, %559 : tensor<10xf32>
    %561 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %562 = stablehlo.sqrt %560 : tensor<10xf32>
    %563 = stablehlo.add %562, %561 : tensor<10xf32>
    %564 = stablehlo.divide %558, %563 : tensor<10xf32>
    %565 = stablehlo.multiply %545, %564 : tensor<10xf32>
    %566 = stablehlo.subtract %arg15, %565 : tensor<10xf32>
    %567 = stablehlo.constant dense<0> : tensor<i32>
    %568 = stablehlo.constant dense<10> : tensor<i32>
    %569 = stablehlo.constant dense<10> : tensor<8x10xi32>
    %570 = stablehlo.select %117, %100, %569 : tensor<8x10xi1>, tensor<8x10xi32>
    %571 = stablehlo.reduce(%570 init: %568) applies stablehlo.minimum across dimensions = [1] : (tensor<8x10xi32>, tensor<i32>) -> tensor<8xi32>
    %572 = stablehlo.compare  EQ, %571, %arg49,  SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %573 = stablehlo.convert %572 : (tensor<8xi1>) -> tensor<8xi32>
    %574 = stablehlo.reduce(%573 init: %567) applies stablehlo.add across dimensions = [0] : (tensor<8xi32>, tensor<i32>) -> tensor<i32>
    return %284, %306, %320, %342, %356, %370, %392, %414, %428, %450, %464, %478, %500, %522, %544, %566, %266, %290, %309, %326, %345, %359, %376, %398, %417, %434, %453, %467, %484, %506, %528, %550, %273, %296, %313, %332, %349, %363, %382, %404, %421, %440, %457, %471, %490, %512, %534, %556, %116, %6, %12, %27, %33, %51, %57, %72, %78, %574 : tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512x3136xf32>, tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>, tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i32>
  }
}
