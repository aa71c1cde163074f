// `netspec convert FILE.pth|FILE.safetensors --net NET [--classes N] [-o OUT] [--show-map]`:
// PyTorch weights (a torch.save'd state dict or a safetensors file with torchvision / timm / the
// peers' names) -> a safetensors file under netspec's names (f32, parameters then BN running
// statistics), which `train --init-from`, `eval --checkpoint` and `predict --checkpoint` load.
// The mapping is docs/reference-weights.md's (train/convert_weights.h); no Python is needed.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/train_flags.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "core/torch_pickle.h"
#include "layers/param_table.h"
#include "spec/zoo.h"
#include "train/convert_weights.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

void register_convert_command(CLI::App& app) {
  struct Opts {
    std::string file, net, classes, out;
    bool show_map = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "PyTorch weights (.pth state dict or .safetensors; torchvision/timm names) -> netspec names");
  cmd->add_option("file", o->file, "torch.save'd state dict (.pth/.pt) or a .safetensors file")
      ->required();
  cmd->add_option("--net", o->net, "zoo net name or spec .json the weights are for")->required();
  cmd->add_option("--classes", o->classes,
                  "the file's classifier width when it differs from the spec's");
  cmd->add_option("-o,--out", o->out,
                  "output .safetensors (default: FILE's stem + .netspec.safetensors)");
  cmd->add_flag("--show-map", o->show_map, "print every netspec name and the file tensor it got");
  cmd->callback([o, cmd] {
    SpecFile spec = resolve_net(o->net);
    if (cmd->count("--classes"))
      set_num_classes(spec.net,
                      static_cast<int>(number_flag("convert", "--classes", o->classes, 1, 1e9)));
    const ParamTable table = build_param_table(spec.net);
    const TorchTensors in = read_weight_file(o->file);
    std::cout << fmt::format("read {}: {}, {} tensors{}\n", o->file, in.format, in.tensors.size(),
                             in.container.empty() ? "" : " (the '" + in.container + "' entry)");
    if (!in.skipped.empty())
      std::cout << fmt::format("not tensors, skipped: {}\n", fmt::join(in.skipped, ", "));
    train::ConvertedWeights cw = train::convert_state_dict(in, table, o->file);
    std::cout << fmt::format(
        "{}: {} parameters + {} BNs' running statistics mapped {}; {} num_batches_tracked "
        "dropped\n",
        spec.net.name, table.params.size(), table.bns.size(),
        cw.reordered ? "by module tree and shapes (the file's order is not the net's)"
                     : "in file order",
        cw.batches_tracked);
    if (!cw.unused.empty())
      std::cout << fmt::format("unused (no place in {}): {}\n", spec.net.name,
                               fmt::join(cw.unused, ", "));
    if (o->show_map)
      for (const auto& [ns, file] : cw.mapping) std::cout << fmt::format("  {} <- {}\n", ns, file);
    std::string out = o->out;
    if (out.empty()) {
      fs::path p(o->file);
      out = (p.parent_path() / (p.stem().string() + ".netspec.safetensors")).string();
    }
    if (fs::weakly_canonical(out) == fs::weakly_canonical(o->file))
      fail("convert", "-o {} would overwrite the input", out);
    // "format": "pt" (PyTorch layouts) without netspec.format/epoch: loaders treat it as weights.
    cw.st.metadata = {{"format", "pt"},
                      {"net", spec.net.name},
                      {"source", fs::path(o->file).filename().string()}};
    write_safetensors(out, cw.st);
    std::cout << fmt::format(
        "wrote {}: {} tensors (f32); use it with `train --init-from`, `eval/predict "
        "--checkpoint`\n",
        out, cw.st.tensors.size());
  });
}

}  // namespace

NETSPEC_REGISTER_COMMAND(convert, register_convert_command)

}  // namespace netspec::cli
