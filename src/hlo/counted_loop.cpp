// Counted loops (see passes.h): a while whose trip count is static, and its states that the
// loop overwrites whole, a row a turn, before anything reads them.
#include "hlo/passes.h"

namespace netspec::hlo {

std::optional<double> constant_scalar(const Value* v) {
  if (!v->def || v->def->kind != OpKind::kConstant) return std::nullopt;
  const Tensor& t = v->def->attrs.get<DenseAttr>("value").value;
  if (t.numel() != 1) return std::nullopt;
  return t.as_double(0);
}

namespace {

int uses_in(const Block& b, const Value* v) {
  int n = 0;
  walk(b, [&](const Op& op) {
    for (const Value* o : op.operands) n += o == v;
  });
  return n;
}

}  // namespace

std::optional<CountedLoop> counted_loop(const Op& w) {
  if (w.kind != OpKind::kWhile || w.regions.size() != 2) return std::nullopt;
  const Block &cond = *w.region(0), &body = *w.region(1);
  if (!cond.terminator() || !body.terminator()) return std::nullopt;
  const Value* p = cond.terminator()->operand(0);
  if (!p->def || p->def->kind != OpKind::kCompare ||
      p->def->attrs.get_enum("comparison_direction") != "LT" ||
      !p->def->operand(0)->is_block_arg() || p->def->operand(0)->block != &cond)
    return std::nullopt;
  const size_t k = static_cast<size_t>(p->def->operand(0)->index);
  auto n = constant_scalar(p->def->operand(1));
  auto c0 = constant_scalar(w.operand(k));
  const Value* next = body.terminator()->operand(k);
  if (!n || !c0 || !next->def || next->def->kind != OpKind::kAdd) return std::nullopt;
  const Op& add = *next->def;
  bool inc = (add.operand(0) == body.arg(k) && constant_scalar(add.operand(1)) == 1.0) ||
             (add.operand(1) == body.arg(k) && constant_scalar(add.operand(0)) == 1.0);
  if (!inc) return std::nullopt;
  return CountedLoop{k, static_cast<int64_t>(*c0),
                     std::max<int64_t>(0, static_cast<int64_t>(*n - *c0))};
}

bool state_written_whole_unread(const Op& w, size_t k) {
  const auto loop = counted_loop(w);
  if (!loop || loop->counter == k || loop->start != 0 || loop->trips < 1 || k >= w.operands.size())
    return false;
  const Block &cond = *w.region(0), &body = *w.region(1);
  const Type& t = w.operand(k)->type;
  if (!t.is_tensor() || t.rank() < 1 || t.dim(0) != loop->trips) return false;
  if (uses_in(cond, cond.arg(k)) != 0 || uses_in(body, body.arg(k)) != 1) return false;
  const Value* next = body.terminator()->operand(k);
  const Op* dus = next->def;
  // result k = dynamic_update_slice(arg k, row, counter, 0, ...), read by nothing else
  if (!dus || dus->kind != OpKind::kDynamicUpdateSlice || dus->parent != &body ||
      dus->operand(0) != body.arg(k) || uses_in(body, next) != 1 ||
      dus->operands.size() != 2 + static_cast<size_t>(t.rank()) ||
      dus->operand(2) != body.arg(loop->counter))
    return false;
  const Type& row = dus->operand(1)->type;
  if (row.dim(0) != 1) return false;
  for (int64_t d = 1; d < t.rank(); ++d)
    if (row.dim(d) != t.dim(d) || constant_scalar(dus->operand(2 + static_cast<size_t>(d))) != 0.0)
      return false;
  return true;
}

}  // namespace netspec::hlo
