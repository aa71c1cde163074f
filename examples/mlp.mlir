// A tiny 2-4-3 MLP forward pass with constant weights: relu(x W1 + b1) W2 + b2.
// Run: build/netspec run examples/mlp.mlir   (x is built in, so no --input is needed)
module @tiny_mlp {
  func.func public @main() -> tensor<2x3xf32> {
    %x = stablehlo.constant dense<[[1.0, 2.0], [-1.0, 0.5]]> : tensor<2x2xf32>
    %w1 = stablehlo.constant dense<[[0.5, -1.0, 0.25, 1.0], [1.0, 0.5, -0.5, 0.0]]> : tensor<2x4xf32>
    %b1 = stablehlo.constant dense<[0.1, 0.2, 0.3, -0.4]> : tensor<4xf32>
    %w2 = stablehlo.constant dense<[[1.0, 0.0, -1.0], [0.0, 1.0, 0.5], [2.0, -1.0, 0.0], [0.5, 0.5, 0.5]]> : tensor<4x3xf32>
    %b2 = stablehlo.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
    %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<2x4xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<2x4xf32>
    %3 = stablehlo.maximum %2, %zero : tensor<2x4xf32>
    %4 = stablehlo.dot_general %3, %w2, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %5 = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %6 = stablehlo.add %4, %5 : tensor<2x3xf32>
    return %6 : tensor<2x3xf32>
  }
}
