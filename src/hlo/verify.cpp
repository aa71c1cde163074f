// Rule table dispatch, shared rule helpers, and whole-module verification (dominance,
// terminators, function signatures, calls).
#include "hlo/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "hlo/op_table.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace vr {

// Built by hand: fmt::join on int64 trips GCC 12's -Wstringop-overflow at -O3 (fmt 9).
std::string i64s_str(const I64s& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void expect_num_operands(const Op& op, size_t n) {
  if (op.operands.size() != n)
    fail(mn(op), "wrong number of operands (got {}, expected {})", op.operands.size(), n);
}

void expect_min_operands(const Op& op, size_t n) {
  if (op.operands.size() < n)
    fail(mn(op), "too few operands (got {}, expected at least {})", op.operands.size(), n);
}

void expect_num_regions(const Op& op, size_t n) {
  if (op.regions.size() != n)
    fail(mn(op), "wrong number of regions (got {}, expected {})", op.regions.size(), n);
}

const Type& tensor_operand(const Op& op, size_t i, std::string_view what) {
  if (i >= op.operands.size() || !op.operands[i]) fail(mn(op), "missing {} (operand #{})", what, i);
  const Type& t = op.operands[i]->type;
  if (!t.is_tensor()) fail(mn(op), "{} #{} must be a tensor (got {})", what, i, t.str());
  return t;
}

std::vector<Type> check_given(const Op& op, const std::vector<Type>& given,
                              std::vector<Type> inferred) {
  if (given.empty()) return inferred;
  if (given != inferred)
    fail(mn(op), "result type mismatch (got {}, expected {})", types_str(given),
         types_str(inferred));
  return given;
}

void require_given(const Op& op, const std::vector<Type>& given, size_t n) {
  if (given.size() != n)
    fail(mn(op), "result type must be stated (got {} types, expected {})", given.size(), n);
  for (const auto& t : given)
    if (!t.is_tensor()) fail(mn(op), "result must be a tensor (got {})", t.str());
}

const Type& sole_tensor_operand(const Op& op) {
  expect_num_operands(op, 1);
  return tensor_operand(op, 0);
}

const Type& given_with_dtype_of(const Op& op, const std::vector<Type>& given, const Type& x) {
  require_given(op, given, 1);
  const Type& r = given[0];
  if (r.dtype() != x.dtype())
    fail(mn(op), "element type differs (got {}, expected {})", r.str(),
         r.with_dtype(x.dtype()).str());
  return r;
}

void check_dims(const Op& op, const I64s& dims, int64_t rank, std::string_view what) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      fail(mn(op), "{} out of range (got {} in {}, expected in [0, {}))", what, d, i64s_str(dims),
           rank);
    if (!seen.insert(d).second)
      fail(mn(op), "{} has a repeated dim (got {})", what, i64s_str(dims));
  }
}

void check_sorted(const Op& op, const I64s& dims, std::string_view what) {
  if (!std::is_sorted(dims.begin(), dims.end()))
    fail(mn(op), "{} must be sorted (got {})", what, i64s_str(dims));
}

void check_size(const Op& op, size_t got, size_t expected, std::string_view what) {
  if (got != expected)
    fail(mn(op), "{} has the wrong size (got {}, expected {})", what, got, expected);
}

