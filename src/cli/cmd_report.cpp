// `netspec report RUN_DIR [--data DIR] [--limit N] [-o FILE]`: writes RUN_DIR/report.html, one
// self-contained page (viz/report_page.h): config, net summary, curves, confusion matrix,
// per-class accuracy, most confidently wrong images, Grad-CAM, timings.
#include <iostream>

#include "cli/commands.h"
#include "viz/report_page.h"

namespace netspec::cli {
namespace {

void register_report_command(CLI::App& app) {
  auto o = std::make_shared<viz::ReportOptions>();
  CLI::App* cmd =
      app.add_subcommand("report", "Write RUN_DIR/report.html: curves, confusion, Grad-CAM, ...");
  cmd->add_option("run_dir", o->run_dir, "a run directory of `netspec train`")->required();
  cmd->add_option("--data", o->data_dir, "dataset directory (default: the dataset's default)");
  cmd->add_option("--limit", o->limit, "evaluate on N test samples (evenly strided; 0: all)");
  cmd->add_option("--wrong", o->wrong, "most confidently wrong images shown")
      ->capture_default_str();
  cmd->add_option("--cam", o->cam, "Grad-CAM samples shown")->capture_default_str();
  cmd->add_option("-o,--out", o->out, "output file (default: RUN_DIR/report.html)");
  cmd->add_option("--backend", o->backend, "executor (cpu, ref, ...)")->capture_default_str();
  cmd->callback([o] { std::cout << "wrote " << viz::write_report(*o) << "\n"; });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(report, register_report_command)
}  // namespace netspec::cli
