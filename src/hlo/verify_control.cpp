// Type rules: while, if, case, tuple, get_tuple_element, optimization_barrier, func.call,
// stablehlo.return and func.return (terminators: their parent's rule checks their types).
#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

std::vector<Type> rule_while(const Op& op, const std::vector<Type>& given) {
  expect_num_regions(op, 2);
  auto ts = op.operand_types();
  // C1: cond : (T...) -> tensor<i1>; C2: body : (T...) -> (T...); C3: results are T...
  expect_region_args(op, 0, ts, "cond");
  expect_region_results(op, 0, {scalar(DType::kI1)}, "cond");
  expect_region_args(op, 1, ts, "body");
  expect_region_results(op, 1, ts, "body");
  return check_given(op, given, ts);
}

// Branches of if/case take no arguments and all return the same types.
std::vector<Type> check_branches(const Op& op) {
  if (op.regions.empty()) fail(mn(op), "needs at least one branch");
  std::vector<Type> first;
  for (size_t i = 0; i < op.regions.size(); ++i) {
    std::string what = fmt::format("branch #{}", i);
    expect_region_args(op, i, {}, what);
    auto rs = region_results(op, i, what);
    if (i == 0)
      first = rs;
    else if (rs != first)
      fail(mn(op), "branches return different types (got ({}) vs ({}))", types_str(first),
           types_str(rs));
  }
  return first;
}

std::vector<Type> rule_if(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 1);
  expect_num_regions(op, 2);
  const Type& p = tensor_operand(op, 0, "pred");
  if (!(p == scalar(DType::kI1))) fail("if", "pred must be tensor<i1> (got {})", p.str());
  return check_given(op, given, check_branches(op));
}

std::vector<Type> rule_case(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 1);
  const Type& p = tensor_operand(op, 0, "index");
  if (!(p == scalar(DType::kI32))) fail("case", "index must be tensor<i32> (got {})", p.str());
  return check_given(op, given, check_branches(op));
}

std::vector<Type> rule_tuple(const Op& op, const std::vector<Type>& given) {
  return check_given(op, given, {Type::tuple(op.operand_types())});
}

std::vector<Type> rule_get_tuple_element(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 1);
  const Type& t = op.operand_type(0);
  if (!t.is_tuple()) fail("get_tuple_element", "operand must be a tuple (got {})", t.str());
  int64_t i = op.attrs.get_int("index");
  // C1: 0 <= index < size(operand).
  if (i < 0 || i >= static_cast<int64_t>(t.elems().size()))
    fail("get_tuple_element", "index out of range (got {}, expected in [0, {}))", i,
         t.elems().size());
  return check_given(op, given, {t.elems()[static_cast<size_t>(i)]});
}

std::vector<Type> rule_optimization_barrier(const Op& op, const std::vector<Type>& given) {
  return check_given(op, given, op.operand_types());
}

std::vector<Type> rule_call(const Op& op, const std::vector<Type>& given) {
  auto* sym = op.attrs.get_if<SymbolRef>("callee");
  if (!sym) fail("call", "missing callee");
  Module* m = op.module();
  Func* f = m ? m->find(sym->name) : nullptr;
  if (!f) {
    // Callee not reachable yet (parsed before its definition, or built inside a detached
    // region): trust the stated types; verify_module checks them.
    if (given.empty()) fail("call", "unknown callee '@{}' and no result types stated", sym->name);
    return given;
  }
  if (op.operand_types() != f->arg_types())
    fail("call", "argument types of '@{}' differ (got ({}), expected ({}))", sym->name,
         types_str(op.operand_types()), types_str(f->arg_types()));
  return check_given(op, given, f->result_types);
}

std::vector<Type> rule_terminator(const Op& op, const std::vector<Type>& given) {
  if (!op.regions.empty()) fail(mn(op), "takes no regions");
  return check_given(op, given, {});
}

}  // namespace

void register_control_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_control.cpp", {"control"});
  ft.set(OpKind::kWhile, rule_while);
  ft.set(OpKind::kIf, rule_if);
  ft.set(OpKind::kCase, rule_case);
  ft.set(OpKind::kTuple, rule_tuple);
  ft.set(OpKind::kGetTupleElement, rule_get_tuple_element);
  ft.set(OpKind::kOptimizationBarrier, rule_optimization_barrier);
  ft.set(OpKind::kCall, rule_call);
  ft.set(OpKind::kReturn, rule_terminator);
  ft.set(OpKind::kFuncReturn, rule_terminator);
}

}  // namespace netspec::hlo