bool contains(const I64s& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

I64s i64s_or(const Op& op, const std::string& name, size_t n, int64_t dflt) {
  if (!op.attrs.has(name)) return I64s(n, dflt);
  auto* p = op.attrs.get_if<I64s>(name);
  if (!p) fail(mn(op), "attribute '{}' must be an i64 array", name);
  check_size(op, p->size(), n, name);
  return *p;
}

const I64s& i64s_of_size(const Op& op, const std::string& name, size_t n) {
  const I64s& v = op.attrs.get_i64s(name);
  check_size(op, v.size(), n, name);
  return v;
}

std::vector<std::pair<int64_t, int64_t>> padding_attr(const Op& op, size_t n) {
  std::vector<std::pair<int64_t, int64_t>> pads(n, {0, 0});
  if (!op.attrs.has("padding")) return pads;
  auto* p = op.attrs.get_if<DenseAttr>("padding");
  if (!p) fail(mn(op), "attribute 'padding' must be a dense i64 tensor");
  const Tensor& t = p->value;
  if (!(t.shape() == Shape{static_cast<int64_t>(n), 2}) && !(n == 0 && t.numel() == 0))
    fail(mn(op), "padding has the wrong shape (got {}, expected {}x2)", t.type_str(), n);
  if (is_float(t.dtype()) || is_bool(t.dtype()))
    fail(mn(op), "padding must be integer (got {})", t.type_str());
  for (size_t i = 0; i < n; ++i)
    pads[i] = {t.as_int64(static_cast<int64_t>(2 * i)),
               t.as_int64(static_cast<int64_t>(2 * i + 1))};
  return pads;
}

std::vector<Type> region_results(const Op& op, size_t region, std::string_view what) {
  if (region >= op.regions.size() || !op.regions[region]) fail(mn(op), "missing region '{}'", what);
  Op* term = op.regions[region]->terminator();
  if (!term || term->kind != OpKind::kReturn)
    fail(mn(op), "region '{}' must end with stablehlo.return", what);
  return term->operand_types();
}

void expect_region_args(const Op& op, size_t region, const std::vector<Type>& expected,
                        std::string_view what) {
  if (region >= op.regions.size() || !op.regions[region]) fail(mn(op), "missing region '{}'", what);
  auto got = op.regions[region]->arg_types();
  if (got != expected)
    fail(mn(op), "region '{}' has wrong argument types (got ({}), expected ({}))", what,
         types_str(got), types_str(expected));
}

void expect_region_results(const Op& op, size_t region, const std::vector<Type>& expected,
                           std::string_view what) {
  auto got = region_results(op, region, what);
  if (got != expected)
    fail(mn(op), "region '{}' returns wrong types (got ({}), expected ({}))", what, types_str(got),
         types_str(expected));
}

bool is_promotable(DType from, DType to) {
  if (from == to) return true;
  bool same_class = (is_float(from) && is_float(to)) ||
                    (is_signed_integer(from) && is_signed_integer(to)) ||
                    (is_unsigned_integer(from) && is_unsigned_integer(to));
  return same_class && dtype_bits(to) >= dtype_bits(from);
}

std::vector<DType> check_accumulator_region(const Op& op, size_t region,
                                            const std::vector<DType>& in, std::string_view what) {
  if (region >= op.regions.size() || !op.regions[region]) fail(mn(op), "missing region '{}'", what);
  auto args = op.regions[region]->arg_types();
  size_t n = in.size();
  std::vector<Type> expect_args;
  std::vector<DType> es;
  if (args.size() == 2 * n) {
    for (size_t i = 0; i < n; ++i) {
      const Type& a = args[i];
      if (a.is_tensor() && a.rank() == 0 && is_promotable(in[i], a.dtype()))
        es.push_back(a.dtype());
      else
        es.push_back(in[i]);
    }
  } else {
    es = in;
  }
  std::vector<Type> accs;
  for (DType e : es) accs.push_back(scalar(e));
  expect_args = accs;
  expect_args.insert(expect_args.end(), accs.begin(), accs.end());
  expect_region_args(op, region, expect_args, what);
  expect_region_results(op, region, accs, what);
  return es;
}

int64_t checked_add(const Op& op, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(mn(op), "size overflows int64 (got {} + {})", a, b);
  return r;
}

int64_t checked_mul(const Op& op, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(mn(op), "size overflows int64 (got {} * {})", a, b);
  return r;
}

int64_t checked_numel(const Op& op, const Type& t) {
  int64_t n = 1;
  for (int64_t d : t.shape()) n = checked_mul(op, n, d);
  return n;
}

int64_t window_out_size(const Op& op, int64_t in, int64_t base_dil, int64_t lo, int64_t hi,
                        int64_t window, int64_t win_dil, int64_t stride) {
  int64_t dilated = in == 0 ? 0 : checked_add(op, checked_mul(op, in - 1, base_dil), 1);
  int64_t padded = checked_add(op, checked_add(op, dilated, lo), hi);
  int64_t dwin = window == 0 ? 0 : checked_add(op, checked_mul(op, window - 1, win_dil), 1);
  if (padded <= 0 || dwin > padded) return 0;
  return (padded - dwin) / stride + 1;
}

}  // namespace vr

namespace {

const std::array<InferRule, kNumOpKinds>& rule_table() {
  static const auto table = fill_op_table<InferRule>(
      {register_misc_rules, register_unary_rules, register_binary_rules, register_shape_rules,
       register_dot_conv_rules, register_reduce_window_rules, register_gather_sort_rules,
       register_control_rules, register_collective_rules});
  return table;
}

// --- module verification ---

class ModuleVerifier {
 public:
  explicit ModuleVerifier(const Module& m) : m_(m) {}

  void run() {
    std::set<std::string> names;
    for (const auto& f : m_.funcs) {
      loc_ = f->loc;
      if (!names.insert(f->name).second) fail("verify", "duplicate function name '@{}'", f->name);
    }
    for (const auto& f : m_.funcs) verify_func(*f);
  }

  Location loc_;  // of the op (or function) being checked, for VerifyError

