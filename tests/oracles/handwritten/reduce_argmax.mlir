func.func @main(%arg0: tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %iota = stablehlo.iota dim = 1 : tensor<3x4xi32>
  %0:2 = stablehlo.reduce(%arg0 init: %cst), (%iota init: %c) across dimensions = [1] : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
    %1 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = stablehlo.select %1, %a, %b : tensor<i1>, tensor<f32>
    %3 = stablehlo.select %1, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %2, %3 : tensor<f32>, tensor<i32>
  }
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
}
