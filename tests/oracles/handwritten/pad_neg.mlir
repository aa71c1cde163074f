func.func @main(%arg0: tensor<2x3xi32>) -> tensor<5x2xi32> {
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %0 = stablehlo.pad %arg0, %c, low = [1, -1], high = [1, -1], interior = [1, 1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<5x3xi32>
  %1 = stablehlo.slice %0 [0:5, 1:3] : (tensor<5x3xi32>) -> tensor<5x2xi32>
  return %1 : tensor<5x2xi32>
}
