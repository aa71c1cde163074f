// End-to-end tests of `netspec emit --module probe-attention` (each probe runs through
// `netspec run`; flash equals dense, forward and gradients) and `netspec generate` on a tiny token
// model in a hand-made run dir (spec, vocab.json, params drawn from the eval manifest's shapes):
// the requested length, vocabulary characters only, same seed -> same text, bad run dir -> 2.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/npy.h"
#include "core/safetensors.h"
#include "tests/cli/cli_util.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::sh;

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

Tensor random_f32(const Shape& shape, uint64_t seed, double scale = 1.0) {
  Tensor t(DType::kF32, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  for (float& v : t.span<float>()) v = static_cast<float>(u(rng));
  return t;
}

// Emits `probe` (causal, T = 40, block 8), runs it on `inputs`, returns its results.
std::vector<Tensor> run_probe(const fs::path& d, const std::string& probe,
                              const std::vector<Tensor>& inputs) {
  fs::path m = d / (probe + ".mlir");
  Result e = sh("emit --module probe-attention --probe " + probe +
                " --seq 40 --heads 2 --head-dim 8 --causal --block 8 -o " + m.string());
  EXPECT_EQ(e.status, 0) << e.out;
  EXPECT_TRUE(fs::exists(d / (probe + ".manifest.json")));
  std::string args = "run " + m.string() + " --output-dir " + (d / probe).string();
  for (size_t i = 0; i < inputs.size(); ++i) {
    fs::path p = d / fmt::format("in{}.npy", i);
    write_npy(p.string(), inputs[i]);
    args += " --input " + p.string();
  }
  Result r = sh(args);
  EXPECT_EQ(r.status, 0) << r.out;
  std::vector<Tensor> out;
  for (int i = 0; fs::exists(d / probe / fmt::format("result{}.npy", i)); ++i)
    out.push_back(read_npy((d / probe / fmt::format("result{}.npy", i)).string()));
  return out;
}

double rel_err(const Tensor& a, const Tensor& ref) {
  double d = 0, m = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    d = std::max(d, std::abs(a.as_double(i) - ref.as_double(i)));
    m = std::max(m, std::abs(ref.as_double(i)));
  }
  return d / m;
}

TEST(ProbeAttentionCli, FlashEqualsDenseThroughNetspecRun) {
  fs::path d = cli_test::temp_dir("netspec_probe_", "attn");
  Shape s{1, 2, 40, 8};
  std::vector<Tensor> in = {random_f32(s, 1), random_f32(s, 2), random_f32(s, 3), random_f32(s, 4)};
  std::vector<Tensor> fl = run_probe(d, "flash", {in[0], in[1], in[2]});
  std::vector<Tensor> de = run_probe(d, "dense", {in[0], in[1], in[2]});
  ASSERT_EQ(fl.size(), 1u);
  ASSERT_EQ(de.size(), 1u);
  EXPECT_EQ(fl[0].shape(), s);
  EXPECT_LE(rel_err(fl[0], de[0]), 1e-5);
  std::vector<Tensor> fg = run_probe(d, "flash-grad", in);
  std::vector<Tensor> dg = run_probe(d, "dense-grad", in);
  ASSERT_EQ(fg.size(), 4u);  // o, dq, dk, dv
  ASSERT_EQ(dg.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_LE(rel_err(fg[i], dg[i]), 1e-5) << "result " << i;
  std::vector<Tensor> rope = run_probe(d, "rope", {in[0]});
  ASSERT_EQ(rope.size(), 1u);
  // position 0 is not rotated
  for (int64_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(rope[0].as_double(i), in[0].as_double(i));
  fs::remove_all(d);
}

TEST(ProbeAttentionCli, BadProbeExits2) {
  Result r = sh("emit --module probe-attention --probe sparse");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown probe 'sparse'"), std::string::npos) << r.out;
  r = sh("emit --module probe-attention --probe flash --seq 12 --block 5");
  EXPECT_EQ(r.status, 2) << r.out;
}

// A run dir for a 1-block causal transformer over a 5-character vocabulary (model vocab 6).
fs::path make_run_dir(const std::string& name, bool causal = true) {
  fs::path d = cli_test::temp_dir("netspec_gen_", name);
  std::string spec = R"({
  "name": "tok-tiny", "inputChannels": 8, "inputHeight": 0, "inputWidth": 0,
  "layers": [
    {"kind": "tokenPositionEmbed", "vocab": 6, "seqLen": 8, "dModel": 8},
    {"kind": "transformerEncoder", "dim": 8, "heads": 2, "mlpDim": 16, "nBlocks": 1,
     "causalMask": CAUSAL, "keepSequence": true, "rope": true, "flashAttn": true},
    {"kind": "lmHead", "dModel": 8, "vocab": 6, "seqLen": 8}
  ]
})";
  spec.replace(spec.find("CAUSAL"), 6, causal ? "true" : "false");
  write_text(d / "spec.json", spec);
  write_text(d / "config.json", "{\"spec\": " + spec + ", \"backend\": \"cpu\"}\n");
  // vocabulary " abcd" (code points sorted)
  write_text(d / "vocab.json",
             R"({"kind": "char", "size": 5, "code_points": [32, 97, 98, 99, 100],
                 "chars": [" ", "a", "b", "c", "d"]})");
  // parameters: every param of the eval module's manifest, random in [-1, 1]
  Result e =
      sh("emit " + (d / "spec.json").string() + " --module eval -o " + (d / "eval.mlir").string());
  if (e.status != 0) return {};  // the caller reports e.out
  nlohmann::json m = nlohmann::json::parse(read_text(d / "eval.manifest.json"));
  SafeTensors st;
  uint64_t seed = 1;
  for (const auto& in : m["inputs"])
    if (in["role"] == "param")
      st.tensors.emplace_back(in["name"].get<std::string>(),
                              random_f32(in["shape"].get<Shape>(), seed++));
  write_safetensors((d / "last.safetensors").string(), st);
  return d;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Token layers (tokenPositionEmbed, transformerEncoder, lmHead) are lowered by another file
