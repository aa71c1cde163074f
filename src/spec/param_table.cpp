// ParamTable totals and the class-count field of a net (the table itself is built by the layer
// bodies: layers/param_table.h).
#include "spec/param_table.h"

#include "core/checked.h"
#include "core/error.h"

namespace netspec {

int64_t ParamTable::total_params() const {
  int64_t n = 0;
  for (const auto& p : params) n = checked_add(n, p.numel(), "params");
  return n;
}

int64_t ParamTable::total_flops() const {
  int64_t n = 0;
  for (const auto& l : layers) n = checked_add(n, l.flops, "flops");
  return n;
}

namespace {
// Pointer to the class-count field of a layer, or nullptr.
int* class_field(Layer& l) {
  if (auto* d = std::get_if<Dense>(&l)) return &d->out;
  if (auto* c = std::get_if<Conv2d>(&l)) return &c->oc;
  if (auto* h = std::get_if<DetrHeads>(&l)) return &h->nClasses;
  return nullptr;
}
}  // namespace

void set_num_classes(NetSpec& net, int classes) {
  if (classes < 1) fail("classes", "must be >= 1 (got {})", classes);
  for (auto it = net.layers.rbegin(); it != net.layers.rend(); ++it)
    if (int* f = class_field(*it)) {
      *f = classes;
      return;
    }
  fail("net " + net.name, "has no classifier layer (dense, conv2d or detrHeads) to resize");
}

int num_classes(const NetSpec& net) {
  NetSpec copy = net;
  for (auto it = copy.layers.rbegin(); it != copy.layers.rend(); ++it)
    if (int* f = class_field(*it)) return *f;
  return -1;
}

}  // namespace netspec
