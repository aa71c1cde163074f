// Text generation from a trained token model's run directory, one token per run of the eval
// module at batch 1 (no KV cache): the window is the last T tokens; a shorter context is padded
// after its end when every attention is causal (later positions cannot change earlier logits:
// exact), else before its start with id 0. `netspec generate` and the text run's report use it.
#pragma once
#include <cstdint>
#include <string>

namespace netspec::tasks {

struct GenerateOptions {
  std::string run_dir, prompt, backend = "cpu";
  int64_t tokens = 100;
  double temperature = 1.0;  // 0: greedy
  int64_t top_k = 0;         // 0: all
  uint64_t seed = 0;
};
// The run's spec (RUN_DIR/config.json "spec", or RUN_DIR/spec.json), last checkpoint and
// vocabulary (RUN_DIR/vocab.json); returns the `tokens` characters drawn after the prompt.
// Errors are `[generate] ...`.
std::string generate_text(const GenerateOptions& a);

}  // namespace netspec::tasks
