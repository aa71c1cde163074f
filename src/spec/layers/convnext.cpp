// ConvNeXt (torchvision): convNextStem (patchify conv + LayerNorm2d), convNextStage (CNBlocks:
// dw 7x7 -> norm -> Linear 4x -> act -> Linear -> layer scale, residual) and
// convNextDownsample (norm + 2x2/2 conv). norm = bn swaps LayerNorm2d for BatchNorm2d.
#include "spec/layers/account.h"

namespace netspec::acct {
namespace {
void norm(Ctx& c, const std::string& name, Norm n, int64_t ch) {
  if (n == Norm::ln)
    c.ln(name, ch);
  else
    c.bn(name, ch);
}
}  // namespace

void account(const ConvNextStem& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("patch", l.patch);
  Fm x = c.image(l.ic);
  c.check(x.h % l.patch == 0 && x.w % l.patch == 0,
          "patch does not divide the image (got {}x{}, patch {})", x.h, x.w, l.patch);
  Fm y = c.conv("0", x, l.oc, l.patch, l.patch, 1, true, Padding::valid);
  c.ln("1", l.oc);
  c.out = y.shape();
}

// Parameter order as torchvision's CNBlock: layer_scale [ch, 1, 1] (init 1e-6) first, then
// block.0 (dw conv, bias), block.2 (norm), block.3 / block.5 (Linear ch <-> 4ch).
void account(const ConvNextStage& l, Ctx& c) {
  c.positive("ch", l.ch);
  c.positive("nBlocks", l.nBlocks);
  Fm x = c.image(l.ch);
  int64_t hw = x.h * x.w;
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("{}", b));
    c.param("layer_scale", {l.ch, 1, 1}, ParamInit::layerScale, false);
    c.conv("block.0", x, l.ch, 7, 1, l.ch, true);
    norm(c, "block.2", l.norm, l.ch);
    c.linear("block.3", l.ch, 4 * int64_t{l.ch}, true, hw);
    c.linear("block.5", 4 * int64_t{l.ch}, l.ch, true, hw);
  }
  c.out = x.shape();
}

void account(const ConvNextDownsample& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  Fm x = c.image(l.ic);
  c.check(x.h % 2 == 0 && x.w % 2 == 0, "needs an even feature map (got {}x{})", x.h, x.w);
  norm(c, "0", l.norm, l.ic);
  Fm y = c.conv("1", x, l.oc, 2, 2, 1, true, Padding::valid);
  c.out = y.shape();
}

}  // namespace netspec::acct
