module @linear_train_step {
  func.func public @main(%arg0: tensor<10x784xf32>, %arg1: tensor<10xf32>, %arg2: tensor<10x784xf32>, %arg3: tensor<10xf32>, %arg4: tensor<10x784xf32>, %arg5: tensor<10xf32>, %arg6: tensor<8x1x28x28xf32>, %arg7: tensor<8xi32>, %arg8: tensor<f32>, %arg9: tensor<i32>) -> (tensor<10x784xf32>, tensor<10xf32>, tensor<10x784xf32>, tensor<10xf32>, tensor<10x784xf32>, tensor<10xf32>, tensor<f32>, tensor<i32>) {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.reshape %arg6 : (tensor<8x1x28x28xf32>) -> tensor<8x784xf32>
    %2 = stablehlo.dot_general %1, %arg0, contracting_dims = [1] x [1] : (tensor<8x784xf32>, tensor<10x784xf32>) -> tensor<8x10xf32>
    %3 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<10xf32>) -> tensor<8x10xf32>
    %4 = stablehlo.add %2, %3 : tensor<8x10xf32>
    %5 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %6 = stablehlo.broadcast_in_dim %arg7, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %7 = stablehlo.compare  EQ, %5, %6,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %8 = stablehlo.convert %7 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.constant dense<0.000000e+00> : tensor<8x10xf32>
    %11 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %12 = stablehlo.reduce(%4 init: %11) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %14 = stablehlo.subtract %4, %13 : tensor<8x10xf32>
    %15 = stablehlo.exponential %14 : tensor<8x10xf32>
    %16 = stablehlo.reduce(%15 init: %9) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %17 = stablehlo.log %16 : tensor<8xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %19 = stablehlo.subtract %14, %18 : tensor<8x10xf32>
    %20 = stablehlo.multiply %8, %19 : tensor<8x10xf32>
    %21 = stablehlo.reduce(%20 init: %9) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %22 = stablehlo.constant dense<-1.250000e-01> : tensor<f32>
    %23 = stablehlo.multiply %21, %22 : tensor<f32>
    %24 = stablehlo.compare  EQ, %4, %13,  FLOAT : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xi1>
    %25 = stablehlo.constant dense<-1.250000e-01> : tensor<8x10xf32>
    %26 = stablehlo.multiply %25, %8 : tensor<8x10xf32>
    %27 = stablehlo.negate %26 : tensor<8x10xf32>
    %28 = stablehlo.reduce(%27 init: %9) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %29 = stablehlo.divide %28, %16 : tensor<8xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %31 = stablehlo.multiply %30, %15 : tensor<8x10xf32>
    %32 = stablehlo.add %26, %31 : tensor<8x10xf32>
    %33 = stablehlo.negate %32 : tensor<8x10xf32>
    %34 = stablehlo.reduce(%33 init: %9) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %35 = stablehlo.convert %24 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %36 = stablehlo.reduce(%35 init: %9) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %37 = stablehlo.divide %34, %36 : tensor<8xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %39 = stablehlo.select %24, %38, %10 : tensor<8x10xi1>, tensor<8x10xf32>
    %40 = stablehlo.add %32, %39 : tensor<8x10xf32>
    %41 = stablehlo.reduce(%40 init: %9) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %42 = stablehlo.dot_general %40, %1, contracting_dims = [0] x [0] : (tensor<8x10xf32>, tensor<8x784xf32>) -> tensor<10x784xf32>
    %43 = stablehlo.convert %arg9 : (tensor<i32>) -> tensor<f32>
    %44 = stablehlo.constant dense<9.000000e-01> : tensor<f32>
    %45 = stablehlo.power %44, %43 : tensor<f32>
    %46 = stablehlo.subtract %0, %45 : tensor<f32>
    %47 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %48 = stablehlo.power %47, %43 : tensor<f32>
    %49 = stablehlo.subtract %0, %48 : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %arg8, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %51 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %52 = stablehlo.broadcast_in_dim %51, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %53 = stablehlo.multiply %52, %42 : tensor<10x784xf32>
    %54 = stablehlo.broadcast_in_dim %44, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %55 = stablehlo.multiply %54, %arg2 : tensor<10x784xf32>
    %56 = stablehlo.add %55, %53 : tensor<10x784xf32>
    %57 = stablehlo.multiply %42, %42 : tensor<10x784xf32>
    %58 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %60 = stablehlo.multiply %59, %57 : tensor<10x784xf32>
    %61 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %62 = stablehlo.multiply %61, %arg4 : tensor<10x784xf32>
    %63 = stablehlo.add %62, %60 : tensor<10x784xf32>
    %64 = stablehlo.broadcast_in_dim %46, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %65 = stablehlo.divide %56, %64 : tensor<10x784xf32>
    %66 = stablehlo.broadcast_in_dim %49, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %67 = stablehlo.divide %63, %66 : tensor<10x784xf32>
    %68 = stablehlo.constant dense<1.000000e-08> : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [] : (tensor<f32>) -> tensor<10x784xf32>
    %70 = stablehlo.sqrt %67 : tensor<10x784xf32>
    %71 = stablehlo.add %70, %69 : tensor<10x784xf32>
    %72 = stablehlo.divide %65, %71 : tensor<10x784xf32>
    %73 = stablehlo.multiply %50, %72 : tensor<10x784xf32>
    %74 = stablehlo.subtract %arg0, %73 : tensor<10x784xf32>
    %75 = stablehlo.broadcast_in_dim %arg8, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %76 = stablehlo.constant dense<1.000000e-01> : tensor<10xf32>
    %77 = stablehlo.multiply %76, %41 : tensor<10xf32>
    %78 = stablehlo.constant dense<9.000000e-01> : tensor<10xf32>
    %79 = stablehlo.multiply %78, %arg3 : tensor<10xf32>
    %80 = stablehlo.add %79, %77 : tensor<10xf32>
    %81 = stablehlo.multiply %41, %41 : tensor<10xf32>
    %82 = stablehlo.constant dense<1.000000e-03> : tensor<10xf32>
    %83 = stablehlo.multiply %82, %81 : tensor<10xf32>
    %84 = stablehlo.constant dense<9.990000e-01> : tensor<10xf32>
    %85 = stablehlo.multiply %84, %arg5 : tensor<10xf32>
    %86 = stablehlo.add %85, %83 : tensor<10xf32>
    %87 = stablehlo.broadcast_in_dim %46, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %88 = stablehlo.divide %80, %87 : tensor<10xf32>
    %89 = stablehlo.broadcast_in_dim %49, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %90 = stablehlo.divide %86, %89 : tensor<10xf32>
    %91 = stablehlo.constant dense<1.000000e-08> : tensor<10xf32>
    %92 = stablehlo.sqrt %90 : tensor<10xf32>
    %93 = stablehlo.add %92, %91 : tensor<10xf32>
    %94 = stablehlo.divide %88, %93 : tensor<10xf32>
    %95 = stablehlo.multiply %75, %94 : tensor<10xf32>
    %96 = stablehlo.subtract %arg1, %95 : tensor<10xf32>
    %97 = stablehlo.constant dense<0> : tensor<i32>
    %98 = stablehlo.constant dense<10> : tensor<i32>
    %99 = stablehlo.constant dense<10> : tensor<8x10xi32>
    %100 = stablehlo.select %24, %5, %99 : tensor<8x10xi1>, tensor<8x10xi32>
    %101 = stablehlo.reduce(%100 init: %98) applies stablehlo.minimum across dimensions = [1] : (tensor<8x10xi32>, tensor<i32>) -> tensor<8xi32>
    %102 = stablehlo.compare  EQ, %101, %arg7,  SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %103 = stablehlo.convert %102 : (tensor<8xi1>) -> tensor<8xi32>
    %104 = stablehlo.reduce(%103 init: %97) applies stablehlo.add across dimensions = [0] : (tensor<8xi32>, tensor<i32>) -> tensor<i32>
    return %74, %96, %56, %80, %63, %86, %23, %104 : tensor<10x784xf32>, tensor<10xf32>, tensor<10x784xf32>, tensor<10xf32>, tensor<10x784xf32>, tensor<10xf32>, tensor<f32>, tensor<i32>
  }
}
