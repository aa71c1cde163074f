// eval, report and cam of a run whose image folder streams (--data-memory 0): the same accuracy,
// loss and count as in RAM (exactly with --no-dct-scale, also across 2 processes; within a sample
// and 2 % of the loss with DCT-scaled decodes), the same report sections (confusion, per-class
// accuracy, pictures), the same Grad-CAM panels of split samples; a streamed run's own final test
// accuracy is what `eval --data-memory 0` reproduces; a task that reads its split whole is
// refused, exit 2; an unreadable test image stops train's evaluation, eval, report and cam naming
// it (exit 2), or with --skip-bad-images is left out of the scores, which then equal those of the
// split without it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "cli/cli_util.h"
#include "cli/stream_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

// The line of `out` that starts with `prefix` ("" when none).
std::string line_of(const std::string& out, const std::string& prefix) {
  std::istringstream is(out);
  for (std::string l; std::getline(is, l);)
    if (l.rfind(prefix, 0) == 0) return l;
  return "";
}

// The number after `key` in `line` ("loss 0.1234" -> 0.1234); NaN when absent.
double number_after(const std::string& line, const std::string& key) {
  const size_t k = line.find(key);
  return k == std::string::npos ? std::nan("") : std::stod(line.substr(k + key.size()));
}

Result train(const fs::path& d, const std::string& run, const std::string& extra) {
  return sh(fmt::format("train {} --dataset folder --data {} --epochs 2 --batch 8 --run-dir {} {}",
                        spec(d).string(), (d / "data").string(), (d / run).string(), extra));
}

Result eval(const fs::path& run, const std::string& extra) {
  return sh(fmt::format("eval {} --checkpoint {} {}", run.string(),
                        (run / "last.safetensors").string(), extra));
}

TEST(StreamEvalCli, EvalStreamsAsInRam) {
  fs::path d = temp_dir("ns_seval_", "eval");
  write_tree(d / "data", 3);  // 42-99 px: every JPEG's 13 px cover decodes at 1/2 or 1/4
  ASSERT_EQ(train(d, "run", "").status, 0);
  Result ram = eval(d / "run", "");
  ASSERT_EQ(ram.status, 0) << ram.out;
  EXPECT_TRUE(has(ram.out, "data: in RAM, 42 images")) << ram.out;
  // Full-resolution decodes: the in-RAM bytes, so the same loss, top-1 and count to the digit.
  Result st = eval(d / "run", "--data-memory 0 --no-dct-scale --data-threads 2");
  ASSERT_EQ(st.status, 0) << st.out;
  EXPECT_TRUE(has(st.out, "data: streaming 42 images")) << st.out;
  EXPECT_TRUE(has(st.out, "2 decode threads")) << st.out;
  const std::string line = line_of(ram.out, "eval tiny-stream");
  ASSERT_TRUE(has(line, "count 12")) << ram.out;
  EXPECT_EQ(line_of(st.out, "eval tiny-stream"), line);
  // Two processes (`netspec launch`), each decoding only its batches (0, 2 and 1 of 3): the
  // one-process line.
  const std::string four = "--data-memory 0 --no-dct-scale --batch 4";
  const Result single = eval(d / "run", four + " --data-threads 1");
  EXPECT_TRUE(has(single.out, "1 decode thread (")) << single.out;  // singular
  const std::string one = line_of(single.out, "eval tiny-stream");
  Result two =
      sh(fmt::format("launch --nproc 2 -- eval {} --checkpoint {} {}", (d / "run").string(),
                     (d / "run" / "last.safetensors").string(), four));
  ASSERT_EQ(two.status, 0) << two.out;
  EXPECT_TRUE(has(two.out, one + "  (2 processes)")) << one << "\n" << two.out;
  // DCT-scaled decodes (the default when streaming): the JPEGs' pixels move by about a level,
  // so the loss moves a little and at most one of the 12 samples may change its class.
  Result dct = eval(d / "run", "--data-memory 0");
  ASSERT_EQ(dct.status, 0) << dct.out;
  const std::string dl = line_of(dct.out, "eval tiny-stream");
  EXPECT_NEAR(number_after(dl, "loss "), number_after(line, "loss "),
              0.02 * number_after(line, "loss ") + 1e-4)
      << dl << "\n"
      << line;
  EXPECT_NEAR(number_after(dl, "top-1 "), number_after(line, "top-1 "), 100.0 / 12 + 1e-6);
  Result bad = eval(d / "run", "--data-memory lots");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_TRUE(has(bad.out, "--data-memory")) << bad.out;
}

