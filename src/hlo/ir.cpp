#include "hlo/ir.h"

#include <array>

namespace netspec::hlo {
namespace {

struct OpInfo {
  std::string_view name;
  std::string_view family;
};

constexpr std::array<OpInfo, kNumOpKinds> kOpTable{{
#define X(e, name, family) {name, #family},
#include "hlo/ops.def"
#undef X
}};

}  // namespace

std::string_view op_name(OpKind k) { return kOpTable[static_cast<size_t>(k)].name; }
std::string_view op_family(OpKind k) { return kOpTable[static_cast<size_t>(k)].family; }
std::string_view op_mnemonic(OpKind k) {
  std::string_view n = op_name(k);
  return n.substr(n.find('.') + 1);
}
std::optional<OpKind> op_kind_from_name(std::string_view full_name) {
  for (size_t i = 0; i < kNumOpKinds; ++i)
    if (kOpTable[i].name == full_name) return static_cast<OpKind>(i);
  return std::nullopt;
}

Value* Block::add_arg(Type t) {
  auto v = std::make_unique<Value>();
  v->type = std::move(t);
  v->block = this;
  v->index = static_cast<int>(args.size());
  args.push_back(std::move(v));
  return args.back().get();
}

std::vector<Type> Block::arg_types() const {
  std::vector<Type> ts;
  for (const auto& a : args) ts.push_back(a->type);
  return ts;
}

Op* Block::terminator() const {
  if (ops.empty()) return nullptr;
  Op* last = ops.back().get();
  return (last->kind == OpKind::kReturn || last->kind == OpKind::kFuncReturn) ? last : nullptr;
}

Func* Block::func() const {
  const Block* b = this;
  while (b->parent_op) b = b->parent_op->parent;
  return b->parent_func;
}

std::vector<Type> Op::operand_types() const {
  std::vector<Type> ts;
  for (auto* v : operands) ts.push_back(v->type);
  return ts;
}

std::vector<Type> Op::result_types() const {
  std::vector<Type> ts;
  for (const auto& v : results) ts.push_back(v->type);
  return ts;
}

Func* Op::func() const { return parent ? parent->func() : nullptr; }
Module* Op::module() const {
  Func* f = func();
  return f ? f->module : nullptr;
}

Func::Func() : body(std::make_unique<Block>()) { body->parent_func = this; }

Func* Module::add_func(const std::string& fname, const std::vector<Type>& arg_types, bool pub) {
  auto f = std::make_unique<Func>();
  f->name = fname;
  f->is_public = pub;
  f->module = this;
  for (const auto& t : arg_types) f->body->add_arg(t);
  index_.try_emplace(fname, funcs.size());  // the first of equal names, as the scan finds
  funcs.push_back(std::move(f));
  return funcs.back().get();
}

Func* Module::find(std::string_view fname) const {
  if (auto it = index_.find(std::string(fname)); it != index_.end()) {
    const size_t i = it->second;
    // Valid when no function before it has the name (names are unique in a verified module).
    if (i < funcs.size() && funcs[i]->name == fname) return funcs[i].get();
  }
  for (const auto& f : funcs)
    if (f->name == fname) return f.get();
  return nullptr;
}

Func* Module::entry(std::string_view requested) const {
  if (!requested.empty()) {
    if (Func* f = find(requested)) return f;
    std::string names;
    for (const auto& f : funcs) names += (names.empty() ? "" : ", ") + f->name;
    fail("entry", "no function named '{}' (module has: {})", requested, names);
  }
  if (Func* f = find("main")) return f;
  Func* only = nullptr;
  int n_public = 0;
  for (const auto& f : funcs)
    if (f->is_public) {
      only = f.get();
      ++n_public;
    }
  if (n_public == 1) return only;
  fail("entry", "no 'main' and {} public functions; pass --entry NAME", n_public);
}

}  // namespace netspec::hlo
