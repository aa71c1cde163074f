// jax_random_cases OUTDIR N: the random programs of tests/support/random_program.h (seeds 1..N,
// f32 and f64) through the JAX translator (jax/translate.h): OUTDIR/<case>.py defines main(...)
// as jax.lax calls, with the inputs as <case>.in<i>.npy and ref's results as <case>.want<i>.npy
// for tests/jax/check_random.py, which runs main under jax.jit and compares. The translator
// then meets what the zoo's modules never hold: while loops with swapped and stacked carries,
// nested loops, if, calls, clamped dynamic slices, strided attention products; and, as
// random_vjp_f64_<seed>, each program's VJP (autodiff::vjp, the generator's differentiable mode)
// with the loops' generated backward.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "autodiff/vjp.h"
#include "core/npy.h"
#include "exec/backend.h"
#include "jax/translate.h"
#include "tests/support/random_program.h"

namespace {

using namespace netspec;
namespace fs = std::filesystem;

// Writes OUTDIR/<name>.py (f translated) with `in` and ref's results; false when f does not
// translate.
bool write_case(const fs::path& out, const std::string& name, const std::shared_ptr<hlo::Module>& m,
                const hlo::Func& f, const std::vector<Tensor>& in) {
  std::vector<jax::ArgRef> refs;
  std::string params;
  for (size_t i = 0; i < f.num_args(); ++i) {
    refs.push_back({"", "x" + std::to_string(i)});
    params += (i ? ", x" : "x") + std::to_string(i);
  }
  std::map<std::string, std::string> callees;
  jax::PyFunc pf;
  try {
    pf = jax::translate(f, refs, {{"_body", "", 0, f.body->ops.size() - 1}}, callees);
  } catch (const std::exception& e) {
    std::cerr << "jax_random_cases: " << name << " does not translate: " << e.what() << "\n";
    return false;
  }
  std::ofstream py(out / (name + ".py"));
  py << "import math\n\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax "
        "import lax\n\n";
  for (const auto& [callee, src] : callees) py << src << "\n";
  for (const std::string& d : pf.defs) py << d << "\n";
  py << "def main(" << params << "):\n";
  for (const std::string& line : pf.body) py << "    " << line << "\n";
  py << "    return (";
  for (const std::string& r : pf.results) py << r << ", ";
  py << ")\n";
  const std::vector<Tensor> want = exec::make_backend("ref")->load(m)->run(f.name, in);
  for (size_t i = 0; i < in.size(); ++i)
    write_npy((out / (name + ".in" + std::to_string(i) + ".npy")).string(), in[i]);
  for (size_t i = 0; i < want.size(); ++i)
    write_npy((out / (name + ".want" + std::to_string(i) + ".npy")).string(), want[i]);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: jax_random_cases OUTDIR N\n";
    return 2;
  }
  const fs::path out = argv[1];
  const int n = std::stoi(argv[2]);
  fs::create_directories(out);
  int written = 0;
  for (int seed = 1; seed <= n; ++seed) {
    for (DType dt : {DType::kF32, DType::kF64}) {
      testing::RandomProgram p(static_cast<uint32_t>(seed), dt);
      auto m = std::make_shared<hlo::Module>();
      hlo::Func* f = m->add_func("main", {});
      p.build(*m, f);
      const std::string name =
          std::string("random_") + std::string(dtype_name(dt)) + "_" + std::to_string(seed);
      if (!write_case(out, name, m, *f, p.inputs(static_cast<uint32_t>(seed) * 7))) return 1;
      ++written;
    }
    // The program's VJP (f64, differentiable mode): the generated backward's loops (the forward
    // again stacking states, the turns in reverse) and its scatter-adds, pads and transposes.
    testing::RandomProgram p(static_cast<uint32_t>(seed), DType::kF64, /*differentiable=*/true);
    auto m = std::make_shared<hlo::Module>();
    hlo::Func* f = m->add_func("main", {});
    p.build(*m, f);
    std::vector<size_t> wrt(f->num_args());
    for (size_t i = 0; i < wrt.size(); ++i) wrt[i] = i;
    const hlo::Func* g = autodiff::vjp(*f, wrt);
    std::vector<Tensor> in = p.inputs(static_cast<uint32_t>(seed) * 7);
    for (size_t r = 0; r < f->result_types.size(); ++r) {  // cotangents: cos of a ramp
      const Shape& s = f->result_types[r].shape();
      std::vector<double> v(static_cast<size_t>(num_elements(s)));
      for (size_t j = 0; j < v.size(); ++j) v[j] = std::cos(0.7 * static_cast<double>(j + r));
      in.push_back(Tensor::from<double>(f->result_types[r].dtype(), s, v));
    }
    if (!write_case(out, "random_vjp_f64_" + std::to_string(seed), m, *g, in)) return 1;
    ++written;
  }
  std::cout << "jax_random_cases: wrote " << written << " cases to " << out.string() << "\n";
  return 0;
}
