// jax_random_cases OUTDIR N: the random programs of tests/support/random_program.h (seeds 1..N,
// f32 and f64) through the JAX translator (jax/translate.h): OUTDIR/<case>.py defines main(...)
// as jax.lax calls, with the inputs as <case>.in<i>.npy and ref's results as <case>.want<i>.npy
// for tests/jax/check_random.py, which runs main under jax.jit and compares. The translator
// then meets what the zoo's modules never hold: while loops with swapped and stacked carries,
// nested loops, if, calls, clamped dynamic slices, strided attention products.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "core/npy.h"
#include "exec/backend.h"
#include "jax/translate.h"
#include "tests/support/random_program.h"

int main(int argc, char** argv) {
  using namespace netspec;
  if (argc != 3) {
    std::cerr << "usage: jax_random_cases OUTDIR N\n";
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path out = argv[1];
  const int n = std::stoi(argv[2]);
  fs::create_directories(out);
  int written = 0;
  for (int seed = 1; seed <= n; ++seed)
    for (DType dt : {DType::kF32, DType::kF64}) {
      const std::string name =
          std::string("random_") + std::string(dtype_name(dt)) + "_" + std::to_string(seed);
      testing::RandomProgram p(static_cast<uint32_t>(seed), dt);
      auto m = std::make_shared<hlo::Module>();
      hlo::Func* f = m->add_func("main", {});
      p.build(*m, f);
      std::vector<jax::ArgRef> refs;
      std::string params;
      for (size_t i = 0; i < f->num_args(); ++i) {
        refs.push_back({"", "x" + std::to_string(i)});
        params += (i ? ", x" : "x") + std::to_string(i);
      }
      std::map<std::string, std::string> callees;
      jax::PyFunc pf;
      try {
        pf = jax::translate(*f, refs, {{"_body", "", 0, f->body->ops.size() - 1}}, callees);
      } catch (const std::exception& e) {
        std::cerr << "jax_random_cases: " << name << " does not translate: " << e.what() << "\n";
        return 1;
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
      const std::vector<Tensor> in = p.inputs(static_cast<uint32_t>(seed) * 7);
      const std::vector<Tensor> want = exec::make_backend("ref")->load(m)->run("main", in);
      for (size_t i = 0; i < in.size(); ++i)
        write_npy((out / (name + ".in" + std::to_string(i) + ".npy")).string(), in[i]);
      for (size_t i = 0; i < want.size(); ++i)
        write_npy((out / (name + ".want" + std::to_string(i) + ".npy")).string(), want[i]);
      ++written;
    }
  std::cout << "jax_random_cases: wrote " << written << " cases to " << out.string() << "\n";
  return 0;
}
