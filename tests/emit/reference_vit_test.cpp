// ViT forward against PyTorch (Debian's /usr/bin/python3 with torch 1.13; skipped without it).
// The script below builds the reference in f64 from torch's own modules (nn.Conv2d patchify,
// nn.TransformerEncoderLayer(norm_first, gelu) = timm's pre-norm Block with the packed qkv
// in_proj, nn.LayerNorm), draws random weights, and writes them in netspec's ParamTable order as
// safetensors by hand (8-byte header length + JSON header + raw f32 data: torch 1.13 has no
// safetensors module), with an input (f32) and its logits (f64). netspec's forward module runs
// the same weights on the cpu executor in f32; the check is max|Δ| <= 1e-4 · max|ref|.
// `peer-vit` does the same with the peer's ViT class (../shared/peers/torch_train_step.py) when
// that file is present, against models/vit-cifar-tiny.json.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/process_env.h"
#include "core/safetensors.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/zoo.h"

namespace netspec {
namespace {

const char* kPython = "/usr/bin/python3";  // Debian's: torch 1.13 (not the pyenv python3)

const char* kScript = R"PY(
import json, math, os, struct, sys
import torch, torch.nn as nn
model, out, peer_dir = sys.argv[1], sys.argv[2], sys.argv[3]
torch.manual_seed(0)
B = 2

def st_write(path, tensors):  # safetensors by hand: u64 header length, JSON header, raw data
    header, blobs, off = {}, [], 0
    for name, t in tensors:
        t = t.detach().contiguous()
        code = {torch.float32: "F32", torch.float64: "F64"}[t.dtype]
        raw = t.numpy().tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw); off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h)
        for r in blobs: f.write(r)

if model == "vit-tiny":  # timm vit_tiny_patch16_224 geometry at 32x32 (4 patches), 10 classes
    D, H, M, L, P, C, S, N = 192, 3, 768, 12, 16, 3, 32, 10
    class ViT(nn.Module):
        def __init__(s):
            super().__init__()
            n = (S // P) ** 2
            s.cls_token = nn.Parameter(torch.randn(1, 1, D) * 0.02)
            s.pos_embed = nn.Parameter(torch.randn(1, n + 1, D) * 0.02)
            s.proj = nn.Conv2d(C, D, P, P)
            s.blocks = nn.ModuleList([nn.TransformerEncoderLayer(
                D, H, M, dropout=0.0, activation="gelu", layer_norm_eps=1e-6, batch_first=True,
                norm_first=True) for _ in range(L)])
            s.norm = nn.LayerNorm(D, eps=1e-6)
            s.head = nn.Linear(D, N)
        def forward(s, x):
            p = s.proj(x).flatten(2).transpose(1, 2)
            x = torch.cat([s.cls_token.expand(x.shape[0], -1, -1), p], 1) + s.pos_embed
            for b in s.blocks: x = b(x)
            return s.head(s.norm(x)[:, 0])
        def ordered(s):  # netspec ParamTable order (timm's named_parameters order)
            ps = [s.cls_token, s.pos_embed, s.proj.weight, s.proj.bias]
            for b in s.blocks:
                a = b.self_attn
                ps += [b.norm1.weight, b.norm1.bias, a.in_proj_weight, a.in_proj_bias,
                       a.out_proj.weight, a.out_proj.bias, b.norm2.weight, b.norm2.bias,
                       b.linear1.weight, b.linear1.bias, b.linear2.weight, b.linear2.bias]
            return ps + [s.norm.weight, s.norm.bias, s.head.weight, s.head.bias]
    m, x = ViT(), torch.randn(B, C, S, S)
else:  # the peer's tiny ViT (no class token, mean-token head)
    sys.path.insert(0, peer_dir)
    import torch_train_step as peer
    m, x = peer.ViT(), torch.randn(B, 3, 32, 32)
    def ordered():
        ps = [m.pos, m.embed.weight.reshape(128, 3, 4, 4), m.embed.bias]
        for b in m.blocks:
            ps += [b.ln1.weight, b.ln1.bias, b.qkv.weight, b.qkv.bias, b.proj.weight, b.proj.bias,
                   b.ln2.weight, b.ln2.bias, b.fc1.weight, b.fc1.bias, b.fc2.weight, b.fc2.bias]
        return ps + [m.ln.weight, m.ln.bias, m.head.weight, m.head.bias]
    m.ordered = ordered
with torch.no_grad():  # every weight perturbed (LN γ/β and biases too), rounded to f32
    for p in m.parameters():
        p.add_(torch.randn_like(p) * 0.05)
m.train()  # dropout is 0; train mode keeps torch on its plain (non-fused) path
m = m.double()
with torch.no_grad():
    y = m(x.double())
st_write(os.path.join(out, "weights.safetensors"),
         [("p%d" % i, p.float()) for i, p in enumerate(m.ordered())])
st_write(os.path.join(out, "io.safetensors"), [("x", x.float()), ("logits", y)])
print("ok", sum(p.numel() for p in m.parameters()))
)PY";

