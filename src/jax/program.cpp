// The JAX program of a net (program.h): netspec's forward / loss / optimizer IR translated op by op
// (translate.h), framed by the ParamTable, init, a train_step using jax.value_and_grad, a
// checkpoint reader and a __main__ that trains a few steps on synthetic data.
#include "jax/program.h"

#include <fmt/format.h>

#include "core/error.h"
#include "emit/emit.h"
#include "emit/signature.h"
#include "hlo/passes.h"
#include "jax/translate.h"
#include "jax/translator.h"
#include "layers/param_table.h"

namespace netspec::jax {
namespace {

// netspec's own lowering, which the program translates.
using emit::emit_forward_graph;
using emit::emit_module;
using emit::EmitOptions;
using emit::Emitted;
using emit::ForwardOut;
using emit::input_type;
using emit::TensorInfo;
using emit::train_masks;
using emit::with_batch;

// The program in `to` (f64): netspec's f32 IR rewritten as gradcheck does (hlo passes).
void widen(hlo::Module& m, DType to) {
  if (to != DType::kF32) hlo::convert_float_types(m, DType::kF32, to);
}

constexpr const char* kX64 = "\njax.config.update(\"jax_enable_x64\", True)  # an f64 program\n";

std::string quoted_list(const std::vector<std::string>& v) {
  std::vector<std::string> q;
  for (const auto& s : v) q.push_back(fmt::format("\"{}\"", s));
  return fmt::format("[{}]", fmt::join(q, ", "));
}

// One group per layer, named layer<i>_<kind> (plus _eval for eval bodies).
std::vector<Group> layer_groups(const ParamTable& t, const std::vector<size_t>& begin, size_t n_ops,
                                const std::string& suffix) {
  std::vector<Group> gs;
  if (!begin.empty() && begin[0] > 0) gs.push_back({"prologue" + suffix, "", 0, begin[0]});
  for (size_t i = 0; i < begin.size(); ++i) {
    const LayerInfo& li = t.layers[i];
    gs.push_back({fmt::format("layer{}_{}{}", i, li.kind, suffix),
                  fmt::format("layers.{} {}: {} -> {} per sample", i, li.kind, py_tuple(li.in),
                              py_tuple(li.out)),
                  begin[i], i + 1 < begin.size() ? begin[i + 1] : n_ops});
  }
  return gs;
}

std::string driver(const std::string& sig, const std::string& doc, const PyFunc& pf,
                   const std::string& ret) {
  std::string s = fmt::format("def {}:\n    \"\"\"{}\"\"\"\n", sig, doc);
  for (const auto& l : pf.body) s += "    " + l + "\n";
  return s + "    return " + ret + "\n";
}

std::string defs(const PyFunc& pf, const std::vector<std::string>& skip = {}) {
  std::string s;
  for (const auto& d : pf.defs) {
    bool dup = false;
    for (const auto& k : skip) dup = dup || k == d;
    if (!dup) s += d + "\n\n";
  }
  return s;
}

struct Parts {
  DType dtype = DType::kF32;  // of the program (the IR is built in f32, then widened)
  std::string train_defs, train_fn, eval_defs, eval_fn, loss_fn, opt_fn;
};

// forward_train(params, x, masks) -> (logits, stats): the train traversal, one group per layer.
void forward_parts(const NetSpec& net, const ParamTable& t, const EmitOptions& o,
                   const std::vector<TensorInfo>& masks, Parts& p,
                   std::map<std::string, std::string>& callees) {
  hlo::Module m;
  std::vector<hlo::Type> in;
  std::vector<ArgRef> refs;
  for (const auto& d : t.params) {
    in.push_back(hlo::Type::tensor(o.dtype, d.shape));
    refs.push_back({"params", d.name});
  }
  in.push_back(input_type(net, t, o));
  refs.push_back({"", "x"});
  for (const auto& mk : masks) {
    in.push_back(hlo::Type::tensor(mk.dtype, mk.shape));
    refs.push_back({"masks", mk.name});
  }
  const size_t np = t.params.size();
  hlo::Func* f = m.add_func("forward_train", in);
  hlo::Builder b(f->body.get());
  layers::DropPath drop;
  hlo::Value* dropout = nullptr;
  for (size_t k = 0; k < masks.size(); ++k) {
    if (masks[k].name == "dropout")
      dropout = f->arg(np + 1 + k);
    else
      drop.masks.push_back(f->arg(np + 1 + k));
  }
  std::vector<hlo::Value*> params;
  for (size_t i = 0; i < np; ++i) params.push_back(f->arg(i));
  ForwardOut fo =
      emit_forward_graph(b, net, t, params, f->arg(np), true, {},
                         drop.masks.empty() ? nullptr : &drop, dropout, 1, nullptr, o.precision);
  std::vector<hlo::Value*> rets{fo.logits};
  for (const auto& s : fo.batch_stats) {
    rets.push_back(s.mean);
    rets.push_back(s.var);
  }
  b.func_return(rets);
  widen(m, p.dtype);
  std::vector<std::string> targets{""};
  for (const auto& bn : t.bns)
    for (const char* s : {".batch_mean", ".batch_var"})
      targets.push_back(fmt::format("stats[\"{}{}\"]", bn.name, s));
  PyFunc pf = translate(*f, refs, layer_groups(t, fo.layer_begin, f->body->ops.size() - 1, ""),
                        callees, targets);
  pf.body.insert(pf.body.begin(), {"_check_input(x)", "stats = {}"});
  for (size_t k = 1; k < targets.size(); ++k)  // a statistic a later layer also reads
    if (pf.results[k] != targets[k]) pf.body.push_back(targets[k] + " = " + pf.results[k]);
  p.train_defs = defs(pf);
  p.train_fn = driver(
      "forward_train(params, x, masks=None)",
      "Train mode: BN on batch statistics. Returns (logits, {bn.batch_mean / bn.batch_var}).", pf,
      pf.results[0] + ", stats");

  // Eval: BN on running statistics; layer bodies identical to the train ones are reused.
  hlo::Module me;
  std::vector<hlo::Type> ein(in.begin(), in.begin() + static_cast<long>(np));
  std::vector<ArgRef> erefs(refs.begin(), refs.begin() + static_cast<long>(np));
  for (const auto& bn : t.bns)
    for (const char* s : {".running_mean", ".running_var"}) {
      ein.push_back(hlo::Type::tensor(o.dtype, {bn.channels}));
      erefs.push_back({"running", bn.name + s});
    }
  ein.push_back(input_type(net, t, o));
  erefs.push_back({"", "x"});
  hlo::Func* fe = me.add_func("forward_eval", ein);
  hlo::Builder be(fe->body.get());
  std::vector<hlo::Value*> eparams;
  for (size_t i = 0; i < np; ++i) eparams.push_back(fe->arg(i));
  std::vector<layers::BnStats> running;
  for (size_t k = 0; k < t.bns.size(); ++k)
    running.push_back({fe->arg(np + 2 * k), fe->arg(np + 2 * k + 1)});
  ForwardOut eo = emit_forward_graph(be, net, t, eparams, fe->arg(np + 2 * t.bns.size()), false,
                                     running, nullptr, nullptr, 1, nullptr, o.precision);
  be.func_return({eo.logits});
  widen(me, p.dtype);
  PyFunc pe = translate(
      *fe, erefs, layer_groups(t, eo.layer_begin, fe->body->ops.size() - 1, "_eval"), callees);
  // An eval group whose text equals the train group's (minus the _eval suffix) calls that one.
  std::vector<std::string> same;
  for (size_t i = 0; i < pe.defs.size(); ++i) {
    std::string d = pe.defs[i];
    size_t at = d.find("_eval(");
    if (at == std::string::npos) continue;
    std::string as_train = d.substr(0, at) + d.substr(at + 5);
    for (const auto& td : pf.defs)
      if (td == as_train) {
        same.push_back(d);
        std::string fname = d.substr(4, at - 4);  // "def <fname>_eval("
        for (auto& l : pe.body) {
          size_t q = l.find(fname + "_eval(");
          if (q != std::string::npos) l.erase(q + fname.size(), 5);
        }
      }
  }
  pe.body.insert(pe.body.begin(), "_check_input(x)");
  p.eval_defs = defs(pe, same);
  p.eval_fn = driver("forward_eval(params, running, x)",
                     "Eval mode: BN on running statistics. Returns logits.", pe, pe.results[0]);
}

void loss_part(const NetSpec& net, const ParamTable& t, const EmitOptions& o, Parts& p,
               std::map<std::string, std::string>& callees) {
  hlo::Module m;
  hlo::Type logits = hlo::Type::tensor(o.dtype, with_batch(o.batch, t.output));
  (void)net;
  hlo::Func* f = m.add_func("loss_of_logits", {logits, losses::label_type(o.loss, logits)});
  hlo::Builder b(f->body.get());
  b.func_return({losses::emit_loss(b, o.loss, f->arg(0), f->arg(1))});
  widen(m, p.dtype);
  PyFunc pf = translate(*f, {{"", "logits"}, {"", "labels"}},
                        {{"_loss_body", "", 0, f->body->ops.size() - 1}}, callees);
  p.loss_fn =
      defs(pf) + driver("loss_of_logits(logits, labels)",
                        fmt::format("The {} loss (mean over the batch).", enum_name(o.loss.kind)),
                        pf, pf.results[0]);
}

void optimizer_part(const NetSpec& net, const ParamTable& t, const EmitOptions& o, Parts& p,
                    std::map<std::string, std::string>& callees) {
  Emitted e = emit_module(net, t, ModuleKind::optimizer, o);
  widen(*e.module, p.dtype);
  const hlo::Func& f = *e.module->entry();
  std::vector<ArgRef> refs;
  for (const auto& in : e.manifest.inputs) {
    if (in.role == "param")
      refs.push_back({"params", in.name});
    else if (in.role == "gradient")
      refs.push_back({"grads", in.name.substr(2)});
    else if (in.role == "optimizer_state")
      refs.push_back({"state", in.name});
    else
      refs.push_back({"", in.name});
  }
  PyFunc pf = translate(f, refs, {{"_update", "", 0, f.body->ops.size() - 1}}, callees);
  std::vector<std::string> ps, ss;
  for (size_t k = 0; k < e.manifest.outputs.size(); ++k) {
    const auto& out = e.manifest.outputs[k];
    (out.role == "param" ? ps : ss).push_back(fmt::format("\"{}\": {}", out.name, pf.results[k]));
  }
  p.opt_fn = defs(pf) +
             driver("optimizer_update(params, grads, state, lr, step)",
                    fmt::format("{} update (src/optim): step is the 1-based update "
                                "number. Returns (new params, new state).",
                                enum_name(o.optim.kind)),
                    pf, fmt::format("{{{}}}, {{{}}}", fmt::join(ps, ", "), fmt::join(ss, ", ")));
}

// The program's text around the translated parts ({train_defs} ...); fmt fields in braces,
// Python's own braces doubled.
constexpr char kProgram[] =
    R"PY("""netspec net `{net}` as a JAX program, emitted by `netspec emit {net} --jax` (docs/jax.md).

The forward, loss and optimizer are netspec's own lowering (the StableHLO of its modules)
translated op by op into jax.lax; the backward is jax.value_and_grad's. Shapes are static:
the batch size {batch} is baked in. Loss: {loss}. Optimizer: {opt}.
"""
import json
import math
import struct
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
{x64}
NET = "{net}"
BATCH = {batch}
INPUT = ({xshape}, {xdtype})
LABELS = ({lshape}, {ldtype})
LEARNING_RATE = {lr}
INIT = "{init}"
FLOAT = {float}  # every float tensor (params, state, activations)
# The ParamTable: name, shape, init rule, weight decay, layer index (the order of every signature)
PARAMS = [
{params}]
# BatchNorm layers: name, channels (running stats "<name>.running_mean" / ".running_var")
BNS = [
{bns}]
# Optimizer state slots, slot-major: state["<slot>.<param name>"]
STATE_SLOTS = {slots}
# Drop-path / dropout keep masks (values 0 or 1/(1-p)): name, shape, rate p
MASKS = [
{masks}]


def init(key):
    """Parameters drawn by netspec's rules (src/train/init.cpp) with JAX's random bits."""
    params = {{}}
    linear_layer, linear_fan_in = -1, 0
    for k, (name, shape, kind, _, layer) in zip(jax.random.split(key, max(len(PARAMS), 1)), PARAMS):
        rf = math.prod(shape[2:])
        f32 = FLOAT
        if kind == "zeros":
            v = jnp.zeros(shape, f32)
            if INIT == "he" and layer == linear_layer and len(shape) == 1 and name.endswith(".bias"):
                b = 1.0 / math.sqrt(linear_fan_in)  # nn.Linear's bias: U(+-1/sqrt(fan_in))
                v = jax.random.uniform(k, shape, f32, -b, b)
        elif kind in ("ones", "ssmD"):
            v = jnp.ones(shape, f32)
        elif kind in ("linearWeight", "convWeight") and INIT != "he":
            v = 0.02 * jax.random.truncated_normal(k, -2.0, 2.0, shape, f32)
        elif kind == "linearWeight":  # kaiming_uniform(a=sqrt 5) == U(+-1/sqrt(fan_in))
            b = 1.0 / math.sqrt(shape[1] * rf)
            v = jax.random.uniform(k, shape, f32, -b, b)
            linear_layer, linear_fan_in = layer, shape[1] * rf
        elif kind == "convWeight":  # He normal, fan_out
            v = math.sqrt(2.0 / (shape[0] * rf)) * jax.random.normal(k, shape, f32)
        elif kind in ("embedding", "posEmbed", "classToken", "relPosBias"):
            v = 0.02 * jax.random.truncated_normal(k, -2.0, 2.0, shape, f32)
        elif kind == "layerScale":
            v = jnp.full(shape, 1e-6, f32)
        elif kind == "ssmALog":  # Mamba: A = -[1..N] stored as ln(n + 1)
            v = jnp.broadcast_to(jnp.log(jnp.arange(1, shape[1] + 1, dtype=f32)), shape)
        elif kind == "ssmDtBias":  # softplus^-1(dt), dt = exp(U(ln 1e-3, ln 0.1)) >= 1e-4
            dt = jnp.exp(jax.random.uniform(k, shape, f32, math.log(1e-3), math.log(0.1)))
            dt = jnp.maximum(dt, 1e-4)
            v = dt + jnp.log(-jnp.expm1(-dt))
        else:
            raise ValueError(f"[init] {{name}}: unknown init {{kind}}")
        params[name] = v
    return params


def init_state(params):
    """Optimizer state: zeros, one tensor per slot and parameter."""
    return {{f"{{s}}.{{n}}": jnp.zeros_like(params[n]) for s in STATE_SLOTS for n, *_ in PARAMS}}


def init_running():
    """BN running statistics: mean 0, var 1."""
    r = {{}}
    for name, ch in BNS:
        r[name + ".running_mean"] = jnp.zeros((ch,), FLOAT)
        r[name + ".running_var"] = jnp.ones((ch,), FLOAT)
    return r


# Custom VJPs: netspec differentiates some functions by a backward of its own (flash attention;
# AF2's stop-gradient, whose backward is zero). They are jax.custom_vjp with that backward, so
# jax.grad gives netspec's gradient. CUSTOM_VJP = False (set before tracing) lets JAX
# differentiate their forwards instead: flash attention's gradient is then JAX's own, and a
# stop-gradient no longer stops.
CUSTOM_VJP = True


def _custom_vjp(f, bwd):
    """f whose VJP is bwd(*args, *results, *result_cotangents) -> one cotangent per arg (None: 0)."""
    g = jax.custom_vjp(f)

    def fwd(*args):
        out = f(*args)
        return out, (args, out)

    def rev(res, cot):
        args, out = res
        outs, cots = (out, cot) if isinstance(out, tuple) else ((out,), (cot,))
        return bwd(*args, *outs, *cots)

    g.defvjp(fwd, rev)
    return lambda *args: g(*args) if CUSTOM_VJP else f(*args)


def _check_input(x):
    """Shapes are static (StableHLO's): x must have INPUT's shape, batch included."""
    if tuple(x.shape) != INPUT[0]:
        raise ValueError(f"[{{NET}}] x has shape {{tuple(x.shape)}} (expected {{INPUT[0]}}): the batch "
                         f"is baked in; emit the program again with --batch {{x.shape[0]}}")


# ---- layers, train mode (one function per layer of the spec) ----

{callees}{train_defs}{train_fn}

# ---- layers, eval mode (only those whose body differs from train mode) ----

{eval_defs}{eval_fn}

def forward(params, x, train=True, running=None, masks=None):
    """Logits; train=True also returns the BN batch statistics."""
    return forward_train(params, x, masks) if train else forward_eval(params, running, x)


def eval(params, running, x):  # noqa: A001 (the name the issue asks for)
    return forward_eval(params, running, x)


# ---- loss ----

{loss_fn}

def loss(params, x, labels, masks=None):
    """(loss, BN batch statistics) of a train-mode forward."""
    logits, stats = forward_train(params, x, masks)
    return loss_of_logits(logits, labels), stats


# ---- optimizer ----

{opt_fn}

def train_step(params, state, x, labels, lr, step, masks=None):
    """One update: returns (params, state, loss, BN batch statistics), as netspec's train_step."""
    (l, stats), grads = jax.value_and_grad(loss, has_aux=True)(params, x, labels, masks)
    params, state = optimizer_update(params, grads, state, jnp.asarray(lr, FLOAT),
                                     jnp.asarray(step, jnp.int32))
    return params, state, l, stats


def update_running(running, stats, count, momentum=0.1):
    """PyTorch's running-stat update from the batch stats; count = elements per channel (B*H*W)."""
    out = dict(running)
    for name, _ in BNS:
        m, v = stats[name + ".batch_mean"], stats[name + ".batch_var"]
        out[name + ".running_mean"] = (1 - momentum) * running[name + ".running_mean"] + momentum * m
        unbiased = v * count / max(count - 1, 1)
        out[name + ".running_var"] = (1 - momentum) * running[name + ".running_var"] + momentum * unbiased
    return out


_ST_DTYPES = {{"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64,
              "U8": np.uint8, "BOOL": np.bool_, "F16": np.float16}}


def load_safetensors(path):
    """All tensors of a safetensors file (a netspec checkpoint): name -> jnp array (floats as FLOAT)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {{}}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        lo, hi = e["data_offsets"]
        a = np.frombuffer(data[lo:hi], dtype=_ST_DTYPES[e["dtype"]]).reshape(e["shape"])
        out[name] = jnp.asarray(a, FLOAT if np.issubdtype(a.dtype, np.floating) else a.dtype)
    return out


def load_checkpoint(path):
    """(params, state, running) from a netspec checkpoint; missing state / running -> fresh."""
    t = load_safetensors(path)
    params = {{n: t[n] for n, *_ in PARAMS}}
    state = init_state(params)
    state.update({{k: t[k] for k in state if k in t}})
    running = init_running()
    running.update({{k: t[k] for k in running if k in t}})
    return params, state, running


def synthetic_batch(key):
    """Random inputs and labels of the right shapes (labels: class ids / targets in range)."""
    kx, kl = jax.random.split(key)
    if jnp.issubdtype(INPUT[1], jnp.integer):
        x = jax.random.randint(kx, INPUT[0], 0, 2, INPUT[1])
    else:
        x = jax.random.normal(kx, INPUT[0], INPUT[1])
    if jnp.issubdtype(LABELS[1], jnp.integer):
        labels = jax.random.randint(kl, LABELS[0], 0, {nlabel}, LABELS[1])
    else:
        labels = jax.random.uniform(kl, LABELS[0], LABELS[1])
    return x, labels


def synthetic_masks(key):
    out = {{}}
    for (name, shape, p), k in zip(MASKS, jax.random.split(key, max(len(MASKS), 1))):
        keep = jax.random.bernoulli(k, 1 - p, shape)
        out[name] = jnp.where(keep, 1.0 / (1 - p), 0.0).astype(FLOAT)
    return out


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    key = jax.random.PRNGKey(0)
    params = jax.jit(init)(key)
    state = init_state(params)
    x, labels = synthetic_batch(jax.random.PRNGKey(1))
    step_fn = jax.jit(train_step)
    for i in range(1, steps + 1):
        masks = synthetic_masks(jax.random.PRNGKey(100 + i))
        params, state, l, _ = step_fn(params, state, x, labels, LEARNING_RATE, i, masks)
        print(f"step {{i}} loss {{float(l):.6f}}")
)PY";

}  // namespace

std::string emit_program(const NetSpec& net, const TrainConfig& tc, int64_t batch, DType dtype) {
  if (dtype != DType::kF32 && dtype != DType::kF64)
    fail("emit jax", "dtype must be f32 or f64 (got {})", dtype_name(dtype));
  layers::check_lowerable(net);
  const ParamTable t = build_param_table(net);
  EmitOptions o = EmitOptions::from_train(tc, batch);
  const std::vector<TensorInfo> masks = train_masks(net, t, o);
  std::map<std::string, std::string> callees;
  Parts p;
  p.dtype = dtype;
  forward_parts(net, t, o, masks, p, callees);
  loss_part(net, t, o, p, callees);
  optimizer_part(net, t, o, p, callees);

  hlo::Type xt = input_type(net, t, o);
  if (xt.dtype() == DType::kF32) xt = hlo::Type::tensor(dtype, xt.shape());
  hlo::Type lt = losses::label_type(o.loss, hlo::Type::tensor(dtype, with_batch(batch, t.output)));
  std::string params, bns, mks;
  for (const auto& d : t.params)
    params += fmt::format("    (\"{}\", {}, \"{}\", {}, {}),\n", d.name, py_tuple(d.shape),
                          enum_name(d.init), d.decay ? "True" : "False", d.layer);
  for (const auto& bn : t.bns) bns += fmt::format("    (\"{}\", {}),\n", bn.name, bn.channels);
  for (const auto& mk : masks)
    mks += fmt::format("    (\"{}\", {}, {}),\n", mk.name, py_tuple(mk.shape), mk.rate);
  std::string callee_defs;
  for (const auto& [n, d] : callees) callee_defs += d + "\n\n";

  return fmt::format(
      kProgram, fmt::arg("net", net.name), fmt::arg("batch", batch),
      fmt::arg("loss", enum_name(o.loss.kind)), fmt::arg("opt", enum_name(o.optim.kind)),
      fmt::arg("xshape", py_tuple(xt.shape())), fmt::arg("xdtype", py_dtype(xt.dtype())),
      fmt::arg("lshape", py_tuple(lt.shape())), fmt::arg("ldtype", py_dtype(lt.dtype())),
      fmt::arg("lr", tc.learningRate), fmt::arg("init", enum_name(tc.init)),
      fmt::arg("float", py_dtype(dtype)), fmt::arg("x64", dtype == DType::kF64 ? kX64 : ""),
      fmt::arg("params", params), fmt::arg("bns", bns),
      fmt::arg("slots", quoted_list(optim::state_slots(o.optim))), fmt::arg("masks", mks),
      fmt::arg("callees", callee_defs), fmt::arg("train_defs", p.train_defs),
      fmt::arg("train_fn", p.train_fn), fmt::arg("eval_defs", p.eval_defs),
      fmt::arg("eval_fn", p.eval_fn), fmt::arg("loss_fn", p.loss_fn), fmt::arg("opt_fn", p.opt_fn),
      fmt::arg("nlabel", t.output.empty() ? 1 : t.output.back()));
}

}  // namespace netspec::jax
