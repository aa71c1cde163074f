// PyTorch weight files without Python. torch.save (>= 1.6) writes a zip archive: ARCHIVE/data.pkl
// (a pickle whose tensors are torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)
// and whose storages are persistent ids ('storage', torch.FloatStorage, key, location, numel))
// and each storage's little-endian bytes in ARCHIVE/data/<key>. read_weight_file also takes
// safetensors files. The legacy (pre-1.6) format and TorchScript archives are refused by name.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace netspec {

struct TorchTensors {
  std::vector<std::pair<std::string, Tensor>> tensors;  // file order, dtypes as stored, contiguous
  std::string format;                                   // "PyTorch zip" or "safetensors"
  std::string container;             // the checkpoint key the state dict came from, or ""
  std::vector<std::string> skipped;  // state-dict entries that are not tensors: "name (int)"
  // True when the order is the safetensors library's (by dtype size, then name), which keeps
  // nothing of the modules' order: names and shapes must place the tensors.
  bool library_order = false;
};

// A torch.save'd state dict: the top-level dict, or its "state_dict", "model" or
// "model_state_dict" entry (training checkpoints). Fails naming the file and the fault.
TorchTensors read_torch_zip(const std::string& path);
// A .pth/.pt/.bin (torch zip) or .safetensors file, told by content, not by name.
TorchTensors read_weight_file(const std::string& path);

// Element-wise copy into f32 (from f16, bf16, f32 or f64); fails naming `what` for other dtypes.
Tensor to_f32(const Tensor& t, const std::string& what);

}  // namespace netspec
