// Reference equality against torchvision (issue 7): tools/torchvision_reference.py builds a
// torchvision model with random weights and randomised BN statistics and writes its weights
// (safetensors, torchvision names), an input and its eval logits (f64); these helpers load the
// weights into netspec's eval module by the name mapping of docs/reference-weights.md, run it
// on an executor and measure max |netspec - torchvision| against max |torchvision|.
//
// timm models (not in Debian) come from the oracle venv's timm package, imported by path into
// Debian's python (timm_path(); tools/torchvision_reference.py --model timm:NAME).
//
// Use (a gtest body):
//   NETSPEC_SKIP_WITHOUT_TORCHVISION();   // or NETSPEC_SKIP_WITHOUT_TIMM();
//   auto r = reference::compare_zoo_with_torchvision("resnet18", "resnet18");
//   EXPECT_LE(r.max_abs_diff, 1e-4 * r.max_abs_ref) << r.str();
#pragma once
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/npy.h"
#include "core/process_env.h"
#include "core/safetensors.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"

namespace netspec::reference {

inline const char* kPython = "/usr/bin/python3";  // Debian's: torch 1.13 + torchvision 0.14

// True when Debian's python3 can import torch and torchvision (checked once per process).
inline bool torchvision_available() {
  static const bool ok = [] {
    export_openblas_coretype();  // Debian's torch loads OpenBLAS: SkylakeX only on AVX-512 CPUs
    std::string cmd =
        std::string(kPython) + " -c 'import torch, torchvision, numpy' >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  }();
  return ok;
}

#define NETSPEC_SKIP_WITHOUT_TORCHVISION()                                          \
  do {                                                                              \
    if (!::netspec::reference::torchvision_available())                             \
      GTEST_SKIP() << "/usr/bin/python3 cannot import torch + torchvision (Debian " \
                      "python3-torchvision): reference check skipped";              \
  } while (0)

// The timm package directory the reference tool imports (empty when none): $NETSPEC_TIMM_PATH if
// set (the package directory, a site-packages or a venv holding it), else the oracle venv of this
// build (NETSPEC_BINARY_DIR/venv: CI's build/venv), else of any build dir in the source tree
// (NETSPEC_SOURCE_DIR/build/*/venv, sorted), as scripts/install-oracles.sh BUILD_DIR creates it.
inline std::string find_timm_in(const std::filesystem::path& p) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(p / "__init__.py", ec)) return p.string();  // the package itself
  if (fs::is_regular_file(p / "timm" / "__init__.py", ec)) return (p / "timm").string();
  if (!fs::is_directory(p / "lib", ec)) return "";
  std::vector<fs::path> sites;  // a venv: lib/python3.X/site-packages/timm
  for (const auto& e : fs::directory_iterator(p / "lib", ec))
    if (e.path().filename().string().rfind("python3", 0) == 0) sites.push_back(e.path());
  std::sort(sites.begin(), sites.end());
  for (const auto& s : sites)
    if (fs::is_regular_file(s / "site-packages" / "timm" / "__init__.py", ec))
      return (s / "site-packages" / "timm").string();
  return "";
}

inline std::string timm_path() {
  static const std::string path = [] {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("NETSPEC_TIMM_PATH"); env && *env) return find_timm_in(env);
    std::vector<fs::path> venvs = {fs::path(NETSPEC_BINARY_DIR) / "venv"};
    std::vector<fs::path> others;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(NETSPEC_SOURCE_DIR) / "build", ec))
      if (e.is_directory(ec)) others.push_back(e.path() / "venv");
    std::sort(others.begin(), others.end());
    venvs.insert(venvs.end(), others.begin(), others.end());
    for (const auto& v : venvs)
      if (std::string t = find_timm_in(v); !t.empty()) return t;
    return std::string();
  }();
  return path;
}

// True when Debian's python3 has torch + torchvision and imports timm from timm_path().
inline bool timm_available() {
  static const bool ok = [] {
    if (!torchvision_available() || timm_path().empty()) return false;
    std::string cmd = fmt::format(
        "{} {}/tools/torchvision_reference.py --model timm:check --timm-path '{}' --check-import "
        ">/dev/null 2>&1",
        kPython, NETSPEC_SOURCE_DIR, timm_path());
    return std::system(cmd.c_str()) == 0;
  }();
  return ok;
}

