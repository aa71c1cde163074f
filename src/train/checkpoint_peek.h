// A checkpoint's completed epochs read from its safetensors header alone (the 8-byte length and
// the JSON header, not the tensors), so `train` can tell a finished run before loading its data.
#pragma once
#include <optional>
#include <string>

namespace netspec::train {

// The "epoch" metadata of the checkpoint at `path`; nullopt when the file is absent, not a
// regular file, or its header or that field does not parse (load_checkpoint then names what is
// wrong).
std::optional<int> checkpoint_epochs(const std::string& path);

}  // namespace netspec::train