 private:
  void verify_func(const Func& f) {
    loc_ = f.loc;
    visible_.clear();
    where_ = "@" + f.name;
    const Block& body = *f.body;
    Op* term = body.terminator();
    if (term) loc_ = term->loc;
    if (!term || term->kind != OpKind::kFuncReturn)
      fail(where_, "function body must end with func.return");
    verify_block(body);
    loc_ = term->loc;
    auto got = term->operand_types();
    if (got != f.result_types)
      fail(where_,
           "func.return types differ from the function's result types (got ({}), "
           "expected ({}))",
           types_str(got), types_str(f.result_types));
  }

  void verify_block(const Block& b) {
    std::vector<const Value*> added;
    for (const auto& a : b.args) {
      visible_.insert(a.get());
      added.push_back(a.get());
    }
    for (size_t i = 0; i < b.ops.size(); ++i) {
      const Op& op = *b.ops[i];
      loc_ = op.loc;
      bool last = i + 1 == b.ops.size();
      bool is_term = op.kind == OpKind::kReturn || op.kind == OpKind::kFuncReturn;
      if (is_term && !last) fail(where_, "{} must be the last op of its block", op.name());
      if (op.parent != &b) fail(where_, "{} has a wrong parent block", op.name());
      for (size_t k = 0; k < op.operands.size(); ++k) {
        const Value* v = op.operands[k];
        if (!v || !visible_.count(v))
          fail(where_, "[{}] operand #{} is not defined before its use", op_mnemonic(op.kind), k);
      }
      if (op.kind == OpKind::kReturn && !b.parent_op)
        fail(where_, "stablehlo.return outside a region (use func.return)");
      if (op.kind == OpKind::kFuncReturn && b.parent_op)
        fail(where_, "func.return inside a region (use stablehlo.return)");
      for (const auto& r : op.regions) {
        if (!r) fail(where_, "[{}] null region", op_mnemonic(op.kind));
        if (r->parent_op != &op)
          fail(where_, "[{}] region has a wrong parent", op_mnemonic(op.kind));
        Op* t = r->terminator();
        if (!t || t->kind != OpKind::kReturn)
          fail(where_, "[{}] region must end with stablehlo.return", op_mnemonic(op.kind));
        verify_block(*r);
      }
      loc_ = op.loc;
      if (op.kind == OpKind::kCall) verify_call(op);
      std::vector<Type> stated = op.result_types();
      for (size_t k = 0; k < op.results.size(); ++k)
        if (op.results[k]->def != &op || op.results[k]->index != static_cast<int>(k))
          fail(where_, "[{}] result #{} is not linked to its op", op_mnemonic(op.kind), k);
      auto inferred = infer_result_types(op, stated);
      if (inferred.size() != stated.size())
        fail(where_, "[{}] wrong number of results (got {}, expected {})", op_mnemonic(op.kind),
             stated.size(), inferred.size());
      for (const auto& r : op.results) {
        visible_.insert(r.get());
        added.push_back(r.get());
      }
    }
    for (const Value* v : added) visible_.erase(v);
  }

  void verify_call(const Op& op) {
    const auto& callee = op.attrs.get<SymbolRef>("callee").name;
    Func* f = m_.find(callee);
    if (!f) fail("call", "unknown callee '@{}'", callee);
    if (op.operand_types() != f->arg_types())
      fail("call", "argument types of '@{}' differ (got ({}), expected ({}))", callee,
           types_str(op.operand_types()), types_str(f->arg_types()));
    if (op.result_types() != f->result_types)
      fail("call", "result types of '@{}' differ (got ({}), expected ({}))", callee,
           types_str(op.result_types()), types_str(f->result_types));
  }

