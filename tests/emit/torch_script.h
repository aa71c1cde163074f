// PyTorch references written in a test: run_torch_script writes the inputs as in0.npy, in1.npy,
// ... into a fresh directory, runs `script` with Debian's python3 (torch 1.13) with that
// directory as argv[1] and the script's helpers (`load(i)` -> torch f64 tensor, `save(name, t)`)
// defined, and reads back the files the script saved (out0.npy, ...). Tests skip with
// NETSPEC_SKIP_WITHOUT_TORCHVISION() where torch is absent.
#pragma once
#include <fstream>

#include "reference_util.h"

namespace netspec::reference {

inline std::vector<Tensor> run_torch_script(const std::string& script,
                                            const std::vector<Tensor>& inputs, int outputs = 1) {
  TempDir dir;
  for (size_t i = 0; i < inputs.size(); ++i)
    write_npy(fmt::format("{}/in{}.npy", dir.path, i), inputs[i]);
  std::string py = dir.path + "/ref.py";
  {
    std::ofstream f(py);
    f << "import sys, numpy as np, torch\n"
         "torch.set_default_dtype(torch.float64)\n"
         "D = sys.argv[1]\n"
         "def load(i): return torch.from_numpy(np.load(f'{D}/in{i}.npy').astype(np.float64))\n"
         "def save(i, t): np.save(f'{D}/out{i}.npy', t.detach().numpy().astype(np.float64))\n"
      << script;
  }
  export_openblas_coretype();
  std::string log = dir.path + "/ref.log";
  std::string cmd = fmt::format("{} {} {} >{} 2>&1", kPython, py, dir.path, log);
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream f(log);
    std::stringstream ss;
    ss << f.rdbuf();
    fail("torch reference", "script failed:\n{}", ss.str());
  }
  std::vector<Tensor> out;
  for (int i = 0; i < outputs; ++i)
    out.push_back(read_npy(fmt::format("{}/out{}.npy", dir.path, i)));
  return out;
}

// max |y - ref| <= rel · max |ref|, printed as "[ reference ] what: ...".
inline void expect_matches(const std::string& what, const Tensor& y, const Tensor& ref,
                           double rel) {
  ASSERT_EQ(y.shape(), ref.shape()) << what;
  double err = 0, mx = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    err = std::max(err, std::abs(y.as_double(i) - ref.as_double(i)));
    mx = std::max(mx, std::abs(ref.as_double(i)));
  }
  std::cout << "[ reference ] " << what << ": max|Δ| " << err << ", max|ref| " << mx << "\n";
  EXPECT_GT(mx, 0.1) << what;
  EXPECT_LE(err, rel * mx) << what;
}

}  // namespace netspec::reference
