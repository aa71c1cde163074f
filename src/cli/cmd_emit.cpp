// `netspec emit NET|FILE.json --module KIND --batch B [--dtype f64] [...] [-o FILE.mlir]`: writes
// the StableHLO module and FILE.manifest.json beside it (stdout and no manifest when -o is
// absent); `--jax -o net.py` a JAX program instead (jax/program.h). Training settings come from the
// spec's "train" object, overridden by --optimizer / --loss.
// `netspec emit --module probe-attention --probe flash|dense|rope|flash-grad|... [--seq T
// --heads H --head-dim D --causal --block K --dtype f32|f64 --batch B] -o FILE.mlir` writes a
// standalone attention / RoPE module (emit/probes.h) that `netspec run` can execute.
// `netspec emit --module probe-seg-loss --loss perPixelDice [--batch B --classes NC --height H
// --width W --dtype f64 --gamma G --weights a,b,...] -o FILE.mlir`: the seg-loss block alone.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "core/file_check.h"
#include "emit/det_probes.h"
#include "emit/emit.h"
#include "emit/probes.h"
#include "hlo/passes.h"
#include "hlo/text/printer.h"
#include "jax/program.h"
#include "spec/zoo.h"

namespace netspec::cli {
namespace {

struct EmitArgs {
  std::string net;
  std::string module = "forward";
  int64_t batch = 1;
  int classes = 0;
  int replicas = 1;
  bool sync_bn = false;
  std::string optimizer, loss, out;
  bool generic = false;
  bool jax = false;            // a JAX program (jax/program.h) instead of a module
  emit::AttentionProbe probe;  // --module probe-attention
  emit::DetProbe det;          // --module probe-diou | probe-anchor-loss | ... (det_probes.h)
  std::string dtype = "f32";
  int64_t height = 4, width = 4;  // --module probe-seg-loss
  double gamma = 2, smoothing = 0;
  std::vector<double> weights;
};

template <class E>
E parse_or_fail(const std::string& flag, const std::string& s) {
  auto v = parse_enum<E>(s);
  if (!v) fail("emit", "{} {}: unknown (expected one of {})", flag, s, enum_choices<E>());
  return *v;
}

void write_file(const std::string& path, const std::string& text) {
  // `-o newdir/x.mlir`: the folder is made, as `data synth -o` does.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir) &&
      !std::filesystem::create_directories(dir, ec))
    fail("emit", "cannot create the folder '{}' for {}: {}", dir.string(), path,
         ec ? ec.message() : "it exists and is not a directory");
  write_file_atomic(path, text, "emit");
}

void write_outputs(const EmitArgs& a, const emit::Emitted& e) {
  std::string text = hlo::print_module(*e.module, {a.generic});
  if (a.out.empty()) {
    fmt::print("{}", text);
    return;
  }
  write_file(a.out, text);
  std::string base = a.out;
  if (base.size() > 5 && base.ends_with(".mlir")) base.resize(base.size() - 5);
  write_file(base + ".manifest.json", e.manifest.to_json());
  fmt::print(stderr, "wrote {} and {}.manifest.json ({} inputs, {} outputs)\n", a.out, base,
             e.manifest.inputs.size(), e.manifest.outputs.size());
}

// --dtype: f32 or f64. A probe is built in it; a net's module or program in f64 is emitted in f32,
// then every f32 type, constant and manifest entry widened (hlo::convert_float_types, as
// gradcheck does).
DType float_dtype(const EmitArgs& a) {
  auto dt = dtype_from_name(a.dtype);
  if (!dt || (*dt != DType::kF32 && *dt != DType::kF64))
    fail("emit", "--dtype {}: unknown (expected f32 or f64)", a.dtype);
  return *dt;
}

void emit_probe(const EmitArgs& a) {
  if (!a.net.empty()) fail("emit", "--module probe-attention takes no net (got '{}')", a.net);
  emit::AttentionProbe p = a.probe;
  p.batch = a.batch;
  p.dtype = float_dtype(a);
  write_outputs(a, emit::emit_attention_probe(p));
}

void emit_det_probe(const EmitArgs& a) {
  if (!a.net.empty()) fail("emit", "--module {} takes no net (got '{}')", a.module, a.net);
  emit::DetProbe p = a.det;
  p.module = a.module;
  p.batch = a.batch;
  if (a.classes > 0) p.classes = a.classes;  // --classes: K of the detection probes (default 3)
  p.dtype = float_dtype(a);
  write_outputs(a, emit::emit_det_probe(p));
}

void emit_seg_loss(const EmitArgs& a) {
  if (!a.net.empty()) fail("emit", "--module probe-seg-loss takes no net (got '{}')", a.net);
  emit::SegLossProbe p;
  p.loss.kind = parse_or_fail<LossKind>("--loss", a.loss.empty() ? "perPixelCE" : a.loss);
  p.loss.focal_gamma = losses::loss_traits(p.loss.kind).focal ? a.gamma : 0.0;
  p.loss.label_smoothing = a.smoothing;
  p.loss.class_weights = a.weights;
  p.batch = a.batch;
  p.classes = a.classes > 0 ? a.classes : 3;
  p.height = a.height;
  p.width = a.width;
  p.dtype = float_dtype(a);
  write_outputs(a, emit::emit_seg_loss_probe(p));
}

void widen(emit::Emitted& e, DType to) {
  if (to == DType::kF32) return;
  hlo::convert_float_types(*e.module, DType::kF32, to);
  for (auto* v : {&e.manifest.inputs, &e.manifest.outputs})
    for (auto& t : *v)
      if (t.dtype == DType::kF32) t.dtype = to;
}

void emit_command(const EmitArgs& a) {
  if (a.module == "probe-attention") return emit_probe(a);
  if (emit::is_det_probe(a.module)) return emit_det_probe(a);
  if (a.module == "probe-seg-loss") return emit_seg_loss(a);
  if (a.net.empty()) fail("emit", "a net (zoo name or spec .json) is required");
  SpecFile spec = resolve_net(a.net);
  if (a.classes > 0) set_num_classes(spec.net, a.classes);
  TrainConfig tc = spec.train.value_or(TrainConfig{});
  if (!a.optimizer.empty()) tc.optimizer = parse_or_fail<OptimizerKind>("--optimizer", a.optimizer);
  if (!a.loss.empty()) tc.lossKind = parse_or_fail<LossKind>("--loss", a.loss);
  // A nerfRenderMse net's batch counts rays, as batchSize does in training: the modules take
  // batch x nerfSamples point rows.
  const int64_t rows = a.batch * losses::rows_per_sample(tc);
  if (a.jax) {
    std::string py = jax::emit_program(spec.net, tc, rows, float_dtype(a));
    if (a.out.empty()) return fmt::print("{}", py);
    write_file(a.out, py);
    return fmt::print(stderr, "wrote {} (JAX program, batch {}, {})\n", a.out, a.batch, a.dtype);
  }
  ModuleKind kind = parse_or_fail<ModuleKind>("--module", a.module);
  if (a.sync_bn) tc.syncBN = true;
  emit::EmitOptions eo = emit::EmitOptions::from_train(tc, rows);
  eo.replicas = a.replicas;
  emit::Emitted e = emit::emit_module(spec.net, kind, eo);
  widen(e, float_dtype(a));
  write_outputs(a, e);
}

}  // namespace