// set; until they are, the generate tests skip naming the reason.
#define MAKE_RUN_DIR_OR_SKIP(d, ...)                                               \
  fs::path d = make_run_dir(__VA_ARGS__);                                          \
  if (d.empty()) {                                                                 \
    Result why = sh("emit tiny-gpt --module eval");                                \
    if (why.out.find("not lowered") != std::string::npos) GTEST_SKIP() << why.out; \
    FAIL() << "could not emit the token model: " << why.out;                       \
  }

TEST(GenerateCli, SamplesRequestedLengthFromVocabularyReproducibly) {
  MAKE_RUN_DIR_OR_SKIP(d, "ok");
  std::string base = "generate " + d.string() + " --prompt \"ab\" --tokens 20 ";
  Result a = sh(base + "--seed 3 --temperature 1.0 --top-k 4");
  ASSERT_EQ(a.status, 0) << a.out;
  std::string text = first_line(a.out);
  ASSERT_EQ(text.size(), 22u) << a.out;  // prompt + 20 characters
  EXPECT_EQ(text.substr(0, 2), "ab");
  for (char ch : text) EXPECT_NE(std::string(" abcd").find(ch), std::string::npos) << text;
  Result b = sh(base + "--seed 3 --temperature 1.0 --top-k 4");
  EXPECT_EQ(first_line(b.out), text);
  // a different seed draws a different continuation (20 draws over 4 choices)
  Result c = sh(base + "--seed 4 --temperature 1.0 --top-k 4");
  EXPECT_NE(first_line(c.out), text);
  // a prompt longer than the window (T = 8) is truncated to its last 8 characters
  Result g = sh("generate " + d.string() + " --prompt \"abcdabcdabcd\" --tokens 3 --temperature 0");
  ASSERT_EQ(g.status, 0) << g.out;
  EXPECT_EQ(first_line(g.out).size(), 15u);
  fs::remove_all(d);
}

// Non-causal attention: a short context is padded before its start (the other path).
TEST(GenerateCli, NonCausalModelPadsBeforeTheContext) {
  MAKE_RUN_DIR_OR_SKIP(d, "noncausal", false);
  Result a = sh("generate " + d.string() + " --prompt \"a\" --tokens 12 --seed 5");
  ASSERT_EQ(a.status, 0) << a.out;
  std::string text = first_line(a.out);
  ASSERT_EQ(text.size(), 13u) << a.out;
  for (char ch : text) EXPECT_NE(std::string(" abcd").find(ch), std::string::npos) << text;
  EXPECT_EQ(first_line(sh("generate " + d.string() + " --prompt \"a\" --tokens 12 --seed 5").out),
            text);
  fs::remove_all(d);
}

TEST(GenerateCli, BadRunDirExits2) {
  Result r = sh("generate /nonexistent/run --prompt a --tokens 3");
  EXPECT_EQ(r.status, 2) << r.out;
  MAKE_RUN_DIR_OR_SKIP(d, "bad");
  fs::remove(d / "last.safetensors");
  r = sh("generate " + d.string() + " --prompt a --tokens 3");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("last.safetensors"), std::string::npos) << r.out;
  r = sh("generate " + d.string() + " --prompt xyz --tokens 3");  // not in the vocabulary
  EXPECT_EQ(r.status, 2) << r.out;
  fs::remove_all(d);
}

}  // namespace
}  // namespace netspec