// A run trained streamed (DCT-scaled decodes) ends with a test accuracy and validation loss that
// `eval --data-memory 0` of its last checkpoint prints again: train's evaluation and eval take the
// same path.
TEST(StreamEvalCli, EvalReproducesAStreamedRunsTestAccuracy) {
  fs::path d = temp_dir("ns_seval_", "same");
  write_tree(d / "data", 3);
  // The pooled net's loss (~1.1) shows the DCT-scaled pixels in its 4th digit (1.1287 here, 1.1286
  // from full-resolution decodes); the dense net is too sure of these colours to.
  Result tr =
      sh(fmt::format("train {} --dataset folder --data {} --epochs 2 --batch 8 --run-dir {} "
                     "--data-memory 0",
                     pooled_spec(d).string(), (d / "data").string(), (d / "run").string()));
  ASSERT_EQ(tr.status, 0) << tr.out;
  const std::string fin = line_of(tr.out, "test accuracy ");
  const std::string last = line_of(tr.out, "epoch 2/2");
  ASSERT_FALSE(fin.empty() || last.empty()) << tr.out;
  Result ev = eval(d / "run", "--data-memory 0");
  ASSERT_EQ(ev.status, 0) << ev.out;
  const std::string line = line_of(ev.out, "eval tiny-gap");
  EXPECT_TRUE(has(line, fmt::format("top-1 {:.2f}%", number_after(fin, "test accuracy "))))
      << fin << "\n"
      << ev.out;
  EXPECT_TRUE(has(line, fmt::format("loss {:.4f}", number_after(last, "val loss "))))
      << last << "\n"
      << ev.out;
}

// The report's evaluation sections (top-1, confusion matrix, per-class accuracy, most
// confidently wrong images, Grad-CAM panels) without the evaluation's time.
std::string evaluation_sections(const fs::path& html) {
  const std::string page = slurp(html);
  const size_t a = page.find("<h2 id=\"evaluation\">"), b = page.find("<h2 id=\"timings\">");
  if (a == std::string::npos || b == std::string::npos) return "";
  return std::regex_replace(page.substr(a, b - a), std::regex("\\([0-9.]+ s\\)"), "(T s)");
}

TEST(StreamEvalCli, ReportAndCamStreamAsInRam) {
  fs::path d = temp_dir("ns_seval_", "report");
  write_tree(d / "data");
  // A conv net that pools globally (Grad-CAM's feature map), one epoch: some samples wrong.
  Result tr =
      sh(fmt::format("train {} --dataset folder --data {} --epochs 1 --batch 8 --run-dir {}",
                     pooled_spec(d).string(), (d / "data").string(), (d / "run").string()));
  ASSERT_EQ(tr.status, 0) << tr.out;
  Result ram = sh(fmt::format("report {} -o {}", (d / "run").string(), (d / "ram.html").string()));
  ASSERT_EQ(ram.status, 0) << ram.out;
  Result st = sh(fmt::format("report {} -o {} --data-memory 0 --no-dct-scale", (d / "run").string(),
                             (d / "st.html").string()));
  ASSERT_EQ(st.status, 0) << st.out;
  EXPECT_EQ(st.out.rfind("data: streaming 42 images", 0), 0u) << st.out;  // the first line
  const std::string sections = evaluation_sections(d / "ram.html");
  ASSERT_TRUE(has(sections, "top-1 <b>")) << sections.substr(0, 400);
  ASSERT_TRUE(has(sections, "id=\"confusion\"")) << sections.substr(0, 400);
  ASSERT_TRUE(has(sections, "Grad-CAM of sample")) << sections.substr(0, 2000);
  ASSERT_TRUE(has(sections, "most confidently wrong images")) << sections.substr(0, 2000);
  EXPECT_EQ(evaluation_sections(d / "st.html"), sections);

  // cam of split samples: the same panels and lines, the streamed split decoding only those.
  Result cr =
      sh(fmt::format("cam {} --samples 3 -o {}", (d / "run").string(), (d / "cam_ram").string()));
  ASSERT_EQ(cr.status, 0) << cr.out;
  Result cs = sh(fmt::format("cam {} --samples 3 -o {} --data-memory 0 --no-dct-scale",
                             (d / "run").string(), (d / "cam_st").string()));
  ASSERT_EQ(cs.status, 0) << cs.out;
  EXPECT_TRUE(has(cs.out, "data: streaming 42 images")) << cs.out;
  int panels = 0;
  for (const auto& f : fs::directory_iterator(d / "cam_ram")) {
    ++panels;
    EXPECT_EQ(slurp(f.path()), slurp(d / "cam_st" / f.path().filename())) << f.path();
  }
  EXPECT_EQ(panels, 3);
  EXPECT_TRUE(fs::exists(d / "cam_ram" / "sample-2.cam.png"));  // rows 2, 6, 10 of 12
  auto lines = [](const std::string& out, const std::string& dir) {
    std::string s = std::regex_replace(out, std::regex("data: [^\n]*\n"), "");
    return std::regex_replace(s, std::regex(dir), "DIR");
  };
  EXPECT_EQ(lines(cs.out, (d / "cam_st").string()), lines(cr.out, (d / "cam_ram").string()));
  Result both = sh(fmt::format("cam {} --samples 2 {}", (d / "run").string(),
                               (d / "data" / "val" / "c0" / "00.png").string()));
  EXPECT_EQ(both.status, 2) << both.out;
}

