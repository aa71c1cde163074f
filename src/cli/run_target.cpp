// Runs as eval/predict targets (see run_target.h).
#include "cli/run_target.h"

#include <filesystem>

#include "core/error.h"
#include "data/text.h"
#include "spec/zoo.h"

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
