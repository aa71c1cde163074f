#include "exec/iree/iree_backend.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>

#include "core/error.h"
#include "core/npy.h"
#include "exec/backend.h"
#include "exec/compile_cache.h"
#include "exec/iree/iree_tools.h"
#include "hlo/text/printer.h"

namespace netspec::exec::iree {
namespace {

namespace fs = std::filesystem;

// A private folder, removed with its files when the module is dropped.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "netspec-iree-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) fail("iree", "cannot create a temp folder under {}", tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

// What a .vmfb depends on besides the module text: iree-compile's identity (path, size, mtime)
// and its flags (the environment's IREE_BACKEND / IREE_CHIP / IREE_EXTRA_FLAGS).
std::string compiler_key(const std::string& tool) {
  std::error_code ec;
  const auto size = fs::file_size(tool, ec);
  const auto mtime = fs::last_write_time(tool, ec).time_since_epoch().count();
  std::string key = fmt::format("iree-compile {} {} {}", tool, size, mtime);
  for (const std::string& f : compile_flags("IN", "OUT")) key += " " + f;
  return key + "\n";
}

// Counts of compiles and disk-cache hits (IreeBackend::counters).
struct Counts {
  int64_t compiles = 0, disk_hits = 0;
};

// The module compiled to a .vmfb (or taken from the disk cache: an entry's payload is the .vmfb);
// inputs/outputs travel as .npy files beside it.
class Compiled {
 public:
  explicit Compiled(const hlo::Module& m, const DiskCompileCache* disk = nullptr,
                    Counts* counts = nullptr) {
    const std::string src = (dir_ / "module.mlir").string();
    vmfb_ = (dir_ / "module.vmfb").string();
    const std::string text = hlo::print_module(m);
    const std::string tool = find_tool("iree-compile", "NETSPEC_IREE_COMPILE");
    const std::string key = disk ? compiler_key(tool) + text : "";
    if (disk)
      if (std::optional<std::string> vmfb = disk->load(key)) {
        std::ofstream(vmfb_, std::ios::binary) << *vmfb;
        if (counts) ++counts->disk_hits;
        return;
      }
    std::ofstream(src) << text;
    std::vector<std::string> argv{tool};
    for (std::string& f : compile_flags(src, vmfb_)) argv.push_back(std::move(f));
    const std::string log = (dir_ / "compile.log").string();
    if (int rc = run_tool(argv, log); rc != 0)
      fail("iree", "iree-compile failed (exit {}): {}", rc, file_tail(log));
    if (counts) ++counts->compiles;
    if (disk) {
      std::ifstream f(vmfb_, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
      disk->store(key, bytes);
    }
  }

  // The tool's common arguments for one call of `entry` on `inputs` (written as .npy).
  std::vector<std::string> call_args(const std::string& tool, std::string_view entry,
                                     const std::vector<Tensor>& inputs) const {
    std::vector<std::string> argv{find_tool(tool), "--module=" + vmfb_,
                                  "--device=" + runtime_device(),
                                  fmt::format("--function={}", entry)};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string p = (dir_ / fmt::format("in{}.npy", i)).string();
      write_npy(p, inputs[i]);
      argv.push_back("--input=@" + p);
    }
    return argv;
  }

  std::vector<Tensor> run(const hlo::Func& f, const std::vector<Tensor>& inputs) const {
    std::vector<std::string> argv = call_args("iree-run-module", f.name, inputs);
    std::vector<std::string> outs;
    for (size_t k = 0; k < f.result_types.size(); ++k) {
      outs.push_back((dir_ / fmt::format("out{}.npy", k)).string());
      argv.push_back("--output=@" + outs.back());
    }
    const std::string log = (dir_ / "run.log").string();
    if (int rc = run_tool(argv, log); rc != 0)
      fail("iree", "iree-run-module failed on @{} (exit {}): {}", f.name, rc, file_tail(log));
    std::vector<Tensor> res;
    for (size_t k = 0; k < outs.size(); ++k) {
      Tensor t = read_npy(outs[k]);
      const hlo::Type& ty = f.result_types[k];
      if (t.dtype() != ty.dtype() || t.shape() != ty.shape())
        fail("iree", "result {} of @{} is {} (expected {})", k, f.name, t.type_str(), ty.str());
      res.push_back(std::move(t));
    }
    return res;
  }