// A task whose evaluation reads its split's tensors whole (segmentation here: the same weights
// under a per-pixel loss) is refused on a streamed split, naming --data-memory.
TEST(StreamEvalCli, ATaskThatCannotStreamIsRefused) {
  fs::path d = temp_dir("ns_seval_", "refuse");
  write_tree(d / "data");
  ASSERT_EQ(train(d, "run", "").status, 0);
  const fs::path seg = d / "seg.json";
  std::ofstream(seg) << R"({"name": "tiny-stream", "inputChannels": 3, "inputHeight": 12,
 "inputWidth": 12, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 432, "out": 3}],
 "train": {"dataset": "folder", "lossKind": "perPixelCE"}})";
  Result r = sh(fmt::format("eval {} --checkpoint {} --data {} --data-memory 0", seg.string(),
                            (d / "run" / "last.safetensors").string(), (d / "data").string()));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "the segmentation task's evaluation reads the whole split")) << r.out;
  EXPECT_TRUE(has(r.out, "--data-memory")) << r.out;
}

// The part of a line from `key` on ("" when absent).
std::string from(const std::string& line, const std::string& key) {
  const size_t k = line.find(key);
  return k == std::string::npos ? "" : line.substr(k);
}

// A section of a report page: from `a`'s heading to `b`'s.
std::string section(const fs::path& html, const std::string& a, const std::string& b) {
  const std::string page = slurp(html);
  const size_t i = page.find("<h2 id=\"" + a + "\">"), j = page.find("<h2 id=\"" + b + "\">");
  return i == std::string::npos || j == std::string::npos ? "" : page.substr(i, j - i);
}

