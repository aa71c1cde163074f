// Runs as eval/predict/report targets and the split they score (see run_target.h).
#include "cli/run_target.h"

#include <filesystem>

#include "cli/train_run.h"
#include "core/error.h"
#include "data/sample_source.h"
#include "data/text.h"
#include "spec/zoo.h"
#include "train/config.h"

namespace netspec::cli {
namespace fs = std::filesystem;

RunTarget resolve_run_target(const std::string& where, const std::string& net_arg,
                             const std::string& checkpoint) {
  RunTarget t;
  fs::path cfg;
  if (fs::is_directory(net_arg))
    cfg = fs::path(net_arg) / "config.json";
  else if (train::is_run_record(net_arg))
    cfg = net_arg;
  if (cfg.empty()) {
    t.spec = resolve_net(net_arg);
    if (!t.spec.train) t.spec.train = TrainConfig{};
    t.checkpoint = checkpoint;
    if (t.checkpoint.empty())
      fail(where, "--checkpoint is needed with a net ('{}'); or name a run dir instead", net_arg);
    return t;
  }
  if (!fs::exists(cfg)) fail(where, "{}: not a run dir (no config.json)", net_arg);
  t.run = train::load_run_record(cfg.string());
  t.spec = t.run->spec;
  t.run_dir = cfg.parent_path().string();
  if (t.run_dir.empty()) t.run_dir = ".";
  t.class_names = train::load_class_names(t.run_dir);
  t.checkpoint = checkpoint;
  for (const char* f : {"best.safetensors", "last.safetensors"})
    if (t.checkpoint.empty() && fs::exists(fs::path(t.run_dir) / f))
      t.checkpoint = (fs::path(t.run_dir) / f).string();
  if (t.checkpoint.empty())
    fail(where, "{}: the run has no best.safetensors or last.safetensors yet", t.run_dir);
  return t;
}

EvalSplit load_eval_split(const std::string& where, const RunTarget& t, const TrainConfig& c,
                          const ParamTable& table, const std::string& data_flag,
                          const std::string& split) {
  const double f = t.run ? t.run->val_split : 0;
  const std::string s = !split.empty() ? split : f > 0 ? "val" : "test";
  if (s != "val" && s != "test") fail(where, "--split {}: unknown (expected val or test)", s);
  if (s == "val" && f <= 0)
    fail(where, "--split val: {} was trained without --val-split (no validation split held out)",
         t.run_dir.empty() ? "the net" : t.run_dir);
  const std::string dir = !data_flag.empty() ? data_flag : t.run ? t.run->data : "";
  EvalSplit e;
  // Scored at the net's size: a randomResizedCrop run's training split needs no whole images
  // (its held-out rows read as the run's validation did: the centre crop at ratio 1). Scoring
  // the test split, image folders only list the training split (never decoded).
  TrainConfig lc = c;
  lc.randomResizedCrop = false;
  data::PipelineOptions& p = data::pipeline_options();
  const bool unread = p.train_unread;
  p.train_unread = s == "test";
  try {
    // The run's --limit: the same training samples (the held-out rows are drawn from them).
    e.data = train::load_for_net(lc, table, dir, t.run ? t.run->limit : 0);
  } catch (...) {
    p.train_unread = unread;
    throw;
  }
  p.train_unread = unread;
  if (s == "val") {
    hold_out_validation(e.data, f, c.seed, where);
    e.what = fmt::format("the validation split held out by --val-split {} ({} samples)", f,
                         e.data.test.size());
    return e;
  }
  // A dataset without a test split (a flat image folder, a CSV table) loads an empty one.
  if (e.data.test.size() == 0)
    fail(where, "{} has no test split (got 0 samples){}",
         dir.empty() ? std::string(enum_name(c.dataset)) : dir,
         f > 0 ? "; the run's validation split is --split val" : "");
  e.what = fmt::format("the test split ({} samples)", e.data.test.size());
  return e;
}

void remap_to_run_vocab(data::Splits& s, const std::string& run_dir, int seq_len) {
  const fs::path p = fs::path(run_dir) / "vocab.json";
  if (!s.text || run_dir.empty() || !fs::exists(p)) return;
  data::Vocab run = data::load_vocab(p.string());
  auto c = std::make_shared<data::TextCorpus>(*s.text);
  for (auto* ids : {&c->train, &c->val})
    for (int32_t& id : *ids) {
      const char32_t ch = s.text->vocab.chars.at(static_cast<size_t>(id));
      id = run.id(ch);
      if (id < 0)
        fail("eval", "{}: the text holds '{}' (U+{:04X}), a character the run was not trained on",
             p.string(), data::encode_utf8(std::u32string(1, ch)), static_cast<uint32_t>(ch));
    }
  c->vocab = run;
  s.test = data::text_windows(*c, false, seq_len, 0, 0);
  s.train = data::text_windows(*c, true, seq_len, 0, 0);
  s.text = std::move(c);
}

}  // namespace netspec::cli
