// K updates per call through the K-step module (see multi_stepper.h).
#include "train/multi_stepper.h"

#include <cstring>

#include "core/error.h"
#include "emit/emit.h"
#include "emit/multi_step.h"
#include "train/stepper.h"

namespace netspec::train {
namespace {

// rows[j] stacked into [K, ...] (rows past rows.size() zero); each row must have shape `row`.
Tensor stack(const std::vector<Tensor>& rows, DType dt, const Shape& row, int64_t k,
             const char* what) {
  Shape s{k};
  s.insert(s.end(), row.begin(), row.end());
  Tensor out(dt, s);
  auto* p = static_cast<uint8_t*>(out.raw());
  const size_t bytes = out.nbytes() / static_cast<size_t>(k);
  for (size_t j = 0; j < rows.size(); ++j) {
    if (rows[j].dtype() != dt || rows[j].shape() != row)
      fail("train", "{} of update {} is {} (expected {} {})", what, j, rows[j].type_str(),
           dtype_name(dt), shape_str(row));
    std::memcpy(p + j * bytes, rows[j].raw(), bytes);
  }
  return out;
}

// Row j of a stacked [K, ...] output.
Tensor row_of(const Tensor& t, int64_t j) {
  Shape r(t.shape().begin() + 1, t.shape().end());
  Tensor out(t.dtype(), r);
  std::memcpy(out.raw(),
              static_cast<const uint8_t*>(t.raw()) + static_cast<size_t>(j) * out.nbytes(),
              out.nbytes());
  return out;
}

}  // namespace

MultiStepper::MultiStepper(const NetSpec& net, const ParamTable& t, const TrainConfig& c,
                           exec::Backend& be, int64_t batch, int k)
    : k_(k), seed_(static_cast<uint64_t>(c.seed)) {
  emit::Emitted one =
      emit::emit_module(net, t, ModuleKind::train_step, emit::EmitOptions::from_train(c, batch));
  emit::Emitted many = emit::emit_multi_step(one, k);
  step_manifest_ = one.manifest;
  manifest_ = many.manifest;
  exe_ = be.load(std::shared_ptr<const hlo::Module>(std::move(many.module)));
}

MultiStepper::~MultiStepper() = default;

MultiStepper::Result MultiStepper::run(TrainState& s, const std::vector<Tensor>& xs,
                                       const std::vector<Tensor>& ys,
                                       const std::vector<double>& lrs, int64_t first_step) {
  const size_t n = xs.size();
  if (n < 1 || n > static_cast<size_t>(k_) || ys.size() != n || lrs.size() != n)
    fail("train", "a call runs 1..{} updates with a batch, labels and lr each (got {}, {}, {})", k_,
         n, ys.size(), lrs.size());
  std::vector<Tensor> in;
  size_t pi = 0, si = 0, mi = 0;
  for (size_t a = 0; a < manifest_.inputs.size(); ++a) {
    const emit::TensorInfo& ti = manifest_.inputs[a];
    if (ti.name == "n_steps") {
      in.push_back(Tensor::from<int64_t>(DType::kI32, {}, {static_cast<int64_t>(n)}));
      continue;
    }
    const emit::TensorInfo& one = step_manifest_.inputs.at(a);  // the same order, unstacked
    std::vector<Tensor> rows;
    if (ti.role == "param") {
      in.push_back(s.params.at(pi++));
      continue;
    }
    if (ti.role == "optimizer_state") {
      in.push_back(s.opt.at(si++));
      continue;
    }
    for (size_t j = 0; j < n; ++j) {
      const int64_t step = first_step + static_cast<int64_t>(j);
      if (ti.role == "input")
        rows.push_back(xs[j]);
      else if (ti.role == "label")
        rows.push_back(ys[j]);
      else if (ti.role == "mask")  // the one-step path's draw for this step and mask index
        rows.push_back(draw_keep_mask(one, seed_, step, mi));
      else if (ti.name == "lr")
        rows.push_back(one.dtype == DType::kF64 ? Tensor::from<double>(DType::kF64, {}, {lrs[j]})
                                                : Tensor::scalar_f32(static_cast<float>(lrs[j])));
      else if (ti.name == "step")
        rows.push_back(Tensor::from<int64_t>(DType::kI32, {}, {step}));
      else
        fail("train", "train_steps input '{}' has unknown role {}", ti.name, ti.role);
    }
    if (ti.role == "mask") ++mi;
    in.push_back(stack(rows, one.dtype, one.shape, k_, ti.name.c_str()));
  }
  std::vector<Tensor> out = exe_->run("main", in);
  Result r;
  r.bn_stats.resize(n);
  pi = si = 0;
  for (size_t o = 0; o < manifest_.outputs.size(); ++o) {
    const emit::TensorInfo& ti = manifest_.outputs[o];
    if (ti.role == "param") {
      s.params.at(pi++) = std::move(out[o]);
    } else if (ti.role == "optimizer_state") {
      s.opt.at(si++) = std::move(out[o]);
    } else if (ti.role == "loss") {
      for (size_t j = 0; j < n; ++j) r.losses.push_back(out[o].as_double(static_cast<int64_t>(j)));
    } else if (ti.role == "bn_batch_stat") {
      for (size_t j = 0; j < n; ++j)
        r.bn_stats[j].push_back(row_of(out[o], static_cast<int64_t>(j)));
    } else if (ti.role == "metric" && ti.name == "correct") {
      for (size_t j = 0; j < n; ++j)
        r.correct.push_back(static_cast<int64_t>(out[o].as_double(static_cast<int64_t>(j))));
    }
  }
  if (r.losses.size() != n) fail("train", "train_steps returned no loss");
  return r;
}

}  // namespace netspec::train
