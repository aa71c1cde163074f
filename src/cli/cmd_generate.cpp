// `netspec generate RUN_DIR --prompt "..." --tokens N [--temperature T] [--top-k K] [--seed S]
// [--backend cpu|ref]`: samples text from a trained token model. Reads the run's spec
// (RUN_DIR/config.json "spec", as the trainer saves it, or RUN_DIR/spec.json), its last checkpoint
// (RUN_DIR/last.safetensors) and vocabulary (RUN_DIR/vocab.json), emits the eval module at batch 1
// and draws one token per run of it (no KV cache): the window is the last T tokens; a shorter
// context is padded after its end when every attention is causal (later positions cannot change
// earlier logits: exact), else before its start with id 0. Prints prompt + continuation.
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "tasks/text/generate.h"

namespace netspec::cli {
namespace {

void register_generate_command(CLI::App& app) {
  auto args = std::make_shared<tasks::GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "Sample text from a trained token model: RUN_DIR holds config.json (or spec.json), "
      "last.safetensors and vocab.json. Prints the prompt followed by N sampled characters.");
  cmd->add_option("run_dir", args->run_dir, "run directory of `netspec train`")->required();
  cmd->add_option("--prompt", args->prompt, "text to continue (vocabulary characters only)")
      ->required();
  cmd->add_option("--tokens", args->tokens, "characters to generate")->capture_default_str();
  cmd->add_option("--temperature", args->temperature, "softmax temperature (0 = greedy)")
      ->capture_default_str();
  cmd->add_option("--top-k", args->top_k, "sample among the K most likely (0 = all)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "random seed")->capture_default_str();
  cmd->add_option("--backend", args->backend, "executor: cpu or ref")->capture_default_str();
  cmd->callback([args] { fmt::print("{}{}\n", args->prompt, tasks::generate_text(*args)); });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(generate, register_generate_command)

}  // namespace netspec::cli
