func.func @main(%arg0: tensor<f32>) -> (tensor<i32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %x = %arg0) : tensor<i32>, tensor<f32>
   cond {
    %c5 = stablehlo.constant dense<5> : tensor<i32>
    %1 = stablehlo.compare  LT, %i, %c5,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.add %i, %c1 : tensor<i32>
    %2 = stablehlo.multiply %x, %x : tensor<f32>
    %3 = stablehlo.cosine %2 : tensor<f32>
    stablehlo.return %1, %3 : tensor<i32>, tensor<f32>
  }
  return %0#0, %0#1 : tensor<i32>, tensor<f32>
}
