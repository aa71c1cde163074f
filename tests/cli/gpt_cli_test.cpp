// `netspec train SPEC --dataset text --data FILE --run-dir DIR` then `netspec generate DIR` end to
// end on a tiny causal token model and a generated corpus: the run prints validation bits per
// character below the unigram model's by a real margin, saves vocab.json next to config.json and
// last.safetensors, and generate continues a prompt with N vocabulary characters (greedy: a verb
// of the corpus's grammar after a subject). A text with more characters than the net's token
// vocabulary exits 2 naming both sizes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>

#include "tests/cli/cli_util.h"
#include "tests/support/generated_text.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::sh;

std::string sentences(uint64_t seed, size_t bytes) {
  return test_support::grammar_sentences(seed, bytes);
}

double number_after(const std::string& out, const std::string& re) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(re))) return -1;
  return std::stod(m[1].str());
}

TEST(GptCli, TrainOnTextThenGenerate) {
  fs::path d = cli_test::temp_dir("netspec_gpt_", "e2e");
  std::ofstream(d / "corpus.txt") << sentences(7, 6000);
  std::ofstream(d / "tok.json") << cli_test::kTinyGpt;
  fs::path run = d / "run";
  Result t = sh("train " + (d / "tok.json").string() + " --dataset text --data " +
                (d / "corpus.txt").string() + " --run-dir " + run.string());
  ASSERT_EQ(t.status, 0) << t.out;
  for (const char* f : {"config.json", "last.safetensors", "vocab.json", "metrics.csv"})
    EXPECT_TRUE(fs::exists(run / f)) << f;
  // "validation loss L, B bits per character (unigram U) on N tokens"
  const double bpc = number_after(t.out, R"(, ([0-9.]+) bits per character)");
  const double uni = number_after(t.out, R"(\(unigram ([0-9.]+)\))");
  ASSERT_GT(bpc, 0) << t.out;
  ASSERT_GT(uni, 3.5) << t.out;
  EXPECT_LT(bpc, uni - 2.0) << t.out;                                  // measured ≈ 0.8 vs 4.0
  EXPECT_NE(t.out.find("val bpc"), std::string::npos) << t.out;        // per-epoch lines
  EXPECT_NE(t.out.find(" tokens/s, lr"), std::string::npos) << t.out;  // a language model's rate

  // eval of the run: the net, text and vocab.json come from the run; loss = best's.
  Result ev = sh("eval " + run.string());
  ASSERT_EQ(ev.status, 0) << ev.out;
  const double best_loss =
      nlohmann::json::parse(cli_test::slurp(run / "best.json"))["val_loss"].get<double>();
  EXPECT_NE(ev.out.find(fmt::format("loss {:.4f}", best_loss)), std::string::npos) << ev.out;
  std::ofstream(d / "other.txt") << sentences(7, 600) << "~~~ unseen ~~~\n";
  Result unseen = sh("eval " + run.string() + " --data " + (d / "other.txt").string());
  EXPECT_EQ(unseen.status, 2) << unseen.out;
  EXPECT_NE(unseen.out.find("a character the run was not trained on"), std::string::npos)
      << unseen.out;

  // Greedy continuation of a subject: the model has learned that a verb follows.
  Result g = sh("generate " + run.string() + " --prompt \"the cat \" --tokens 30 --temperature 0");
  ASSERT_EQ(g.status, 0) << g.out;
  std::string all = g.out;
  ASSERT_GE(all.size(), 38u) << all;
  EXPECT_EQ(all.substr(0, 8), "the cat ");
  const std::string vocab = "\n .abcdefghiklmnoprstwy";
  for (size_t i = 0; i < 38; ++i)
    EXPECT_NE(vocab.find(all[i]), std::string::npos) << "char " << i << " of " << all;
  const std::string cont = all.substr(8, 30);
  bool verb = false;
  for (const char* v : {"sees ", "likes ", "eats ", "finds ", "wants ", "hears "})
    verb = verb || cont.rfind(v, 0) == 0;
  EXPECT_TRUE(verb) << "continuation '" << cont << "'";

  // Sampling: N characters, reproducible per seed.
  Result s1 = sh("generate " + run.string() + " --prompt \"a \" --tokens 25 --seed 9");
  Result s2 = sh("generate " + run.string() + " --prompt \"a \" --tokens 25 --seed 9");
  ASSERT_EQ(s1.status, 0) << s1.out;
  ASSERT_GE(s1.out.size(), 27u);
  EXPECT_EQ(s1.out, s2.out);
  for (size_t i = 0; i < 27; ++i) EXPECT_NE(vocab.find(s1.out[i]), std::string::npos) << s1.out;
  fs::remove_all(d);
}

TEST(GptCli, TextVocabularyLargerThanTheNetExits2) {
  fs::path d = cli_test::temp_dir("netspec_gpt_", "vocab");
  std::string t;
  for (char c = 'A'; c <= 'Z'; ++c) t += std::string(40, c) + "abcdefghij\n";  // 37 characters
  std::ofstream(d / "corpus.txt") << t;
  std::ofstream(d / "tok.json") << cli_test::kTinyGpt;
  Result r = sh("train " + (d / "tok.json").string() + " --data " + (d / "corpus.txt").string() +
                " --run-dir " + (d / "run").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("vocabulary of 37 characters"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("token vocabulary of 32 ids"), std::string::npos) << r.out;
  fs::remove_all(d);
}

}  // namespace
}  // namespace netspec
