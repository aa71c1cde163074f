// The reference interpreter loop: binds block arguments, runs each op's kernel in program order,
// and returns the terminator's operands. Tuples are handled here (see interpreter.h).
#include "exec/ref/interpreter.h"

#include <array>
#include <unordered_map>

#include "exec/ref/kernel_util.h"
#include "hlo/op_table.h"

namespace netspec::exec::ref {
namespace {

class BlockScope final : public Scope {
 public:
  explicit BlockScope(const Scope* parent) : Scope(parent) {}
  const Tensor* find_local(const hlo::Value* v) const override {
    auto it = vals_.find(v);
    return it == vals_.end() ? nullptr : &it->second;
  }
  void bind(const hlo::Value* v, Tensor t) { vals_[v] = std::move(t); }

  // Tuples: each element is either a tensor or another tuple value (by Value of origin).
  struct Tuple {
    std::vector<Tensor> tensors;
    std::vector<std::shared_ptr<Tuple>> tuples;  // non-null where element i is a tuple
  };
  std::unordered_map<const hlo::Value*, std::shared_ptr<Tuple>> tuples;

 private:
  std::unordered_map<const hlo::Value*, Tensor> vals_;
};

}  // namespace

const Kernel* kernel_table() {
  static const auto table = hlo::fill_op_table<Kernel>(
      {register_misc_kernels, register_unary_kernels, register_binary_kernels,
       register_shape_kernels, register_dot_conv_kernels, register_reduce_window_kernels,
       register_gather_sort_kernels, register_control_kernels, register_collective_kernels});
  return table.data();
}

bool run_by_block(hlo::OpKind k) {
  using K = hlo::OpKind;
  return k == K::kReturn || k == K::kFuncReturn || k == K::kTuple || k == K::kGetTupleElement;
}

Kernel kernel_for(hlo::OpKind k) { return kernel_table()[static_cast<size_t>(k)]; }

namespace {

// Enclosing BlockScopes of the current thread, innermost last (for tuple values).
thread_local std::vector<BlockScope*> t_block_stack;

std::shared_ptr<BlockScope::Tuple> find_tuple(const hlo::Value* v) {
  for (auto it = t_block_stack.rbegin(); it != t_block_stack.rend(); ++it) {
    auto f = (*it)->tuples.find(v);
    if (f != (*it)->tuples.end()) return f->second;
  }
  return nullptr;
}

const Tensor& lookup(const hlo::Op& op, const Scope& scope, const hlo::Value* v, size_t i) {
  if (const Tensor* t = scope.find(v)) return *t;
  if (v->type.is_tuple())
    fail(op_mnemonic(op.kind),
         "operand {} is a tuple; only get_tuple_element and return take tuples", i);
  fail(op_mnemonic(op.kind), "operand {} is not defined before use", i);
}

}  // namespace

std::vector<Tensor> run_block(const hlo::Block& block, const std::vector<Tensor>& args,
                              RunContext& ctx) {
  if (args.size() != block.args.size())
    fail("run_block", "block takes {} argument(s), got {}", block.args.size(), args.size());
  BlockScope scope(ctx.scope);
  for (size_t i = 0; i < args.size(); ++i) scope.bind(block.arg(i), args[i]);
  const Scope* saved = ctx.scope;
  ctx.scope = &scope;
  t_block_stack.push_back(&scope);
  struct Restore {
    RunContext& c;
    const Scope* s;
    ~Restore() {
      c.scope = s;
      t_block_stack.pop_back();
    }
  } restore{ctx, saved};

  for (const auto& up : block.ops) {
    const hlo::Op& op = *up;
    if (op.kind == hlo::OpKind::kReturn || op.kind == hlo::OpKind::kFuncReturn) {
      std::vector<Tensor> out;
      for (size_t i = 0; i < op.operands.size(); ++i)
        out.push_back(lookup(op, scope, op.operand(i), i));
      return out;
    }
    if (op.kind == hlo::OpKind::kTuple) {
      auto tup = std::make_shared<BlockScope::Tuple>();
      for (const hlo::Value* v : op.operands) {
        if (v->type.is_tuple()) {
          auto inner = find_tuple(v);
          if (!inner) fail("tuple", "tuple operand is not defined before use");
          tup->tensors.emplace_back();
          tup->tuples.push_back(inner);
        } else {
          tup->tensors.push_back(lookup(op, scope, v, tup->tensors.size()));
          tup->tuples.push_back(nullptr);
        }
      }
      scope.tuples[op.result()] = tup;
      continue;
    }
    if (op.kind == hlo::OpKind::kGetTupleElement) {
      auto tup = find_tuple(op.operand(0));
      if (!tup) fail("get_tuple_element", "operand is not a tuple defined before use");
      int64_t idx = op.attrs.get_int("index");
      if (idx < 0 || idx >= static_cast<int64_t>(tup->tensors.size()))
        fail("get_tuple_element", "index out of range (got {}, expected < {})", idx,
             tup->tensors.size());
      size_t u = static_cast<size_t>(idx);
      if (tup->tuples[u])
        scope.tuples[op.result()] = tup->tuples[u];
      else
        scope.bind(op.result(), tup->tensors[u]);
      continue;
    }
    Kernel k = kernel_for(op.kind);
    if (!k) fail("ref", "no reference kernel for {}", op.name());
    std::vector<Tensor> ins;
    ins.reserve(op.operands.size());
    for (size_t i = 0; i < op.operands.size(); ++i)
      ins.push_back(lookup(op, scope, op.operand(i), i));
    std::vector<Tensor> outs = k(op, ins, ctx);
    if (outs.size() != op.results.size())
      fail("ref", "{} kernel returned {} result(s) (expected {})", op.name(), outs.size(),
           op.results.size());
    for (size_t i = 0; i < outs.size(); ++i) scope.bind(op.result(i), std::move(outs[i]));
  }
  fail("run_block", "block has no terminator");
}

std::vector<Tensor> run_func(const hlo::Func& f, const std::vector<Tensor>& args, RunContext& ctx) {
  if (args.size() != f.num_args())
    fail("run", "function @{} takes {} argument(s), got {}", f.name, f.num_args(), args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const hlo::Type& t = f.arg(i)->type;
    if (!t.is_tensor())
      fail("run", "argument {} of @{} has non-tensor type {}", i, f.name, t.str());
    if (args[i].dtype() != t.dtype() || args[i].shape() != t.shape())
      fail("run", "argument {} (%arg{}) of @{} expects {}, got {}", i, i, f.name, t.str(),
           args[i].type_str());
  }
  // A called function sees no values of its caller.
  const Scope* saved = ctx.scope;
  ctx.scope = nullptr;
  std::vector<Tensor> out;
  try {
    out = run_block(*f.body, args, ctx);
  } catch (...) {
    ctx.scope = saved;
    throw;
  }
  ctx.scope = saved;
  return out;
}

}  // namespace netspec::exec::ref