  const Module& m_;
  std::string where_;
  std::unordered_set<const Value*> visible_;
};

// Every func.call op of a block and its nested regions, with the region nesting it sits at.
struct CallSite {
  const Op* op;
  int level;
};
void collect_calls(const Block& b, int level, std::vector<CallSite>& out) {
  for (const auto& op : b.ops) {
    if (op->kind == OpKind::kCall) out.push_back({op.get(), level});
    for (const auto& r : op->regions)
      if (r) collect_calls(*r, level + 1, out);
  }
}

// The call graph must be acyclic and shallow: the executors run calls and regions by recursion,
// so a function that reaches itself, or a chain of 16,000 calls, would overflow the stack.
// Iterative DFS; a function's depth (regions + calls below it) is known when it is done, as
// depth(f) = max over its calls of level + 1 + depth(callee).
void verify_acyclic_calls(const Module& m) {
  std::unordered_map<const Func*, std::vector<CallSite>> calls;
  for (const auto& f : m.funcs) collect_calls(*f->body, 0, calls[f.get()]);
  enum State { kNew, kOnPath, kDone };
  std::unordered_map<const Func*, State> state;
  std::unordered_map<const Func*, int> depth;
  struct Frame {
    const Func* f;
    size_t next;
  };
  for (const auto& root : m.funcs) {
    if (state[root.get()] != kNew) continue;
    std::vector<Frame> path{{root.get(), 0}};
    state[root.get()] = kOnPath;
    while (!path.empty()) {
      Frame& top = path.back();
      const auto& cs = calls[top.f];
      if (top.next == cs.size()) {
        int d = 0;
        for (const CallSite& c : cs)
          if (const Func* callee = m.find(c.op->attrs.get<SymbolRef>("callee").name))
            d = std::max(d, c.level + 1 + depth[callee]);
        if (d > kMaxCallDepth)
          throw VerifyError(fmt::format("[call] calls nest {} deep below @{} (counting the "
                                        "regions they sit in; expected at most {})",
                                        d, top.f->name, kMaxCallDepth),
                            top.f->loc);
        depth[top.f] = d;
        state[top.f] = kDone;
        path.pop_back();
        continue;
      }
      const Op* call = cs[top.next++].op;
      const Func* callee = m.find(call->attrs.get<SymbolRef>("callee").name);
      if (!callee || state[callee] == kDone) continue;
      if (state[callee] == kOnPath) {
        std::string cycle;
        bool in = false;
        for (const Frame& fr : path) {
          in = in || fr.f == callee;
          if (in) cycle += "@" + fr.f->name + " -> ";
        }
        throw VerifyError(fmt::format("[call] recursive call: {}@{} (the call graph must be "
                                      "acyclic; recursion is not supported)",
                                      cycle, callee->name),
                          call->loc);
      }
      state[callee] = kOnPath;
      path.push_back({callee, 0});
    }
  }
}

// Regions each op carries (-1: case, one or more branches).
int expected_regions(OpKind k) {
  switch (k) {
    case OpKind::kReduce:
    case OpKind::kReduceWindow:
    case OpKind::kMap:
    case OpKind::kScatter:
    case OpKind::kSort:
    case OpKind::kAllReduce:
      return 1;
    case OpKind::kSelectAndScatter:
    case OpKind::kWhile:
    case OpKind::kIf:
      return 2;
    case OpKind::kCase:
      return -1;
    default:
      return 0;
  }
}

}  // namespace

std::vector<Type> infer_result_types(const Op& op, const std::vector<Type>& given) {
  std::string_view mnem = op_mnemonic(op.kind);
  int nr = expected_regions(op.kind);
  if (nr >= 0 && op.regions.size() != static_cast<size_t>(nr))
    fail(mnem, "wrong number of regions (got {}, expected {})", op.regions.size(), nr);
  for (size_t i = 0; i < op.regions.size(); ++i)
    if (!op.regions[i]) fail(mnem, "region #{} is null", i);
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (!op.operands[i]) fail(mnem, "operand #{} is null", i);
  for (const auto& t : given)
    if (t.is_tensor())
      for (int64_t d : t.shape())
        if (d < 0) fail(mnem, "result type has a negative dimension (got {})", t.str());
  InferRule rule = rule_table()[static_cast<size_t>(op.kind)];
  if (!rule) fail(mnem, "no type rule registered");
  try {
    return rule(op, given);
  } catch (const Error& e) {
    // Attrs getters report `[attrs] missing attribute 'x'`; name the op instead.
    std::string_view msg = e.what();
    if (msg.rfind("[attrs] ", 0) == 0) fail(mnem, "{}", msg.substr(8));
    throw;
  }
}

void verify_module(const Module& m) {
  ModuleVerifier v(m);
  try {
    v.run();
    verify_acyclic_calls(m);
  } catch (const VerifyError&) {
    throw;
  } catch (const Error& e) {
    throw VerifyError(e.what(), v.loc_);
  }
}

}  // namespace netspec::hlo

namespace netspec::hlo::vr {

bool allowed(DType t, unsigned mask) {
  if (is_float(t)) return mask & kFloat;
  if (is_bool(t)) return mask & kBool;
  if (is_signed_integer(t)) return mask & kSInt;
  return mask & kUInt;
}

const char* mask_str(unsigned m) {
  switch (m) {
    case kFloat:
      return "floating-point";
    case kFloat | kSInt:
      return "signed integer or floating-point";
    case kNum:
      return "integer or floating-point";
    case kInt:
      return "integer";
    case kInt | kBool:
      return "integer or boolean";
    default:
      return "any";
  }
}

}  // namespace netspec::hlo::vr