TEST(StreamEvalCli, UnreadableTestImageStopsOrIsLeftOut) {
  fs::path d = temp_dir("ns_seval_", "bad");
  write_tree(d / "data", 3);
  // The pooled net after one epoch gets some samples wrong (the dense net scores them all).
  Result tr =
      sh(fmt::format("train {} --dataset folder --data {} --epochs 1 --batch 8 --run-dir {}",
                     pooled_spec(d).string(), (d / "data").string(), (d / "run").string()));
  ASSERT_EQ(tr.status, 0) << tr.out;
  // The reference: the same tree without val/c1/01.jpg (the split's 6th sample). Then that file
  // is truncated mid-scan in the tree itself.
  fs::copy(d / "data", d / "less", fs::copy_options::recursive);
  ASSERT_TRUE(fs::remove(d / "less" / "val" / "c1" / "01.jpg"));
  const fs::path bad = d / "data" / "val" / "c1" / "01.jpg";
  fs::resize_file(bad, fs::file_size(bad) / 2);
  const std::string stream = "--data-memory 0 --data-threads 2";

  // Without the flag: eval, cam and train's evaluation stop naming the file, exit 2; report (which
  // shows a section's failure on its page) says the evaluation is not available, naming it.
  Result e = eval(d / "run", stream);
  EXPECT_EQ(e.status, 2) << e.out;
  EXPECT_TRUE(has(e.out, bad.string())) << e.out;
  Result r =
      sh(fmt::format("report {} -o {} {}", (d / "run").string(), (d / "r.html").string(), stream));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "report: the evaluation is not available: [image] " + bad.string()))
      << r.out;
  EXPECT_TRUE(has(slurp(d / "r.html"), "not available: [image] " + bad.string()));
  EXPECT_FALSE(has(slurp(d / "r.html"), "id=\"confusion\""));
  Result c = sh(fmt::format("cam {} --samples 12 -o {} {}", (d / "run").string(),
                            (d / "cam").string(), stream));
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_TRUE(has(c.out, bad.string())) << c.out;
  auto train_streamed = [&](const std::string& run, const std::string& extra) {
    return sh(fmt::format(
        "train {} --dataset folder --data {} --epochs 1 --batch 8 --run-dir {} {} {}",
        pooled_spec(d).string(), (d / "data").string(), (d / run).string(), stream, extra));
  };
  Result t = train_streamed("run2", "");
  EXPECT_EQ(t.status, 2) << t.out;
  EXPECT_TRUE(has(t.out, bad.string())) << t.out;

  // With it: left out and counted; the scores are those of the split without the file (top-1
  // and count to the digit; the loss folds its batch sums in another grouping).
  Result es = eval(d / "run", stream + " --skip-bad-images");
  ASSERT_EQ(es.status, 0) << es.out;
  EXPECT_TRUE(has(es.out,
                  "eval: skipped 1 unreadable image (--skip-bad-images: left out of the "
                  "scores, which count the 11 samples read); the first: [image] " +
                      bad.string()))
      << es.out;
  Result ref =
      sh(fmt::format("eval {} --checkpoint {} --data {} {}", (d / "run").string(),
                     (d / "run" / "last.safetensors").string(), (d / "less").string(), stream));
  ASSERT_EQ(ref.status, 0) << ref.out;
  const std::string sl = line_of(es.out, "eval tiny-gap"), rl = line_of(ref.out, "eval tiny-gap");
  ASSERT_TRUE(has(rl, "count 11")) << ref.out;
  EXPECT_EQ(from(sl, "top-1"), from(rl, "top-1")) << sl << "\n" << rl;
  EXPECT_NEAR(number_after(sl, "loss "), number_after(rl, "loss "), 1e-4) << sl << "\n" << rl;
  // Two processes (batch 4: the bad sample is in batch 1, rank 1's): the count is summed, the
  // line the one process prints.
  const std::string four = stream + " --skip-bad-images --batch 4";
  const std::string one = line_of(eval(d / "run", four).out, "eval tiny-gap");
  Result two =
      sh(fmt::format("launch --nproc 2 -- eval {} --checkpoint {} {}", (d / "run").string(),
                     (d / "run" / "last.safetensors").string(), four));
  ASSERT_EQ(two.status, 0) << two.out;
  EXPECT_TRUE(has(one, "count 11")) << one;
  EXPECT_TRUE(has(two.out, one + "  (2 processes)")) << one << "\n" << two.out;
  EXPECT_TRUE(has(two.out, "eval: skipped 1 unreadable image")) << two.out;

  // report: the same confusion matrix and per-class accuracy as the reduced split's report.
  Result rs = sh(fmt::format("report {} -o {} {} --skip-bad-images", (d / "run").string(),
                             (d / "rs.html").string(), stream));
  ASSERT_EQ(rs.status, 0) << rs.out;
  EXPECT_TRUE(has(rs.out, "report: skipped 1 unreadable image")) << rs.out;
  Result rr = sh(fmt::format("report {} -o {} --data {} {}", (d / "run").string(),
                             (d / "rr.html").string(), (d / "less").string(), stream));
  ASSERT_EQ(rr.status, 0) << rr.out;
  const std::string cm = section(d / "rr.html", "confusion", "wrong");
  ASSERT_TRUE(has(cm, "Per-class accuracy")) << cm;
  EXPECT_EQ(section(d / "rs.html", "confusion", "wrong"), cm);
  EXPECT_TRUE(has(slurp(d / "rs.html"), "evaluation: skipped 1 unreadable image")) << rs.out;

  // cam --samples 12 (every sample): 11 panels, the bad one's (sample 5) missing.
  Result cs = sh(fmt::format("cam {} --samples 12 -o {} {} --skip-bad-images", (d / "run").string(),
                             (d / "cam").string(), stream));
  ASSERT_EQ(cs.status, 0) << cs.out;
  EXPECT_TRUE(has(cs.out, "cam: skipped 1 unreadable image")) << cs.out;
  int panels = 0;
  for (const auto& f : fs::directory_iterator(d / "cam")) panels += f.path().extension() == ".png";
  EXPECT_EQ(panels, 11);
  EXPECT_FALSE(fs::exists(d / "cam" / "sample-5.cam.png"));
  EXPECT_TRUE(fs::exists(d / "cam" / "sample-6.cam.png"));

  // train: each evaluation leaves it out, saying so; the final accuracy is over 11 samples.
  Result ts = train_streamed("run3", "--skip-bad-images");
  ASSERT_EQ(ts.status, 0) << ts.out;
  EXPECT_TRUE(has(ts.out, "epoch 1 evaluation: skipped 1 unreadable image")) << ts.out;
  EXPECT_TRUE(has(ts.out, "on 11 samples")) << ts.out;
  // SWAG's evaluation (logits averaged over sampled weights) leaves it out too.
  Result sw = train_streamed(
      "run4", "--skip-bad-images --set useSWA=true --set useSWAG=true --set swaStartEpoch=0");
  ASSERT_EQ(sw.status, 0) << sw.out;
  EXPECT_TRUE(has(sw.out, "swag top-1")) << sw.out;
}

}  // namespace
}  // namespace netspec::cli_test