#define NETSPEC_SKIP_WITHOUT_TIMM()                                                               \
  do {                                                                                            \
    if (!::netspec::reference::timm_available())                                                  \
      GTEST_SKIP() << "no timm for /usr/bin/python3 (torch + torchvision from Debian, timm from " \
                      "the oracle venv: scripts/install-oracles.sh BUILD_DIR, or "                \
                      "NETSPEC_TIMM_PATH=<timm package dir>; found '"                             \
                   << ::netspec::reference::timm_path() << "'): reference check skipped";         \
  } while (0)

struct RefOptions {
  int classes = 10;
  int batch = 2;
  int size = 64;  // input height = width
  int seed = 0;
  std::string backend = "cpu";
  bool f64_logits = true;  // false: torchvision's logits in f32 (its f64 path is slow for big nets)
  std::string extra_args;  // more tool arguments (e.g. "--timm-arg img_size=64 --perturb 0.05")
};

// One pairing of a netspec tensor with the torchvision tensor loaded into it.
struct NamePair {
  std::string netspec;
  std::string torch;
};

struct RefResult {
  std::string net;
  double max_abs_diff = 0;  // max over logits of |netspec - torchvision(f64)|
  double max_abs_ref = 0;   // max |torchvision logit|
  std::vector<NamePair> mapping;
  double rel() const { return max_abs_ref > 0 ? max_abs_diff / max_abs_ref : max_abs_diff; }
  std::string str() const {
    return fmt::format("{}: max|Δ| {:.3g}, max|ref| {:.4g}, max|Δ|/max|ref| {:.3g}", net,
                       max_abs_diff, max_abs_ref, rel());
  }
};

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
struct TempDir {
  std::string path;
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/netspec-ref-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) fail("reference", "mkdtemp {} failed", tmpl);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

struct RefFiles {
  SafeTensors weights;  // torchvision names, state_dict order
  Tensor x;             // [batch, 3, size, size] f32
  Tensor logits;        // [batch, classes] f64 (values rounded to f32 with --f32-logits)
};

// Runs tools/torchvision_reference.py for torchvision.models.<model> (timm:NAME: timm's model from
// timm_path()) into `dir`; fails with the script's output when it does not succeed.
inline RefFiles run_torchvision_reference(const std::string& model, const RefOptions& o,
                                          const std::string& dir) {
  std::string log = dir + "/reference.log";
  export_openblas_coretype();
  std::string extra = o.extra_args;
  if (model.rfind("timm:", 0) == 0) extra += fmt::format(" --timm-path '{}'", timm_path());
  std::string cmd = fmt::format(
      "{} {}/tools/torchvision_reference.py --model {} --classes {} --batch {} --size {} "
      "--seed {} --out {} {} {} >{} 2>&1",
      kPython, NETSPEC_SOURCE_DIR, model, o.classes, o.batch, o.size, o.seed, dir,
      o.f64_logits ? "" : "--f32-logits", extra, log);
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream f(log);
    std::stringstream ss;
    ss << f.rdbuf();
    fail("reference", "torchvision_reference.py {} failed:\n{}", model, ss.str());
  }
  return {read_safetensors(dir + "/weights.safetensors"), read_npy(dir + "/input.npy"),
          read_npy(dir + "/logits.npy")};
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The eval module's weight inputs (every parameter in ParamTable order, then running_mean,
// running_var per BnDesc) from torchvision tensors. Mapping (docs/reference-weights.md): the
// file's parameters (names not ending in .running_mean/.running_var) pair with the ParamTable's
// parameters in order, its running stats with the BnDescs in order; every shape must be equal,
// the counts must be equal, and the torchvision module holding each BN's running stats must be
// the module whose .weight/.bias paired with that BN's gamma/beta. `mapping` gets every pair.
inline std::vector<Tensor> eval_weights(const ParamTable& t, const SafeTensors& st,
                                        std::vector<NamePair>* mapping = nullptr) {
  std::vector<const std::pair<std::string, Tensor>*> params, stats;
  for (const auto& e : st.tensors)
    (ends_with(e.first, ".running_mean") || ends_with(e.first, ".running_var") ? stats : params)
        .push_back(&e);
  if (params.size() != t.params.size())
    fail("reference", "parameter count (got {} torchvision tensors, expected {} netspec params)",
         params.size(), t.params.size());
  if (stats.size() != 2 * t.bns.size())
    fail("reference", "BN running stats (got {} torchvision tensors, expected {} = 2 x {} BNs)",
         stats.size(), 2 * t.bns.size(), t.bns.size());
  std::vector<Tensor> out;
  std::map<std::string, std::string> torch_of;  // netspec param name -> torchvision name
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& [tname, tensor] = *params[i];
    const ParamDesc& p = t.params[i];
    if (tensor.shape() != p.shape)
      fail("reference", "param {} {} <- torchvision {}: shape (got {}, expected {})", i, p.name,
           tname, shape_str(tensor.shape()), shape_str(p.shape));
    torch_of[p.name] = tname;
    out.push_back(tensor);
    if (mapping) mapping->push_back({p.name, tname});
  }
  for (size_t k = 0; k < t.bns.size(); ++k) {
    const BnDesc& bn = t.bns[k];
    const auto& [mname, mean] = *stats[2 * k];
    const auto& [vname, var] = *stats[2 * k + 1];
    std::string module = mname.substr(0, mname.size() - std::string(".running_mean").size());
    if (!ends_with(mname, ".running_mean") || vname != module + ".running_var")
      fail("reference", "BN {} {}: running stats out of order (got {}, {})", k, bn.name, mname,
           vname);
    auto w = torch_of.find(bn.name + ".weight");
    if (w == torch_of.end() || w->second != module + ".weight")
      fail("reference", "BN {} {}: gamma came from {}, running stats from {}", k, bn.name,
           w == torch_of.end() ? "<no param>" : w->second, module);
    for (const Tensor* s : {&mean, &var})
      if (s->shape() != Shape{bn.channels})
        fail("reference", "BN {} {} <- {}: shape (got {}, expected [{}])", k, bn.name, module,
             shape_str(s->shape()), bn.channels);
    out.push_back(mean);
    out.push_back(var);
    if (mapping) {
      mapping->push_back({bn.name + ".running_mean", mname});
      mapping->push_back({bn.name + ".running_var", vname});
    }
  }
  return out;
}