  double benchmark(const hlo::Func& f, const std::vector<Tensor>& inputs, int reps) const {
    std::vector<std::string> argv = call_args("iree-benchmark-module", f.name, inputs);
    argv.push_back(fmt::format("--benchmark_repetitions={}", std::max(reps, 1)));
    argv.push_back("--benchmark_min_time=1x");
    const std::string log = (dir_ / "bench.log").string();
    if (int rc = run_tool(argv, log); rc != 0)
      fail("iree", "iree-benchmark-module failed on @{} (exit {}): {}", f.name, rc, file_tail(log));
    // Google Benchmark's table: "BM_main/process_time/real_time_median   12.3 ms  ..." (or the
    // single row without _median when there is one repetition).
    std::ifstream in(log);
    const std::regex row(R"(^BM_\S+?(_median)?\s+([0-9.]+) (ns|us|ms|s)\b)");
    double ms = -1;
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, row)) continue;
      if (reps > 1 && !m[1].matched) continue;
      const double v = std::stod(m[2].str());
      const std::string u = m[3].str();
      ms = u == "ns" ? v * 1e-6 : u == "us" ? v * 1e-3 : u == "ms" ? v : v * 1e3;
    }
    if (ms < 0) fail("iree", "no timing row in iree-benchmark-module's output: {}", file_tail(log));
    return ms;
  }

 private:
  TempDir dir_;
  std::string vmfb_;
};

class IreeExecutable final : public Executable {
 public:
  IreeExecutable(std::shared_ptr<const hlo::Module> m, const DiskCompileCache* disk, Counts* counts)
      : module_(std::move(m)), compiled_(*module_, disk, counts) {}

  std::vector<Tensor> run(std::string_view entry, const std::vector<Tensor>& inputs) override {
    const hlo::Func& f = *module_->entry(entry);
    check_inputs(f, inputs);
    return compiled_.run(f, inputs);
  }

  std::vector<std::vector<Tensor>> run_replicated(
      std::string_view entry, const std::vector<std::vector<Tensor>>& inputs) override {
    if (inputs.size() != 1)
      fail("iree",
           "replicated runs are not supported by the iree backend (got {} replicas; "
           "use --backend xla or cpu)",
           inputs.size());
    return {run(entry, inputs[0])};
  }

  const Compiled& compiled() const { return compiled_; }

 private:
  std::shared_ptr<const hlo::Module> module_;
  Compiled compiled_;
};

// Compiled .vmfb files are kept on disk between runs (a resumed or repeated `train` compiles
// nothing): --compile-cache DIR|off, else $NETSPEC_COMPILE_CACHE, else the xla cache's sibling
// $XDG_CACHE_HOME/netspec/iree (or ~/.cache/netspec/iree).
class IreeBackend final : public Backend {
 public:
  explicit IreeBackend(const BackendOptions& o) {
    std::string dir = o.compile_cache;
    if (dir.empty())
      if (const char* v = std::getenv("NETSPEC_COMPILE_CACHE"); v && *v) dir = v;
    if (dir.empty()) {
      dir = default_compile_cache_dir();
      if (!dir.empty()) dir = (fs::path(dir).parent_path() / "iree").string();
    }
    if (!dir.empty() && dir != "off") disk_ = std::make_unique<DiskCompileCache>(dir);
  }
  std::string name() const override { return "iree"; }
  std::unique_ptr<Executable> load(std::shared_ptr<const hlo::Module> module) override {
    if (!module) fail("iree", "load got a null module");
    return std::make_unique<IreeExecutable>(std::move(module), disk_.get(), &counts_);
  }
  std::map<std::string, int64_t> counters() const override {
    return {{"compiles", counts_.compiles}, {"disk_hits", counts_.disk_hits}};
  }

 private:
  std::unique_ptr<DiskCompileCache> disk_;
  Counts counts_;
};

}  // namespace

double benchmark_ms(std::shared_ptr<const hlo::Module> module, std::string_view entry,
                    const std::vector<Tensor>& inputs, int reps) {
  const hlo::Func& f = *module->entry(entry);
  check_inputs(f, inputs);
  Compiled c(*module);
  return c.benchmark(f, inputs, reps);
}

NETSPEC_REGISTER_BACKEND(iree, [](const BackendOptions& o) -> std::unique_ptr<Backend> {
  return std::make_unique<IreeBackend>(o);
})

}  // namespace netspec::exec::iree
