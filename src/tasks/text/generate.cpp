// Text generation (see generate.h).
#include "tasks/text/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "core/error.h"
#include "core/file_check.h"
#include "core/json_strict.h"
#include "core/safetensors.h"
#include "data/text.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "layers/lower.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"

namespace netspec::tasks {
namespace {

namespace fs = std::filesystem;

SpecFile load_run_spec(const fs::path& dir) {
  if (fs::exists(dir / "config.json")) {
    // Strict: a duplicate key is refused with its line:col, never last-wins.
    const std::string path = (dir / "config.json").string();
    auto cfg = parse_json_strict<nlohmann::json>(read_regular_file("generate", path), path);
    if (!cfg.contains("spec"))
      fail("generate", "{}: no \"spec\" object", (dir / "config.json").string());
    return parse_spec(cfg["spec"].dump(), (dir / "config.json").string());
  }
  if (fs::exists(dir / "spec.json")) return load_spec_file((dir / "spec.json").string());
  fail("generate", "{}: no config.json or spec.json (not a run directory?)", dir.string());
}

// Padding after the context is exact when no layer lets a position see later ones.
bool causal_only(const NetSpec& net) {
  for (const Layer& l : net.layers)
    if (auto* f = layers::traits(l).non_causal; f && f(l)) return false;
  return true;
}

// Samples an id in [0, n) from logits (temperature 0 = argmax; top_k 0 = all).
int32_t sample(std::vector<double> z, double temperature, int64_t top_k, std::mt19937_64& rng) {
  int64_t n = static_cast<int64_t>(z.size());
  std::vector<int32_t> order(z.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return z[a] > z[b]; });
  if (temperature <= 0) return order[0];
  int64_t k = top_k > 0 ? std::min(top_k, n) : n;
  // p_i ∝ exp((z_i - max)/T) over the k largest
  std::vector<double> p(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) p[i] = std::exp((z[order[i]] - z[order[0]]) / temperature);
  double u =
      std::uniform_real_distribution<double>(0, 1)(rng) * std::accumulate(p.begin(), p.end(), 0.0);
  for (int64_t i = 0; i < k; ++i) {
    if (u < p[i]) return order[i];
    u -= p[i];
  }
  return order[k - 1];
}

}  // namespace

std::string generate_text(const GenerateOptions& a) {
  fs::path dir = a.run_dir;
  if (!fs::is_directory(dir)) fail("generate", "'{}' is not a directory", a.run_dir);
  if (a.tokens < 0) fail("generate", "--tokens must be >= 0 (got {})", a.tokens);
  if (a.top_k < 0) fail("generate", "--top-k must be >= 0 (got {})", a.top_k);
  if (!(a.temperature >= 0)) fail("generate", "--temperature must be >= 0 (got {})", a.temperature);
  SpecFile spec = load_run_spec(dir);
  const NetSpec& net = spec.net;
  const layers::LayerTraits* emb = net.layers.empty() ? nullptr : &layers::traits(net.layers[0]);
  if (!emb || !emb->ids_input || !emb->ids_input(net.layers[0]))
    fail("generate",
         "{}: not a token model (the first layer must be tokenPositionEmbed with "
         "idsInput)",
         net.name);
  const int64_t t = emb->seq_len(net.layers[0]), emb_vocab = emb->vocab(net.layers[0]);
  data::Vocab vocab = data::load_vocab((dir / "vocab.json").string());
  if (vocab.size() < 1 || vocab.size() > emb_vocab)
    fail("generate", "vocabulary of {} characters does not fit the model's {} token ids",
         vocab.size(), emb_vocab);
  std::vector<int32_t> ids = vocab.encode(a.prompt);
  if (ids.empty()) fail("generate", "--prompt must hold at least one character");

  emit::Emitted e = emit::emit_module(net, ModuleKind::eval, emit::EmitOptions{});
  fs::path ckpt = dir / "last.safetensors";
  if (!fs::exists(ckpt)) fail("generate", "no checkpoint '{}'", ckpt.string());
  SafeTensors st = read_safetensors(ckpt.string());
  std::vector<Tensor> inputs;
  size_t x_pos = SIZE_MAX;
  for (const auto& in : e.manifest.inputs) {
    if (in.role == "input") {
      x_pos = inputs.size();
      inputs.emplace_back(DType::kI32, in.shape);
      continue;
    }
    const Tensor& v = st.at(in.name);
    if (v.shape() != in.shape || v.dtype() != in.dtype)
      fail("generate", "{}: tensor {} is {} (expected {}[{}])", ckpt.string(), in.name,
           v.type_str(), dtype_name(in.dtype), fmt::join(in.shape, "x"));
    inputs.push_back(v);
  }
  if (x_pos == SIZE_MAX || inputs[x_pos].shape() != Shape{1, t})
    fail("generate", "the eval module has no token input i32[1, {}]", t);
  auto exe =
      exec::make_backend(a.backend)->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  const bool pad_after = causal_only(net);

  std::mt19937_64 rng(a.seed);
  std::vector<int32_t> out;
  for (int64_t step = 0; step < a.tokens; ++step) {
    // window: the last T ids; pos = where the next token's logits are read
    int64_t n = std::min<int64_t>(t, static_cast<int64_t>(ids.size()));
    int32_t* x = inputs[x_pos].data<int32_t>();
    std::fill(x, x + t, 0);
    int64_t off = pad_after ? 0 : t - n;
    std::copy(ids.end() - n, ids.end(), x + off);
    int64_t pos = off + n - 1;
    Tensor logits = exe->run("main", inputs).at(0);
    const Shape& ls = logits.shape();
    int64_t vs = ls.back();
    if (vs < vocab.size() || !((ls.size() == 3 && ls[1] == t) || ls.size() == 2))
      fail("generate", "logits {} are not [1, {}, >= {}] or [1, >= {}]", logits.type_str(), t,
           vocab.size(), vocab.size());
    int64_t base = ls.size() == 3 ? pos * vs : 0;
    std::vector<double> z(static_cast<size_t>(vocab.size()));  // only ids the vocabulary spells
    for (int64_t i = 0; i < vocab.size(); ++i) z[i] = logits.as_double(base + i);
    int32_t id = sample(std::move(z), a.temperature, a.top_k, rng);
    ids.push_back(id);
    out.push_back(id);
  }
  return vocab.decode(out);
}

}  // namespace netspec::tasks
