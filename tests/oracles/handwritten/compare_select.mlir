func.func @main(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>) -> (tensor<5xi1>, tensor<5xf32>) {
  %0 = stablehlo.compare  LT, %arg0, %arg1,  FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  %1 = stablehlo.select %0, %arg0, %arg1 : tensor<5xi1>, tensor<5xf32>
  return %0, %1 : tensor<5xi1>, tensor<5xf32>
}
