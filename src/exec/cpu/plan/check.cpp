// Check mode (NETSPEC_CPU_CHECK=1): each fast step is compared with its ref kernel run on copies
// of the same operands, and each operand with the snapshot taken when it was produced.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "exec/cpu/plan/plan.h"
#include "hlo/text/printer.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

// Largest |a - b| scaled by (1 + max |b|) for floats; 0 or 1 (bytes differ) otherwise.
double tensor_diff(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return 1e300;
  if (!is_float(a.dtype())) return a.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) ? 1 : 0;
  double d = 0, m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.as_double(i), y = b.as_double(i);
    if (std::isnan(x) != std::isnan(y)) return 1e300;
    if (!std::isnan(x)) d = std::max(d, std::abs(x - y));
    if (std::isfinite(y)) m = std::max(m, std::abs(y));
  }
  return d / (1 + m);
}

double check_tolerance(DType t) { return t == DType::kF64 ? 1e-9 : is_float(t) ? 2e-3 : 0; }

}  // namespace

void Checker::operands_intact(const Step& st, size_t index, const std::vector<Tensor>& vals,
                              bool after) const {
  for (size_t i = 0; i < st.ins.size(); ++i) {
    int id = st.ins[i];
    const void* p = vals[static_cast<size_t>(id)].raw();
    bool shared = false;
    for (int o : st.outs) shared = shared || (p && vals[static_cast<size_t>(o)].raw() == p);
    if (after && shared) continue;
    if (producer[static_cast<size_t>(id)] < 0) continue;  // argument or constant
    const Tensor& s = snap[static_cast<size_t>(id)];
    if (tensor_diff(vals[static_cast<size_t>(id)], s) != 0)
      fail("cpu check",
           "step {} ({}): operand {} ({}, from step {} {}) was overwritten {} "
           "(buffer reused while live)",
           index, st.op->name(), i, s.type_str(), producer[static_cast<size_t>(id)],
           P.steps[static_cast<size_t>(producer[static_cast<size_t>(id)])].op->name(),
           after ? "while this step ran" : "before this step");
  }
}

// Value id as a row-major tensor (channel-blocked values are reordered; others copied).
Tensor Checker::plain(int id, const std::vector<Tensor>& vals) const {
  const int b = P.vals[static_cast<size_t>(id)].block;
  return b ? unblocked(vals[static_cast<size_t>(id)], b) : vals[static_cast<size_t>(id)].clone();
}

std::vector<Tensor> Checker::ref_outputs(const Step& st, const std::vector<Tensor>& vals) const {
  if (st.reorder) return {plain(st.ins[0], vals)};  // a layout change keeps every element
  if (st.fused) {  // run the group's ops one by one on the ref kernels
    std::unordered_map<const hlo::Value*, Tensor> env;
    ref::RunContext ctx;
    if (st.fused_conv) {  // a conv with the group as post-ops: ins = x, w, fold_ins...
      std::vector<Tensor> xw{plain(st.ins[0], vals), plain(st.ins[1], vals)};
      if (st.absorbed_reverse)
        xw[1] = ref::kernel_for(OpKind::kReverse)(*st.absorbed_reverse, {xw[1]}, ctx).at(0);
      env[st.fused_conv->result(0)] =
          ref::kernel_for(OpKind::kConvolution)(*st.fused_conv, xw, ctx).at(0);
      for (size_t k = 0; k < st.fold_ins.size(); ++k)
        env[st.fold_ins[k]] = plain(st.ins[2 + k], vals);
    } else {
      for (size_t k = 0; k < st.ins.size(); ++k) env[st.fused->ins[k]] = plain(st.ins[k], vals);
    }
    for (const hlo::Op* op : st.fused->ops) {
      std::vector<Tensor> in_t;
      for (auto* v : op->operands) in_t.push_back(env.at(v));
      env[op->result(0)] = ref::kernel_for(op->kind)(*op, in_t, ctx).at(0);
    }
    std::vector<Tensor> out;
    std::unordered_map<const hlo::Value*, const hlo::Op*> summed;  // folded reduces (plan.cpp)
    for (const hlo::Op* r : st.fused_reduces) summed[r->operand(0)] = r;
    const auto& both = st.reduced_and_written;
    for (const hlo::Value* v : st.fused->outs)
      if (!summed.count(v) || std::find(both.begin(), both.end(), v) != both.end())
        out.push_back(env.at(v));
    for (const hlo::Value* v : st.fused->outs)
      if (auto it = summed.find(v); it != summed.end()) {
        const hlo::Op& r = *it->second;
        Tensor init = ref::kernel_for(OpKind::kConstant)(*r.operand(1)->def, {}, ctx).at(0);
        out.push_back(ref::kernel_for(OpKind::kReduce)(r, {env.at(v), init}, ctx).at(0));
      }
    return out;
  }
  ref::Kernel k = ref::kernel_for(st.op->kind);
  if (!k || (!st.op->regions.empty() && st.kind != StepKind::kRegion)) return {};
  std::vector<Tensor> in_t;
  for (int id : st.ins) in_t.push_back(plain(id, vals));
  ref::RunContext ctx;
  ctx.scope = scope;  // a while / if / case reads the plan's values from its regions
  if (st.absorbed_reverse)
    in_t[1] = ref::kernel_for(OpKind::kReverse)(*st.absorbed_reverse, {in_t[1]}, ctx).at(0);
  std::vector<Tensor> out = k(*st.op, in_t, ctx);
  if (st.absorbed_transpose)
    out = ref::kernel_for(OpKind::kTranspose)(*st.absorbed_transpose, {out.at(0)}, ctx);
  return out;
}

void Checker::compare(const Step& st, size_t index, const std::vector<Tensor>& want,
                      const std::vector<Tensor>& vals) const {
  for (size_t i = 0; i < want.size() && i < st.outs.size(); ++i) {
    const Tensor got = plain(st.outs[i], vals);
    double d = tensor_diff(got, want[i]);
    if (d > check_tolerance(got.dtype())) {
      std::string operands;
      for (int id : st.ins)
        operands += (operands.empty() ? "" : ", ") + vals[static_cast<size_t>(id)].type_str();
      if (std::getenv("NETSPEC_CPU_CHECK_DUMP") && P.func)
        std::fprintf(stderr, "%s\n", hlo::print_func(*P.func).c_str());
      fail("cpu check",
           "step {} ({}({}) -> {}): fast kernel result {} disagrees with ref "
           "(got scaled max diff {:.3e}, expected <= {:.1e})",
           index, st.op->name(), operands, got.type_str(), i, d, check_tolerance(got.dtype()));
    }
  }
}

void Checker::record(const Step& st, size_t index, const std::vector<Tensor>& vals) {
  for (int id : st.outs) {
    snap[static_cast<size_t>(id)] = vals[static_cast<size_t>(id)].clone();
    producer[static_cast<size_t>(id)] = static_cast<int>(index);
  }
}

}  // namespace netspec::exec::cpu
