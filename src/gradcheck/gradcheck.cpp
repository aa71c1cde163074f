// Gradient checker (see gradcheck.h): f64 copy, kink-avoiding sampler, VJP vs central
// differences of <ybar, f(x)>.
#include "gradcheck/gradcheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>

#include "autodiff/vjp.h"
#include "exec/backend.h"
#include "exec/limits.h"
#include "hlo/passes.h"

namespace netspec::autodiff {
namespace {

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double uniform(uint64_t& s) { return static_cast<double>(splitmix(s) >> 11) * 0x1.0p-53; }

bool is_float_type(const hlo::Type& t) { return t.is_tensor() && is_float(t.dtype()); }

// <ybar, y> over the float outputs.
double dot_outputs(const std::vector<Tensor>& ys, const std::vector<Tensor>& ybars) {
  double s = 0;
  for (size_t k = 0; k < ys.size(); ++k) {
    if (!is_float(ys[k].dtype())) continue;
    for (int64_t j = 0; j < ys[k].numel(); ++j) s += ybars[k].as_double(j) * ys[k].as_double(j);
  }
  return s;
}

void add_to_element(Tensor& t, int64_t j, double delta) {
  if (t.dtype() == DType::kF64) {
    t.data<double>()[j] += delta;
  } else if (t.dtype() == DType::kF32) {
    t.data<float>()[j] += static_cast<float>(delta);
  } else {
    fail("gradcheck", "cannot perturb an element of type {}", dtype_name(t.dtype()));
  }
}

// The coordinates of an n-element input to check: all, or k distinct ones in increasing order
// (Floyd's sampling: O(k) draws, no O(n) table).
std::vector<int64_t> coordinates(int64_t n, int64_t k, uint64_t& state) {
  std::vector<int64_t> c;
  if (k <= 0 || n <= k) {
    c.resize(static_cast<size_t>(n));
    std::iota(c.begin(), c.end(), 0);
    return c;
  }
  std::set<int64_t> chosen;
  for (int64_t j = n - k; j < n; ++j) {
    auto t = static_cast<int64_t>(splitmix(state) % static_cast<uint64_t>(j + 1));
    chosen.insert(chosen.count(t) ? j : t);
  }
  return {chosen.begin(), chosen.end()};
}

}  // namespace

Tensor sample_input(const hlo::Type& t, size_t index, const GradcheckOptions& o, uint64_t& state) {
  if (!t.is_tensor()) fail("gradcheck", "input {} has type {} (expected a tensor)", index, t.str());
  Tensor out(t.dtype(), t.shape());
  int64_t n = out.numel();
  if (is_float(t.dtype())) {
    // Distinct magnitudes on a jittered grid in [lo, hi]: no zeros, no ties, gaps >> step.
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(perm[static_cast<size_t>(i)], perm[splitmix(state) % static_cast<uint64_t>(i + 1)]);
    auto pit = o.positive_inputs.find(index);
    bool positive = pit != o.positive_inputs.end() ? pit->second : o.positive;
    std::vector<double> vals(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      double u =
          (static_cast<double>(perm[static_cast<size_t>(j)]) + 0.5 + 0.6 * (uniform(state) - 0.5)) /
          static_cast<double>(n);
      double mag = o.lo + (o.hi - o.lo) * u;
      bool neg = !positive && (splitmix(state) & 1);
      vals[static_cast<size_t>(j)] = neg ? -mag : mag;
    }
    return Tensor::from<double>(t.dtype(), t.shape(), vals);
  }
  std::vector<int64_t> vals(static_cast<size_t>(n));
  for (auto& v : vals)
    v = is_bool(t.dtype())
            ? static_cast<int64_t>(splitmix(state) & 1)
            : static_cast<int64_t>(splitmix(state) %
                                   static_cast<uint64_t>(std::max<int64_t>(1, o.int_max)));
  return Tensor::from<int64_t>(t.dtype(), t.shape(), vals);
}

std::string GradcheckReport::str() const {
  std::string s;
  for (const auto& r : inputs)
    s += fmt::format(
        "{}: input {} ({} elements{}): max abs error {:.3e}, max rel error {:.3e} ({})\n", func,
        r.index, r.numel,
        r.checked < r.numel ? fmt::format(", {} checked at random", r.checked) : "", r.max_abs,
        r.max_rel, r.ok ? "ok" : "FAILED");
  s += fmt::format("{}: {} (tolerance {:.1e} on the relative error)\n", func,
                   ok ? "gradients match" : "MISMATCH", tolerance);
  return s;
}

GradcheckReport gradcheck(const hlo::Module& m, const GradcheckOptions& o) {
  if (!std::isfinite(o.tolerance) || o.tolerance < 0)
    fail("gradcheck", "the tolerance must be a finite number >= 0 (got {})", o.tolerance);
  if (!std::isfinite(o.step) || o.step <= 0)
    fail("gradcheck", "the finite-difference step must be a finite number > 0 (got {})", o.step);
  if (o.max_coords < 0) fail("gradcheck", "the coordinate cap must be >= 0 (got {})", o.max_coords);
  std::shared_ptr<hlo::Module> mod = hlo::clone_module(m);
  hlo::convert_float_types(*mod, DType::kF32, DType::kF64);
  hlo::Func* f = mod->entry(o.entry);
  GradcheckReport rep;
  rep.func = f->name;
  rep.tolerance = o.tolerance;

  std::vector<size_t> wrt = o.wrt;
  if (wrt.empty())
    for (size_t i = 0; i < f->num_args(); ++i)
      if (is_float_type(f->arg(i)->type) && !o.fixed_inputs.count(i)) wrt.push_back(i);
  for (size_t i : wrt) {
    if (i >= f->num_args())
      fail("gradcheck", "input {} out of range (@{} has {} inputs)", i, f->name, f->num_args());
    if (!is_float_type(f->arg(i)->type))
      fail("gradcheck", "input {} of @{} has type {} (expected a float tensor)", i, f->name,
           f->arg(i)->type.str());
  }
  if (wrt.empty()) fail("gradcheck", "@{} has no float inputs to check", f->name);
  VjpOptions vo;
  vo.name = "__gradcheck_vjp";
  hlo::Func* g = vjp(*f, wrt, vo);
  std::string fname = f->name, gname = g->name;

  auto backend = exec::make_backend(o.backend);
  auto exe = backend->load(mod);

  if (o.replicas < 1) fail("gradcheck", "replicas must be >= 1 (got {})", o.replicas);
  const size_t nrep = static_cast<size_t>(o.replicas);
  uint64_t state = o.seed * 0x2545f4914f6cdd1dull + 1;
  // Per replica: inputs, then the output cotangents (replica 0 draws exactly as one replica).
  std::vector<std::vector<Tensor>> xs(nrep), ybars(nrep);
  for (size_t rep_i = 0; rep_i < nrep; ++rep_i) {
    for (size_t i = 0; i < f->num_args(); ++i) {
      auto it = o.fixed_inputs.find(i);
      Tensor t =
          it != o.fixed_inputs.end() ? it->second : sample_input(f->arg(i)->type, i, o, state);
      if (is_float(t.dtype()) &&
          t.dtype() != DType::kF64) {  // fixed f32 inputs: promote like the module
        Tensor d(DType::kF64, t.shape());
        for (int64_t j = 0; j < t.numel(); ++j) d.data<double>()[j] = t.as_double(j);
        t = d;
      }
      xs[rep_i].push_back(t);
    }
    for (const auto& rt : f->result_types) {
      if (!rt.is_tensor())
        fail("gradcheck", "@{} returns a {} (expected tensors)", f->name, rt.str());
      Tensor t(rt.dtype(), rt.shape());
      if (is_float(rt.dtype()))
        for (int64_t j = 0; j < t.numel(); ++j) t.data<double>()[j] = 2 * uniform(state) - 1;
      ybars[rep_i].push_back(t);
    }
  }
  auto run_all = [&](const std::string& name, const std::vector<std::vector<Tensor>>& in) {
    if (nrep == 1) return std::vector<std::vector<Tensor>>{exe->run(name, in[0])};
    return exe->run_replicated(name, in);
  };
  // Σ_r <ybar_r, f_r(x)>.
  auto objective = [&](const std::vector<std::vector<Tensor>>& in) {
    std::vector<std::vector<Tensor>> ys = run_all(fname, in);
    double s = 0;
    for (size_t r = 0; r < nrep; ++r) s += dot_outputs(ys[r], ybars[r]);
    return s;
  };
  std::vector<std::vector<Tensor>> args = xs;
  for (size_t r = 0; r < nrep; ++r) args[r].insert(args[r].end(), ybars[r].begin(), ybars[r].end());
  std::vector<std::vector<Tensor>> outs = run_all(gname, args);
  size_t ny = f->result_types.size();

  const double h = o.step;
  for (size_t k = 0; k < wrt.size(); ++k) {
    size_t i = wrt[k];
    InputReport r;
    r.index = i;
    r.numel = xs[0][i].numel();
    double scale = 0;
    std::vector<int64_t> coords = coordinates(r.numel, o.max_coords, state);
    r.checked = static_cast<int64_t>(coords.size());
    const size_t es = dtype_size(xs[0][i].dtype());
    const int64_t total = r.checked * static_cast<int64_t>(nrep);
    for (size_t rr = 0; rr < nrep; ++rr) {
      const Tensor& xbar = outs[rr].at(ny + k);
      // One working copy of replica rr's input i, perturbed at one coordinate at a time and
      // restored after.
      std::vector<std::vector<Tensor>> xv = xs;
      xv[rr][i] = xs[rr][i].clone();
      auto* work = static_cast<uint8_t*>(xv[rr][i].raw());
      const auto* orig = static_cast<const uint8_t*>(xs[rr][i].raw());
      for (size_t c = 0; c < coords.size(); ++c) {
        int64_t j = coords[c];
        exec::check_deadline("gradcheck");
        auto restore = [&] { std::memcpy(work + j * es, orig + j * es, es); };
        add_to_element(xv[rr][i], j, h);
        double fp = objective(xv);
        restore();
        add_to_element(xv[rr][i], j, -h);
        double fm = objective(xv);
        restore();
        double fd = (fp - fm) / (2 * h);
        double ad = xbar.as_double(j);
        r.max_abs = std::max(r.max_abs, std::abs(ad - fd));
        scale = std::max({scale, std::abs(ad), std::abs(fd)});
        if (!std::isfinite(ad) || !std::isfinite(fd))
          r.max_abs = std::numeric_limits<double>::infinity();
        if (o.progress)
          o.progress(i, static_cast<int64_t>(rr * coords.size() + c + 1), total);
      }
    }
    r.max_rel = scale > 0 ? r.max_abs / scale
                          : (r.max_abs > 0 ? std::numeric_limits<double>::infinity() : 0);
    r.ok = r.max_rel <= o.tolerance || r.max_abs <= o.zero_abs;
    rep.ok = rep.ok && r.ok;
    rep.inputs.push_back(r);
  }
  return rep;
}

}  // namespace netspec::autodiff
