func.func @main(%arg0: tensor<4xi1>, %arg1: tensor<4xi1>) -> tensor<4xi1> {
  %0 = stablehlo.xor %arg0, %arg1 : tensor<4xi1>
  %1 = stablehlo.not %0 : tensor<4xi1>
  return %1 : tensor<4xi1>
}