bool torch_available() {
  export_openblas_coretype();  // Debian's torch loads OpenBLAS: SkylakeX only on AVX-512 CPUs
  static const bool ok =
      std::system(fmt::format("{} -c 'import torch' >/dev/null 2>&1", kPython).c_str()) == 0;
  return ok;
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "netspec-vit-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

struct Result {
  double max_abs_diff = 0, max_abs_ref = 0;
  std::string str() const {
    return fmt::format("max|Δ| {:.3g}, max|ref| {:.4g}, rel {:.3g}", max_abs_diff, max_abs_ref,
                       max_abs_diff / max_abs_ref);
  }
};

// Runs the script for `model`, loads its weights into `net`'s forward module (cpu, f32) and
// compares the logits.
Result compare(const std::string& model, const NetSpec& net) {
  TempDir dir;
  { std::ofstream(dir.path + "/ref.py") << kScript; }
  std::string peer = std::string(NETSPEC_SOURCE_DIR) + "/../shared/peers";
  std::string cmd = fmt::format("{} {}/ref.py {} {} {} >{}/log 2>&1", kPython, dir.path, model,
                                dir.path, peer, dir.path);
  if (std::system(cmd.c_str()) != 0) {
    std::stringstream ss;
    ss << std::ifstream(dir.path + "/log").rdbuf();
    ADD_FAILURE() << "reference script failed:\n" << ss.str();
    return {};
  }
  SafeTensors w = read_safetensors(dir.path + "/weights.safetensors");
  SafeTensors io = read_safetensors(dir.path + "/io.safetensors");
  ParamTable t = build_param_table(net);
  EXPECT_EQ(w.tensors.size(), t.params.size());
  std::vector<Tensor> in;
  for (size_t i = 0; i < t.params.size() && i < w.tensors.size(); ++i) {
    EXPECT_EQ(w.tensors[i].second.shape(), t.params[i].shape) << t.params[i].name;
    in.push_back(w.tensors[i].second);
  }
  const Tensor& x = io.at("x");
  in.push_back(x);
  emit::EmitOptions o;
  o.batch = x.shape()[0];
  emit::Emitted e = emit::emit_module(net, ModuleKind::eval, o);
  auto exe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  Tensor y = exe->run("main", in).at(0);
  const Tensor& ref = io.at("logits");
  EXPECT_EQ(y.shape(), ref.shape());
  Result r;
  for (int64_t i = 0; i < y.numel() && i < ref.numel(); ++i) {
    r.max_abs_diff = std::max(r.max_abs_diff, std::abs(y.as_double(i) - ref.as_double(i)));
    r.max_abs_ref = std::max(r.max_abs_ref, std::abs(ref.as_double(i)));
  }
  return r;
}

TEST(ReferenceVit, VitTinyForwardMatchesTorch) {
  if (!torch_available()) GTEST_SKIP() << kPython << " cannot import torch: reference skipped";
  NetSpec net = resolve_net("vit-tiny").net;  // timm geometry at 32x32: 4 patches of 16x16
  net.inputHeight = net.inputWidth = 32;
  std::get<PatchEmbed>(net.layers[0]).nPatches = 4;
  set_num_classes(net, 10);
  Result r = compare("vit-tiny", net);
  EXPECT_GT(r.max_abs_ref, 0.1) << r.str();
  EXPECT_LE(r.max_abs_diff, 1e-4 * r.max_abs_ref) << r.str();
  std::cout << "vit-tiny vs torch: " << r.str() << "\n";
}

TEST(ReferenceVit, VitCifarTinyMatchesThePeer) {
  if (!torch_available()) GTEST_SKIP() << kPython << " cannot import torch: reference skipped";
  std::string peer = std::string(NETSPEC_SOURCE_DIR) + "/../shared/peers/torch_train_step.py";
  if (!std::filesystem::exists(peer)) GTEST_SKIP() << peer << " absent: peer check skipped";
  Result r = compare("peer-vit", resolve_net("vit-cifar-tiny").net);
  EXPECT_GT(r.max_abs_ref, 0.1) << r.str();
  EXPECT_LE(r.max_abs_diff, 1e-4 * r.max_abs_ref) << r.str();
  std::cout << "vit-cifar-tiny vs peer: " << r.str() << "\n";
}

}  // namespace
}  // namespace netspec
