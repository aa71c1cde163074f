func.func @main(%arg0: tensor<4xf64>, %arg1: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xi64>) {
  %0 = stablehlo.exponential %arg0 : tensor<4xf64>
  %c = stablehlo.constant dense<4294967296> : tensor<4xi64>
  %1 = stablehlo.multiply %arg1, %c : tensor<4xi64>
  return %0, %1 : tensor<4xf64>, tensor<4xi64>
}