void register_emit_command(CLI::App& app) {
  auto args = std::make_shared<EmitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "emit",
      "Emit a StableHLO module for a net (zoo name or spec .json) and its manifest JSON.\n"
      "Modules: forward (BN on batch stats; returns logits and per-BN batch mean/var), eval (BN "
      "on running stats), cam (features before the last globalAvgPool + logits), train_step "
      "(forward, loss, backward, optimizer update; lr and step are inputs), vjp, optimizer.\n"
      "Optimizers: sgd (momentum, nesterov), adam (AdamW when weightDecay > 0), rmsprop (TF "
      "flavour: eps inside the sqrt), lamb. Losses: classCE, focal, softLabelCE, bce, "
      "floatTargetMse, nerfRenderMse, tokenCE, yoloAnchor, yolov1Masked, detrSet, perPixelCE, "
      "perPixelDice, perPixelDiceCE, perPixelWeightedCE, perPixelFocalCE, af2Fold.\n"
      "probe-attention (no net): a standalone attention / RoPE module picked by --probe.\n"
      "probe-diou, probe-yolov1, probe-anchor-loss, probe-fpn-loss, probe-fpn-neck, "
      "probe-fpn-detect (no net): detection losses / heads as (inputs -> loss, gradients).\n"
      "probe-seg-loss (no net): main(logits [B, NC, H, W], labels [B, H, W]) -> (loss, "
      "d_logits) for the per-pixel --loss.");
  cmd->add_option("net", args->net, "zoo name or spec .json file (not for probe-attention)");
  cmd->add_option("--module", args->module,
                  "forward | eval | cam | train_step | vjp | optimizer | loss | probe-attention | "
                  "probe-seg-loss | " +
                      emit::det_probe_choices())
      ->capture_default_str();
  cmd->add_option("--probe", args->probe.probe,
                  "probe-attention: " + emit::attention_probe_choices() +
                      " (-grad: main(inputs, cotangent) -> (output, input gradients))")
      ->capture_default_str();
  cmd->add_option("--seq", args->probe.seq, "probe-attention: sequence length T")
      ->capture_default_str();
  cmd->add_option("--heads", args->probe.heads, "probe-attention: heads H")->capture_default_str();
  cmd->add_option("--head-dim", args->probe.head_dim, "probe-attention: head dim dh")
      ->capture_default_str();
  cmd->add_flag("--causal", args->probe.causal, "probe-attention: causal mask");
  cmd->add_option("--grid", args->det.grid, "detection probes: finest grid g (multiple of 4)")
      ->capture_default_str();
  cmd->add_option("--anchors", args->det.anchors, "detection probes: anchors per cell")
      ->capture_default_str();

  cmd->add_option("--block", args->probe.block,
                  "probe-attention: flash key block (0 = largest divisor of T <= 256)")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtype,
                  "f32 | f64: the floats of the module (or --jax program; f64 = the f32 module "
                  "widened, as gradcheck runs it) or probe")
      ->capture_default_str();
  cmd->add_option("--height", args->height, "probe-seg-loss: H")->capture_default_str();
  cmd->add_option("--width", args->width, "probe-seg-loss: W")->capture_default_str();
  cmd->add_option("--gamma", args->gamma, "probe-seg-loss: perPixelFocalCE γ")
      ->capture_default_str();
  cmd->add_option("--smoothing", args->smoothing, "probe-seg-loss: label smoothing (CE half)");
  cmd->add_option("--weights", args->weights, "probe-seg-loss: perPixelWeightedCE class weights")
      ->delimiter(',');
  cmd->add_option("--batch", args->batch,
                  "batch size baked into the module (nerfRenderMse: rays, each nerfSamples rows)")
      ->capture_default_str();
  cmd->add_option("--classes", args->classes,
                  "resize the classifier head to N classes (probe-seg-loss: NC, default 3)");
  cmd->add_option("--replicas", args->replicas,
                  "data parallel: emit one of R replicas (--batch is the shard; train_step/loss "
                  "average gradients and loss with all_reduce)");
  cmd->add_flag("--sync-bn", args->sync_bn, "with --replicas: BN statistics over all replicas");
  cmd->add_option("--optimizer", args->optimizer, "override the spec's optimizer");
  cmd->add_option("--loss", args->loss, "override the spec's loss");
  cmd->add_flag("--generic", args->generic, "print MLIR's generic op form");
  cmd->add_flag("--jax", args->jax,
                "write a standalone JAX program (init, forward, eval, loss, train_step; "
                "docs/jax.md) instead of a module; -o net.py");
  cmd->add_option("-o,--output", args->out, "output .mlir (FILE.manifest.json beside it)");
  cmd->callback([args] { emit_command(*args); });
}

}  // namespace netspec::cli
