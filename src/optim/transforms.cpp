// The gradient transforms of transforms.h.
#include "optim/transforms.h"

#include <algorithm>

#include "optim/rule.h"

namespace netspec::optim {

GradientTransform freeze(std::vector<std::string> prefixes) {
  return {"freeze", [prefixes = std::move(prefixes)](hlo::Builder&, std::vector<ParamStep>& ps) {
            for (ParamStep& s : ps) s.frozen = s.frozen || is_frozen(s.desc->name, prefixes);
          }};
}

GradientTransform clip_by_global_norm(double max_norm) {
  return {"clip_by_global_norm", [max_norm](hlo::Builder& b, std::vector<ParamStep>& ps) {
            if (ps.empty()) return;
            Value* total = nullptr;
            for (const ParamStep& s : ps)
              if (!s.frozen) total = total ? b.add(total, sum_sq(b, s.g)) : sum_sq(b, s.g);
            if (!total) total = b.scalar(0, ps[0].g->type.dtype());
            Value* norm = b.sqrt(total);
            Value* coef = b.divide(splat(b, max_norm, norm), b.add(norm, splat(b, 1e-6, norm)));
            coef = b.minimum(coef, splat(b, 1, coef));
            for (ParamStep& s : ps) s.g = b.multiply(s.g, bcast(b, coef, s.g));
          }};
}

GradientTransform decay_mask(double weight_decay, bool only_marked) {
  return {"decay_mask", [weight_decay, only_marked](hlo::Builder&, std::vector<ParamStep>& ps) {
            for (ParamStep& s : ps) s.decay = !only_marked || s.desc->decay ? weight_decay : 0.0;
          }};
}

GradientTransform head_lr(double mult) {
  return {"head_lr", [mult](hlo::Builder&, std::vector<ParamStep>& ps) {
            int head = -1;
            for (const ParamStep& s : ps) head = std::max(head, s.desc->layer);
            for (ParamStep& s : ps)
              if (s.desc->layer == head) s.lr_mult *= mult;
          }};
}

Chain default_chain(const OptimConfig& c) {
  Chain chain;
  if (!c.freeze.empty()) chain.push_back(freeze(c.freeze));
  if (c.grad_clip_norm > 0) chain.push_back(clip_by_global_norm(c.grad_clip_norm));
  if (c.weight_decay != 0) chain.push_back(decay_mask(c.weight_decay, c.wd_exclude_norm_bias));
  if (c.head_lr_mult != 1) chain.push_back(head_lr(c.head_lr_mult));
  return chain;
}

void run_chain(hlo::Builder& b, const Chain& chain, std::vector<ParamStep>& ps) {
  for (const GradientTransform& t : chain) t.apply(b, ps);
}

}  // namespace netspec::optim
