// Text: a token model (tokenPositionEmbed + lmHead) on character windows of a corpus, redrawn
// each epoch from (seed, epoch); per-token cross-entropy, validation also in bits per character
// beside a unigram model's; vocab.json kept in the run dir (a resume on other characters is
// refused); the rate is tokens/s.
#include <filesystem>

#include "core/error.h"
#include "data/text.h"
#include "layers/lower.h"
#include "tasks/task.h"

namespace netspec::tasks {
namespace {

namespace fs = std::filesystem;

// The net's token-id range: the smallest vocab of its tokenPositionEmbed / lmHead layers
// (-1 when it has neither, i.e. it is not a token model).
int64_t token_vocab(const NetSpec& net) {
  int64_t v = -1;
  auto take = [&](int64_t n) { v = v < 0 ? n : std::min(v, n); };
  for (const Layer& l : net.layers)
    if (auto* f = layers::traits(l).vocab) take(f(l));
  return v;
}

class Text final : public Task {
 public:
  using Task::Task;
  TaskKind kind() const override { return TaskKind::text; }

  void check(const data::Dataset& /*train_src*/) const override {
    if (!env_.data.text)
      fail("train", "{} (text) needs a text corpus (--dataset text --data FILE; got dataset {})",
           env_.c.dataset == DatasetKind::text ? "dataset text" : "lossKind tokenCE",
           enum_name(env_.c.dataset));
    const int64_t nv = token_vocab(env_.net), tv = env_.data.text->vocab.size();
    if (nv < 0)
      fail("train", "{}: text data needs a token model (tokenPositionEmbed + lmHead layers)",
           env_.net.name);
    if (tv > nv)
      fail("train",
           "the text's vocabulary of {} characters does not fit the net's token vocabulary of "
           "{} ids (raise vocab of tokenPositionEmbed and lmHead, or use a smaller text)",
           tv, nv);
  }

  // vocab.json of the run: written on the first run, compared on a resume (a checkpoint trained
  // on other characters would decode to the wrong text).
  void save_run_files(const std::string& dir) const override {
    const fs::path p = fs::path(dir) / "vocab.json";
    const data::Vocab& v = env_.data.text->vocab;
    if (fs::exists(p)) {
      data::Vocab old = data::load_vocab(p.string());
      if (old.chars != v.chars)
        fail("train",
             "{}: the run was trained on another vocabulary (got {} characters in the text, "
             "expected the saved {}); use a new run dir",
             p.string(), v.size(), old.size());
      return;
    }
    data::save_vocab(v, p.string());
  }

  std::string start_line() override {
    const data::TextCorpus& t = *env_.data.text;
    unigram_ = data::unigram_bits_per_char(t);
    return fmt::format("text: {} characters, {} train / {} validation tokens; unigram bpc {:.4f}",
                       t.vocab.size(), t.train.size(), t.val.size(), unigram_);
  }
  double unigram_bpc() const override { return unigram_; }

  bool redraws_epochs() const override { return true; }
  data::Dataset epoch_data(int epoch, const data::Dataset& base) const override {
    return data::text_windows(*env_.data.text, true, static_cast<int>(base.x.shape().at(1)),
                              static_cast<uint64_t>(env_.c.seed), epoch);
  }

  void metric_columns(const train::EpochMetrics& m, report::Row& r) const override {
    r.emplace_back("val_bpc", m.evaluated ? std::optional<double>(train::bits_per_char(m.val.loss))
                                          : std::nullopt);
  }

  // The running train loss in bits per character (tokenCE counts no accuracy).
  std::string running_text(double loss, int64_t, int64_t) const override {
    return fmt::format("bpc {:.4f}", train::bits_per_char(loss));
  }

  std::string eval_text(const train::EpochMetrics& m) const override {
    std::string s = fmt::format("  val loss {:.4f}  val bpc {:.4f}  top-1 {:.2f}%", m.val.loss,
                                train::bits_per_char(m.val.loss), 100 * m.val.top1);
    if (m.val.has_top5) s += fmt::format("  top-5 {:.2f}%", 100 * m.val.top5);
    return s;
  }

  std::string final_text(const train::EpochMetrics& m, const std::string&) const override {
    return fmt::format(
        "validation loss {:.4f}, {:.4f} bits per character (unigram {:.4f}) on {} tokens",
        m.val.loss, train::bits_per_char(m.val.loss), unigram_, m.val.count);
  }

  std::string rate_text(double samples_per_s) const override {
    return fmt::format("{:.0f} tokens/s", samples_per_s * double(env_.table.input.at(0)));
  }

 private:
  double unigram_ = 0;
};

}  // namespace

std::unique_ptr<Task> make_text_task(const TaskEnv& e) { return std::make_unique<Text>(e); }

}  // namespace netspec::tasks
