// Internal to src/emit: a module signature built alongside its manifest entries, and the
// per-family assemblers emit_module() dispatches to.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "emit/emit.h"

namespace netspec::emit {

struct Signature {
  std::vector<hlo::Type> types;
  std::vector<TensorInfo> infos;
  std::vector<hlo::Value*> values;  // outputs: the values returned
  void add(const std::string& name, const hlo::Type& t, const std::string& role, int64_t count = 0);
  hlo::Value* add_value(const std::string& name, hlo::Value* v, const std::string& role,
                        int64_t count = 0);
};

// The manifest entry of a module value of type t.
inline TensorInfo tensor_info(const std::string& name, const hlo::Type& t,
                              const std::string& role) {
  return TensorInfo{name, t.shape(), t.dtype(), role, 0};
}

Shape with_batch(int64_t batch, const Shape& s);
void erase_func(hlo::Module& m, const hlo::Func* f);
// Ends `main` f: returns out's values, drops the funcs inlined into it (the forward, its vjp,
// the loss), then cleans f up.
void return_and_clean(hlo::Builder& b, hlo::Module& m, hlo::Func& f, const Signature& out,
                      std::initializer_list<const hlo::Func*> inlined);
std::vector<hlo::Value*> args_of(const hlo::Func* f, size_t from, size_t n);
// The net's input "x": token ids i32 [B, T] when the net starts with tokenPositionEmbed (idsInput),
// else o.dtype [B, ...per-sample input].
hlo::Type input_type(const NetSpec& net, const ParamTable& t, const EmitOptions& o);
// "mnist-cnn" -> "mnist_cnn" (a valid MLIR symbol name).
std::string sanitize(const std::string& name);
void add_params(Signature& s, const ParamTable& t, DType dt, const std::string& role,
                const std::string& prefix = "");
// running_mean, running_var per BN layer, interleaved.
void add_running(Signature& s, const ParamTable& t, DType dt);
// batch_mean, batch_var per BN layer, interleaved.
void add_batch_stats(Signature& s, const ParamTable& t, const std::vector<layers::BnStats>& st);
Manifest make_manifest(const NetSpec& net, ModuleKind kind, const EmitOptions& o,
                       const Signature& in, const Signature& out);

// forward / eval / cam (forward.cpp).
Emitted emit_forward_like(const NetSpec& net, const ParamTable& t, ModuleKind kind,
                          const EmitOptions& o);
// grad_cam (grad_cam.cpp).
Emitted emit_grad_cam(const NetSpec& net, const ParamTable& t, const EmitOptions& o);
// loss / train_step / vjp / optimizer (train_step.cpp).
Emitted emit_train_like(const NetSpec& net, const ParamTable& t, ModuleKind kind,
                        const EmitOptions& o);

}  // namespace netspec::emit
