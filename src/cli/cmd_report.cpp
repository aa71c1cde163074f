// `netspec report RUN_DIR [--data DIR] [--split val|test] [--limit N] [-o FILE] [--data-memory MB]
// [--data-threads N] [--no-dct-scale] [--skip-bad-images]`: writes RUN_DIR/report.html, one
// self-contained page (viz/report_page.h): config, net summary, curves, the task's evaluation
// sections (classification: confusion matrix, per-class accuracy, most confidently wrong images,
// Grad-CAM; segmentation: mIoU, Dice, per-class IoU, image | truth | prediction panels, worst-IoU
// images; detection: mAP overall and per class, box panels), timings. The data location, --limit
// and --val-split hold-out come from RUN_DIR/config.json, as for `eval`; image folders over the
// data memory budget stream (every section reads the split through the Loader or, for its few
// pictures, the split's SampleSource; --skip-bad-images leaves unreadable samples out).
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/pipeline_flags.h"
#include "cli/run_target.h"
#include "core/error.h"
#include "layers/param_table.h"
#include "report/progress.h"
#include "viz/report_page.h"

namespace netspec::cli {
namespace {

struct ReportArgs {
  viz::ReportOptions page;
  std::string data, split;
  int64_t limit = 0;
  PipelineFlags pipeline;  // image folders over --data-memory stream (pipeline_flags.h)
};

// The run's evaluation split (load_eval_split); --limit N keeps N samples evenly strided over it
// (sample floor((2i + 1)·n / 2N), as image folders' --limit does). A load failure is shown on
// the page rather than stopping the report.
viz::ReportData report_data(const ReportArgs& a, const RunTarget& t) {
  viz::ReportData d;
  try {
    const ParamTable table = build_param_table(t.spec.net);
    EvalSplit e = load_eval_split("report", t, *t.spec.train, table, a.data, a.split);
    d.splits = std::move(e.data);
    if (d.splits.text && !table.input.empty())  // ids as the run's vocabulary spells them
      remap_to_run_vocab(d.splits, t.run_dir, static_cast<int>(table.input[0]));
    d.what = std::move(e.what);
    if (!d.splits.pipeline.empty()) std::cout << d.splits.pipeline << "\n";
    const int64_t n = d.splits.test.size();
    if (a.limit > 0 && a.limit < n && !d.splits.text && !d.splits.det) {
      std::vector<int64_t> rows;
      for (int64_t i = 0; i < a.limit; ++i) rows.push_back((2 * i + 1) * n / (2 * a.limit));
      d.splits.test = data::take_rows(d.splits.test, rows);
      d.what += fmt::format(", {} of them evenly strided (--limit)", a.limit);
    } else if (a.limit > 0 && d.splits.det) {
      d.what += " (--limit is not applied to detection splits)";
    }
  } catch (const Error& e) {
    d.error = e.what();
  }
  return d;
}

void register_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  viz::ReportOptions& o = a->page;
  CLI::App* cmd =
      app.add_subcommand("report", "Write RUN_DIR/report.html: curves, confusion, Grad-CAM, ...");
  cmd->add_option("run_dir", o.run_dir, "a run directory of `netspec train`")->required();
  cmd->add_option("--data", a->data, "dataset directory (default: the run's --data)");
  cmd->add_option("--split", a->split,
                  "val (the run's --val-split hold-out) or test (default: val for a run trained "
                  "with --val-split, else test)");
  cmd->add_option("--limit", a->limit, "evaluate on N samples (evenly strided; 0: all)");
  cmd->add_option("--wrong", o.wrong, "most confidently wrong images shown")->capture_default_str();
  cmd->add_option("--cam", o.cam, "Grad-CAM samples shown")->capture_default_str();
  cmd->add_option("--panels", o.panels,
                  "segmentation / detection: images in each picture section (samples, worst "
                  "IoU, boxes)")
      ->capture_default_str();
  cmd->add_option("--tokens", o.tokens, "text: characters generated per sample")
      ->capture_default_str();
  cmd->add_option("-o,--out", o.out, "output file (default: RUN_DIR/report.html)");
  cmd->add_option("--backend", o.backend, "executor (cpu, ref, ...)")->capture_default_str();
  a->pipeline.add(cmd);
  cmd->callback([a, cmd] {
    if (!std::filesystem::is_directory(a->page.run_dir))
      fail("report", "{}: no such run directory (give a run dir of `netspec train`)",
           a->page.run_dir);
    const RunTarget t = resolve_run_target("report", a->page.run_dir, "");  // not a run: exit 2
    a->pipeline.apply(cmd, "report");
    a->page.log = &std::cout;
    a->page.tty = report::is_terminal(STDOUT_FILENO);
    const viz::ReportData data = report_data(*a, t);  // prints the data line first
    // The page's own lines (progress, a failed section) come before "wrote".
    const std::string page = viz::write_report(a->page, data);
    std::cout << "wrote " << page << "\n";
  });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(report, register_report_command)
}  // namespace netspec::cli
