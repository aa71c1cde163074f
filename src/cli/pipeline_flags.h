// The data-pipeline flags every command that reads a dataset split through the Loader shares
// (train, eval, report, cam --samples): --data-memory MB, --data-threads N, --no-dct-scale and
// --skip-bad-images. Image folders and packs whose decoded size is over the budget then stream
// from disk (data/sample_source.h); the command prints the one-line choice.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace netspec::cli {

struct PipelineFlags {
  std::string memory_mb, threads;
  // Adds the flags to cmd (train: --skip-bad-images's help names both of its splits).
  void add(CLI::App* cmd, bool train = false);
  // Checks the values given (number_flag, naming `where`), sets data::pipeline_options() and
  // allows streaming for this command.
  void apply(CLI::App* cmd, std::string_view where) const;
};

}  // namespace netspec::cli