// models/<zoo>.json at size x size with `classes` classes.
inline NetSpec zoo_net(const std::string& zoo, const RefOptions& o) {
  NetSpec net = load_spec_file(std::string(NETSPEC_SOURCE_DIR) + "/models/" + zoo + ".json").net;
  net.inputHeight = net.inputWidth = o.size;
  set_num_classes(net, o.classes);
  return net;
}

// Runs `net`'s eval module on `backend` with the torchvision weights and input; compares logits.
inline RefResult compare_eval(const NetSpec& net, const RefFiles& f, const RefOptions& o) {
  ParamTable t = build_param_table(net);
  RefResult r;
  r.net = net.name;
  std::vector<Tensor> in = eval_weights(t, f.weights, &r.mapping);
  in.push_back(f.x);
  emit::EmitOptions eo;
  eo.batch = f.x.shape()[0];
  emit::Emitted e = emit::emit_module(net, ModuleKind::eval, eo);
  auto exe =
      exec::make_backend(o.backend)->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  Tensor y = exe->run("main", in).at(0);
  if (y.shape() != f.logits.shape())
    fail("reference", "{}: logits shape (got {}, expected {})", net.name, shape_str(y.shape()),
         shape_str(f.logits.shape()));
  for (int64_t i = 0; i < y.numel(); ++i) {
    r.max_abs_diff = std::max(r.max_abs_diff, std::abs(y.as_double(i) - f.logits.as_double(i)));
    r.max_abs_ref = std::max(r.max_abs_ref, std::abs(f.logits.as_double(i)));
  }
  return r;
}

// The whole check for a net built by the caller: the reference tool's `model` vs `net`.
inline RefResult compare_net_with_torchvision(const NetSpec& net, const std::string& model,
                                              const RefOptions& o = {}) {
  TempDir dir;
  RefFiles f = run_torchvision_reference(model, o, dir.path);
  return compare_eval(net, f, o);
}

// The whole check: torchvision.models.<tv_model> vs models/<zoo>.json (resized per `o`).
inline RefResult compare_zoo_with_torchvision(const std::string& zoo, const std::string& tv_model,
                                              const RefOptions& o = {}) {
  return compare_net_with_torchvision(zoo_net(zoo, o), tv_model, o);
}

}  // namespace netspec::reference
