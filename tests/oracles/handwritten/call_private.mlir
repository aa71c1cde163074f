func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = call @helper(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @helper(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func private @helper(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.tanh %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
