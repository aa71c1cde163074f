// Attention / RoPE probe modules (see probes.h).
#include "emit/probes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autodiff/vjp.h"
#include "core/error.h"
#include "emit/signature.h"
#include "hlo/passes.h"
#include "layers/attention.h"

namespace netspec::emit {

namespace {

constexpr const char* kProbes[] = {"flash",      "dense",      "rope",
                                   "flash-grad", "dense-grad", "rope-grad"};

}  // namespace

std::string attention_probe_choices() { return fmt::format("{}", fmt::join(kProbes, "|")); }

Emitted emit_attention_probe(const AttentionProbe& p) {
  const std::string& kind = p.probe;
  bool known = false;
  for (const char* k : kProbes) known = known || kind == k;
  if (!known)
    fail("probe-attention", "unknown probe '{}' (expected one of {})", kind,
         attention_probe_choices());
  if (p.batch < 1 || p.heads < 1 || p.seq < 1 || p.head_dim < 1)
    fail("probe-attention", "sizes must be >= 1 (got batch {}, heads {}, seq {}, head dim {})",
         p.batch, p.heads, p.seq, p.head_dim);
  if (!is_float(p.dtype) || p.dtype == DType::kF16 || p.dtype == DType::kBF16)
    fail("probe-attention", "dtype must be f32 or f64 (got {})", dtype_name(p.dtype));
  int64_t block = p.block > 0 ? p.block : layers::flash_block(p.seq);
  bool rope = kind.starts_with("rope");
  bool grad = kind.ends_with("-grad");

  hlo::Type t = hlo::Type::tensor(p.dtype, {p.batch, p.heads, p.seq, p.head_dim});
  Emitted e;
  e.module = std::make_unique<hlo::Module>();
  size_t nargs = rope ? 1 : 3;
  // The function under test; the -grad probes make @main its VJP w.r.t. every input.
  hlo::Func* f = e.module->add_func(grad ? "probe" : "main", std::vector<hlo::Type>(nargs, t));
  hlo::Builder b(f->body.get());
  std::vector<hlo::Value*> a;
  for (size_t i = 0; i < nargs; ++i) a.push_back(f->arg(i));
  hlo::Value* y;
  if (rope)
    y = layers::apply_rope(b, a[0]);
  else if (kind.starts_with("dense"))
    y = layers::dense_attention(b, a[0], a[1], a[2], p.causal);
  else
    y = layers::flash_attention_lse(b, a[0], a[1], a[2], p.causal, block)[0];
  b.func_return({y});
  if (grad) {
    autodiff::VjpOptions vo;
    vo.name = "main";
    std::vector<size_t> wrt;
    for (size_t i = 0; i < nargs; ++i) wrt.push_back(i);
    autodiff::vjp(*f, wrt, vo);
    f->is_public = false;
  }
  hlo::run_cleanup(*e.module);

  Manifest& m = e.manifest;
  m.module = "probe-attention";
  m.net = kind + (rope || !p.causal ? "" : " causal") +
          (kind.starts_with("flash") ? fmt::format(" block {}", block) : "");
  m.batch = p.batch;
  std::vector<std::string> names =
      rope ? std::vector<std::string>{"x"} : std::vector<std::string>{"q", "k", "v"};
  for (const auto& n : names) m.inputs.push_back(tensor_info(n, t, "input"));
  std::string out = rope ? "y" : "o";
  if (grad) m.inputs.push_back(tensor_info("d" + out, t, "cotangent"));
  m.outputs.push_back(tensor_info(out, t, "output"));
  if (grad)
    for (const auto& n : names) m.outputs.push_back(tensor_info("d" + n, t, "gradient"));
  return e;
}

}  // namespace netspec::emit
