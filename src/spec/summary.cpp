// Summary table (see summary.h).
#include "spec/summary.h"

#include <fmt/format.h>

#include "core/checked.h"

namespace netspec {

std::string group_digits(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  if (v < 0) out.insert(out.begin(), '-');
  return out;
}

namespace {
std::string shape_with_batch(const Shape& s, int batch) {
  std::string out = batch > 0 ? std::to_string(batch) : "";
  for (int64_t d : s) {
    if (!out.empty()) out += 'x';
    out += std::to_string(d);
  }
  return out;
}
}  // namespace

std::string format_summary(const NetSpec& net, const ParamTable& t, int batch) {
  int b = batch > 0 ? batch : 1;
  std::string out =
      fmt::format("net {}  input {}  batch {}\n", net.name, shape_with_batch(t.input, batch), b);
  out += fmt::format("{:>4}  {:<20} {:<18} {:>14} {:>18}\n", "#", "layer", "output", "params",
                     "FLOPs");
  for (const auto& l : t.layers)
    out += fmt::format("{:>4}  {:<20} {:<18} {:>14} {:>18}\n", l.index, l.kind,
                       shape_with_batch(l.out, batch), group_digits(l.params),
                       group_digits(checked_mul(l.flops, b, "flops")));
  // FLOPs count 2 per multiply-add; torchvision and timm quote MACs (1) under the name "FLOPs".
  out += fmt::format(
      "total params {} ({} tensors)  FLOPs {} ({:.3f} GFLOPs per sample)  MACs {} "
      "({:.3f} GMACs per sample, torchvision's \"GFLOPS\")\n",
      group_digits(t.total_params()), t.params.size(),
      group_digits(checked_mul(t.total_flops(), b, "flops")), t.total_flops() / 1e9,
      group_digits(checked_mul(t.total_flops() / 2, b, "macs")), t.total_flops() / 2e9);
  out += fmt::format("BN layers {}  output {}\n", t.bns.size(), shape_with_batch(t.output, batch));
  return out;
}

}  // namespace netspec
