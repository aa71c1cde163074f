// The shared data-pipeline flags (see pipeline_flags.h).
#include "cli/pipeline_flags.h"

#include "cli/train_flags.h"
#include "data/sample_source.h"

namespace netspec::cli {

void PipelineFlags::add(CLI::App* cmd, bool train) {
  cmd->add_option("--data-memory", memory_mb,
                  "MiB of decoded images to hold in RAM; image folders larger stream from disk "
                  "(default: a quarter of RAM; 0: always stream)");
  cmd->add_option("--data-threads", threads,
                  "decode threads of a streamed image folder (default: the cores less one)");
  cmd->add_flag("--skip-bad-images")
      ->description(
          train ? "a streamed training image that cannot be read is replaced by the next sample "
                  "of the epoch's order, a streamed test image left out of the scores; both "
                  "counted (default: the run stops, naming the file)"
                : "a streamed image that cannot be read is left out of the scores and counted "
                  "(default: the command stops, naming the file)");
  cmd->add_flag("--no-dct-scale")
      ->description(
          "decode streamed JPEGs at full resolution (else at 1/2, 1/4, 1/8 where the view keeps "
          "its resolution; streamed batches then equal in-RAM ones bit for bit)");
}

void PipelineFlags::apply(CLI::App* cmd, std::string_view where) const {
  data::PipelineOptions& p = data::pipeline_options();
  p.stream_allowed = true;
  if (cmd->count("--data-memory"))
    p.memory_mb = static_cast<int64_t>(number_flag(where, "--data-memory", memory_mb, 0, 1e12));
  if (cmd->count("--data-threads"))
    p.threads = static_cast<int>(number_flag(where, "--data-threads", threads, 1, 1024));
  if (cmd->count("--no-dct-scale")) p.dct_scale = false;
  p.skip_bad = cmd->count("--skip-bad-images") > 0;
}

}  // namespace netspec::cli
