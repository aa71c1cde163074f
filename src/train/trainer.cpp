// The training loop (see trainer.h). Module inputs and outputs are bound by the manifests' roles
// (docs/abi.md), so the loop does not hard-code the optimizer's state layout.
#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "core/error.h"
#include "core/file_check.h"
#include "core/safetensors.h"
#include "data/loader.h"
#include "data/repeated_aug.h"
#include "data/text.h"
#include "exec/backend.h"
#include "layers/lower.h"
#include "layers/param_table.h"
#include "report/loss_plot.h"
#include "report/metrics_log.h"
#include "report/progress.h"
#include "train/averaging.h"
#include "train/batch_augment.h"
#include "train/checkpoint.h"
#include "train/ddpm.h"
#include "train/det_train.h"
#include "train/divergence.h"
#include "train/init_from.h"
#include "train/prior_bias.h"
#include "train/signals.h"
#include "train/stepper.h"
#include "train/train_res.h"
#include "train/tta.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// seg_classes > 0 (segmentation): val_top1 is the pixel accuracy; mIoU, Dice and per-class IoU.
report::Row metrics_row(const EpochMetrics& m, bool text, int64_t seg_classes) {
  auto opt = [&](double v, bool on) { return on ? std::optional<double>(v) : std::nullopt; };
  const bool e = m.evaluated;
  report::Row r = {{"epoch", m.epoch},
                   {"step", static_cast<double>(m.step)},
                   {"lr", m.lr},
                   {"train_loss", m.train_loss},
                   {"val_loss", opt(m.val.loss, e && !m.det)},
                   {"val_top1", opt(m.val.top1, e && !m.det)},
                   {"val_top5", opt(m.val.top5, e && m.val.has_top5)},
                   {"val_count", opt(static_cast<double>(m.val.count), e)},
                   {"seconds", m.seconds},
                   {"ms_per_step", m.ms_per_step},
                   {"samples_per_s", m.samples_per_s}};
  if (text) r.emplace_back("val_bpc", opt(bits_per_char(m.val.loss), e));
  for (const auto& [name, top1] : m.average_top1) r.emplace_back(name, top1);
  if (m.det) {
    r.emplace_back("val_map50", opt(m.map.voc_map50, e));
    r.emplace_back("val_map", opt(m.map.coco_map, e));
    for (size_t k = 0; k < m.map.voc_ap50.size(); ++k) {
      r.emplace_back(fmt::format("ap50_c{}", k), opt(m.map.voc_ap50[k], e));
      r.emplace_back(fmt::format("ap_c{}", k), opt(m.map.coco_ap[k], e));
    }
  }
  if (seg_classes > 0) {
    r.emplace_back("val_miou", opt(m.val.miou, e));
    r.emplace_back("val_dice", opt(m.val.dice, e));
    for (int64_t k = 0; k < seg_classes; ++k)
      r.emplace_back(fmt::format("val_iou_{}", k), opt(e ? m.val.iou.at(size_t(k)) : 0,
                                                       e && !std::isnan(m.val.iou.at(size_t(k)))));
  }
  return r;
}

// One steps.csv row. grad-norm is not logged: the fused train step does not return it.
report::Row step_row(int64_t step, double epoch, double loss, double lr, int64_t n, double s) {
  return {{"step", static_cast<double>(step)},
          {"epoch", epoch},
          {"train_loss", loss},
          {"lr", lr},
          {"samples", static_cast<double>(n)},
          {"ms", 1e3 * s},
          {"samples_per_s", s > 0 ? n / s : 0.0}};
}

// The net's token-id range: the smallest vocab of its tokenPositionEmbed / lmHead layers
// (-1 when it has neither, i.e. it is not a token model).
int64_t token_vocab(const NetSpec& net) {
  int64_t v = -1;
  auto take = [&](int64_t n) { v = v < 0 ? n : std::min(v, n); };
  for (const Layer& l : net.layers)
    if (auto* f = layers::traits(l).vocab) take(f(l));
  return v;
}

// vocab.json of the run: written on the first run, compared on a resume (a checkpoint trained
// on other characters would decode to the wrong text).
void save_or_check_vocab(const data::Vocab& v, const fs::path& p) {
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

// tokens: tokens per sample of a language model (0: not text); its rate is tokens/s.
std::string epoch_line(const EpochMetrics& m, int epochs, bool text, int64_t tokens) {
  std::string s = fmt::format("epoch {}/{}  train loss {:.4f}", m.epoch, epochs, m.train_loss);
  if (m.evaluated) {
    if (m.det)
      return s + fmt::format("  mAP@0.5 {:.4f}  mAP@[.5:.95] {:.4f}  ({:.1f} s){}\n",
                             m.map.voc_map50, m.map.coco_map, m.seconds, m.best ? "  best" : "");
    s += fmt::format("  val loss {:.4f}", m.val.loss);
    if (text) s += fmt::format("  val bpc {:.4f}", bits_per_char(m.val.loss));
    if (m.val.regression) {
      s += fmt::format("  (noise mse)");
    } else if (m.val.seg) {
      s += fmt::format("  mIoU {:.4f}  dice {:.4f}  pixel acc {:.2f}%  IoU", m.val.miou, m.val.dice,
                       100 * m.val.top1);
      for (double v : m.val.iou) s += fmt::format(" {:.3f}", v);
    } else {
      s += fmt::format("  top-1 {:.2f}%", 100 * m.val.top1);
    }
    if (m.val.has_top5) s += fmt::format("  top-5 {:.2f}%", 100 * m.val.top5);
  }
  const std::string rate = tokens > 0 ? fmt::format("{:.0f} tokens/s", m.samples_per_s * tokens)
                                      : fmt::format("{:.0f} samples/s", m.samples_per_s);
  s += fmt::format("  ({:.1f} s, {:.2f} ms/step, {}, lr {:.3g})", m.seconds, m.ms_per_step, rate,
                   m.lr);
  if (m.best) s += "  best";
  return s + "\n";
}

}  // namespace

std::vector<std::string> unsupported_settings(const TrainConfig& c) {
  std::vector<std::string> out;
  auto refuse = [&](bool on, const char* field) {
    if (on) out.emplace_back(field);
  };
  refuse(!c.runningBN, "runningBN = false");
  return out;
}

TrainResult run_training(const SpecFile& spec, const Splits& data, const TrainOptions& o) {
  const TrainConfig c = spec.train.value_or(TrainConfig{});
  validate(c);
  const NetSpec& net = spec.net;
  const ParamTable table = o.table ? *o.table : build_param_table(net);
  const int64_t batch = c.batchSize;
  // Every split is checked now, not after an epoch of training (a test split of another image
  // size failed only at the first evaluation, naming a module argument).
  auto check_split = [&](const data::Dataset& d, const char* name) {
    Shape sample =
        d.x.shape().size() < 2 ? Shape{} : Shape(d.x.shape().begin() + 1, d.x.shape().end());
    if (c.ddpm && sample.size() == 3) ++sample[0];  // DDPM adds the t/T input channel
    if (sample.empty() || sample != table.input)
      fail("train", "{} split sample shape does not match the net's input (got {}, expected {})",
           name, d.x.type_str(), "Nx" + shape_str(table.input));
    if (d.y.rank() < 1 || d.y.shape()[0] != d.x.shape()[0])
      fail("train", "{} split has {} labels for {} samples", name,
           d.y.rank() < 1 ? 0 : d.y.shape()[0], d.x.shape()[0]);
  };
  check_split(data.train, "training");
  if (data.test.x.rank() > 0) check_split(data.test, "test");
  // Fields whose machinery does not exist yet are refused, never silently ignored.
  if (auto u = unsupported_settings(c); !u.empty())
    fail("train", "{} {} not supported by the trainer yet (set {} to the default)",
         fmt::join(u, ", "), u.size() > 1 ? "are" : "is", u.size() > 1 ? "them" : "it");
  if (c.useTTA && !c.augment)
    fail("train", "useTTA averages views of the training augmentation: set augment = true");
  const bool text = data.text != nullptr;
  if (text) {
    const int64_t nv = token_vocab(net), tv = data.text->vocab.size();
    if (nv < 0)
      fail("train", "{}: text data needs a token model (tokenPositionEmbed + lmHead layers)",
           net.name);
    if (tv > nv)
      fail("train",
           "the text's vocabulary of {} characters does not fit the net's token vocabulary of "
           "{} ids (raise vocab of tokenPositionEmbed and lmHead, or use a smaller text)",
           tv, nv);
  }

  // trainRes: the train step runs on trainRes x trainRes images, evaluation at the net's size.
  const std::optional<TrainResolution> tres = train_resolution(net, table, c, data.train);
  const NetSpec& train_net = tres ? tres->net : net;
  const ParamTable& train_table = tres ? tres->table : table;
  const data::Dataset& train_src = tres ? tres->train : data.train;
  if (tres && o.log)
    *o.log << fmt::format("trainRes: training at {}x{}, evaluating at {}x{}\n", c.trainRes,
                          c.trainRes, net.inputHeight, net.inputWidth);

  exec::BackendOptions bo = o.backend_options;
  if (!o.dp.multi_process()) bo.devices = std::max(bo.devices, o.dp.replicas);  // xla: R devices
  auto backend = exec::make_backend(o.backend, bo);
  Stepper stepper(train_net, c, *backend, &train_table, o.dp);
  const int reps = o.dp.replicas;
  Evaluator evaluator(net, batch, *backend, &table);
  Averages averages(train_net, c, *backend, train_table,
                    evaluator);  // EMA / SWA / SWAG (averaging.h)
  // Processes: every evaluation (top-1, noise MSE, averages, TTA) scores its share of the batches.
  const RankSplit split{o.dp.comm, o.dp.rank};
  averages.set_split(split);
  const bool det = data.det != nullptr;
  const DetTargets targets = det ? det_targets(net, table, c) : DetTargets{};
  std::vector<Tensor> init = init_params(table, c.init, static_cast<uint64_t>(c.seed));
  {
    const std::string said = apply_prior_bias(
        net, table, c, det ? det_epoch(data.det->train, targets, c, c.seed, -1) : train_src, init);
    if (o.log && !said.empty()) *o.log << said << "\n";
  }
  TrainState s = make_state(std::move(init), stepper.state_manifest(), evaluator.manifest());
  check_freeze(c, table);
  if (!c.bootstrapRanges.empty() && c.bootstrapBackbone.empty())
    fail("train", "bootstrapRanges '{}' needs bootstrapBackbone (the file to load from)",
         c.bootstrapRanges);
  if (!c.bootstrapBackbone.empty())
    load_init_weights(c.bootstrapBackbone, table, s, c.bootstrapRanges, o.log);
  if (o.run && !o.run->init_from.empty()) load_init_weights(o.run->init_from, table, s, "", o.log);

  const fs::path dir = o.run_dir;
  const std::string last = o.run_dir.empty() ? "" : (dir / "last.safetensors").string();
  const std::string averages_path = (dir / "averages.safetensors").string();
  // `last`, preceded by the running averages of the same step (a resume continues both).
  auto save_last = [&] {
    if (averages.any()) averages.save_state(averages_path, s, net.name);
    save_checkpoint(last, table, s, net.name);
  };
  double best_top1 = -std::numeric_limits<double>::infinity();  // scores may be negative (-mse)
  if (!o.run_dir.empty()) {
    ensure_writable_dir("train", dir.string(), "run dir");
    if (fs::exists(last)) {
      load_checkpoint(last, table, s);
      // Format 1 summed per-update mean losses; every update it made mid-epoch was full.
      if (s.format < 2) s.loss_sum *= static_cast<double>(batch) * c.gradAccumSteps;
      if (o.log)
        *o.log << fmt::format("resuming {} at epoch {} batch {} (step {})\n", last, s.epoch + 1,
                              s.batch_in_epoch, s.step);
      if (averages.any())  // EMA / SWA / SWAG continue from where `last` stopped
        if (std::string why = averages.load_state(averages_path, s); !why.empty() && o.log)
          *o.log << why << "\n";
    }
    if (fs::exists(dir / "best.json")) {
      std::ifstream f(dir / "best.json");
      try {
        auto j = nlohmann::json::parse(f);
        best_top1 = j.value("val_score", j.at("val_top1").get<double>());
      } catch (const nlohmann::json::exception&) {
        best_top1 = -std::numeric_limits<double>::infinity();  // unreadable: rewritten next
      }
    }
    nlohmann::ordered_json cfg;
    SpecFile resolved = spec;
    resolved.train = c;
    cfg["spec"] = nlohmann::ordered_json::parse(dump_spec(resolved));
    cfg["backend"] = o.backend;
    write_file_atomic((dir / "config.json").string(), !o.run || o.run->config_json.empty()
                                                          ? cfg.dump(2) + "\n"
                                                          : o.run->config_json);
    if (text) save_or_check_vocab(data.text->vocab, dir / "vocab.json");
    if (det)
      write_file_atomic((dir / "classes.json").string(),
                        nlohmann::json(data.class_names).dump() + "\n");
  }
  TrainResult res;
  if (text) {
    res.unigram_bpc = data::unigram_bits_per_char(*data.text);
    if (o.log)
      *o.log << fmt::format(
          "text: {} characters, {} train / {} validation tokens; unigram bpc {:.4f}\n",
          data.text->vocab.size(), data.text->train.size(), data.text->val.size(), res.unigram_bpc);
  }
  // DDPM (ddpm.h): batches become (noised image + t plane, noise) pairs; eval is the noise MSE.
  const std::optional<DdpmSchedule> ddpm =
      c.ddpm ? std::optional<DdpmSchedule>(DdpmSchedule(c)) : std::nullopt;
  if (ddpm)  // each weight average is scored by its noise MSE too
    averages.set_evaluate("noise_mse", [&](const TrainState& st) {
      return ddpm_evaluate(*ddpm, c.dataset, evaluator, st.params, st.running, data.test, 1024,
                           split)
          .loss;
    });
  if (ddpm)  // SWA's BN statistics are of the DDPM inputs (fixed draws: step b, micro -1)
    averages.set_bn_input([&](int64_t b, Tensor& x) {
      Tensor eps;
      ddpm_batch(*ddpm, c.dataset, uint64_t(c.seed), b, -1, x, eps);
    });
  // Segmentation: per-pixel logits [C, H, W] against label maps [N, H, W].
  const int64_t seg_classes =
      table.output.size() == 3 && data.test.y.rank() == 3 ? table.output[0] : 0;

  // Text: training windows are redrawn each epoch from the corpus (seed, epoch).
  data::Dataset train_ds =
      det ? det_epoch(data.det->train, targets, c, uint64_t(c.seed), s.epoch) : train_src;
  int det_drawn = s.epoch;  // the epoch (0-based) train_ds was drawn for
  if (det && (c.repeatedAug > 1 || c.mixup || c.cutmix || c.knnMixup || c.randomErasing ||
              c.randAugment || c.autoAugment))
    fail("train",
         "detection data supports augment (flips) and fpnAffine* only: repeatedAug, mixup, "
         "cutmix, knnMixup, randomErasing, randAugment and autoAugment would not move the boxes");
  if (det && (c.useEMA || c.useSWA || c.useSWAG || c.useTTA))
    fail("train", "useEMA/useSWA/useSWAG/useTTA evaluate top-1, not detection mAP (set them off)");
  // Repeated augmentation: each epoch's rows (timm RepeatAugSampler; the same count every epoch).
  auto ra_epoch = [&](int epoch) {
    return data::repeated_aug_epoch(train_src, c.repeatedAug, static_cast<uint64_t>(c.seed),
                                    epoch - 1);
  };
  if (c.repeatedAug > 1 && !text) train_ds = ra_epoch(1);
  // Detection: flips and affine move the boxes too (det_epoch), never the loader's augment.
  data::Augment aug = c.augment && !det ? data::Augment::standard() : data::Augment{};
  aug.rand_augment = c.randAugment;  // RandAugment / AutoAugment after crop/flip (ui8 images)
  aug.auto_augment = c.autoAugment;
  aug.ra = {c.randAugmentN,          c.randAugmentM,        c.randAugmentMstd, 0.5,
            c.randAugmentIncreasing, c.randAugmentGeometric};
  const BatchAugment batch_aug(c, table, train_src);  // erasing, mixup/cutmix, soft targets
  if (c.augment && train_src.x.shape().size() != 4)
    fail("train", "augment needs image data [N, C, H, W] (got {})", train_src.x.type_str());
  // Every sample is trained once per epoch (PyTorch's drop_last=False): nb = ceil(N/B) batches,
  // the last one smaller when B does not divide N; an update takes k of them, so an epoch is
  // ceil(nb/k) updates and the last may take fewer (and smaller) micro-batches.
  const int k = stepper.accum();
  const int64_t nb = data::Loader(train_ds, batch, true, 0).num_batches();
  const int64_t spe = (nb + k - 1) / k;
  if (s.batch_in_epoch >= spe)
    fail("train",
         "{}: checkpoint is at update {} of an epoch of {} updates (different batch size or "
         "dataset?)",
         last, s.batch_in_epoch, spe);
  if (s.epoch >= c.epochs && o.log)
    *o.log << fmt::format("nothing to do: {} already has {} of {} epochs\n", last, s.epoch,
                          c.epochs);
  // Rows past the checkpoint's epoch are dropped only now, after every check of the resume point.
  report::MetricsLog mlog(o.run_dir, s.epoch);
  report::MetricsLog slog(o.run_dir, s.step, "steps", "step");  // per step, flushed with `last`
  broadcast_state(s, o.dp);  // processes: every rank resumes from rank 0's checkpoint
  const int64_t tail = train_ds.size() % batch;
  if (reps > 1 && tail % reps != 0 && tail < reps)
    fail("train",
         "the epoch's last batch has {} samples, fewer than the {} replicas (choose a batchSize "
         "that leaves a larger remainder of the {} samples, or use --limit)",
         tail, reps, train_ds.size());
  const char* where = o.dp.multi_process() ? " (processes)"
                      : o.backend == "xla" ? " (devices)"
                                           : " (threads)";
  if (reps > 1 && o.log)
    *o.log << fmt::format("data parallel: {} replicas{}, {} samples each per step{}\n", reps, where,
                          batch / reps, c.syncBN ? ", sync-BN" : "");
  res.first_epoch = s.epoch + 1;
  res.first_batch = s.batch_in_epoch;
  DivergenceGuard guard;
  // Evaluation stops after its current step on SIGINT/SIGTERM (all ranks together).
  const auto eval_stop = [&] { return any_rank(stop_requested(), o.dp); };

  for (int epoch = s.epoch + 1; epoch <= c.epochs; ++epoch) {
    auto t0 = Clock::now();
    const int64_t b0 = s.batch_in_epoch;
    double loss_sum = s.loss_sum, step_secs = 0, lr = 0;
    if (det && epoch - 1 != det_drawn) {
      train_ds = det_epoch(data.det->train, targets, c, uint64_t(c.seed), epoch - 1);
      det_drawn = epoch - 1;
    }
    if (data.text)
      train_ds = data::text_windows(*data.text, true, static_cast<int>(train_ds.x.shape().at(1)),
                                    static_cast<uint64_t>(c.seed), epoch - 1);
    else if (c.repeatedAug > 1)
      train_ds = ra_epoch(epoch);
    // Batches are assembled on a worker thread while the step runs (Prefetcher); identical to
    // calling the loader in order. A mid-epoch resume skips the batches already used.
    data::Loader train_ld(train_ds, batch, true, static_cast<uint64_t>(c.seed), aug);
    data::Prefetcher pf(train_ld);
    pf.start_epoch(epoch - 1);
    data::Batch mb;
    for (int64_t j = 0; j < b0 * k; ++j) pf.next(mb);
    // A mid-epoch save happens before the last update, so the b0·k batches done were all full.
    int64_t samples = b0 * k * batch, run_samples = 0;
    std::unique_ptr<report::Progress> prog;
    if (o.log && (o.tty || o.progress_every_s >= 0))
      prog = std::make_unique<report::Progress>(*o.log, o.tty,
                                                fmt::format("epoch {}/{}", epoch, c.epochs),
                                                spe - b0, batch * k, o.progress_every_s);
    std::vector<Tensor> xs, ys;
    for (int64_t b = b0; b < spe; ++b) {
      xs.clear();
      ys.clear();
      int64_t n = 0;  // samples in this update
      for (int64_t j = b * k; j < std::min<int64_t>((b + 1) * k, nb); ++j) {
        if (!pf.next(mb)) fail("train", "loader ended early (batch {} of {})", j, nb);
        if (batch_aug.active()) batch_aug.apply(epoch - 1, j, train_ld, mb);
        if (mb.valid % reps != 0) {  // data parallel: equal shards (drops < R samples)
          mb.valid -= mb.valid % reps;
          mb.x = first_rows(mb.x, mb.valid);
          mb.y = first_rows(mb.y, mb.valid);
        }
        n += mb.valid;
        if (ddpm) ddpm_batch(*ddpm, c.dataset, uint64_t(c.seed), s.step, j, mb.x, mb.y);
        xs.push_back(std::move(mb.x));
        ys.push_back(std::move(mb.y));
      }
      if (det && targets.kind == LossKind::detrSet) {  // DETR: match to the current predictions
        stepper.sync(s);
        for (size_t j = 0; j < xs.size(); ++j)
          ys[j] = detr_match_labels(evaluator, s.params, s.running, xs[j], ys[j]);
      }
      lr = learning_rate(c, s.step, spe);
      if (c.swaLr > 0 && averages.any() && epoch - 1 >= c.swaStartEpoch) lr = c.swaLr;
      auto ts = Clock::now();
      double loss = stepper.step(s, xs, ys, lr, s.step + 1);
      step_secs += secs(ts);
      guard.check_step(loss, s.step + 1, epoch, b + 1);
      // The epoch's train loss is the mean over its samples: Σ loss·n / Σ n.
      loss_sum += loss * static_cast<double>(n);
      samples += n;
      run_samples += n;
      ++s.step;
      slog.append(
          step_row(s.step, epoch - 1 + static_cast<double>(b + 1) / spe, loss, lr, n, secs(ts)),
          false);
      if (averages.per_step()) {
        stepper.sync(s);
        averages.after_step(s);
      }
      if (prog) prog->update(b + 1 - b0, loss_sum / static_cast<double>(samples), run_samples);
      const bool stop = any_rank(stop_requested(), o.dp);  // processes: all stop together
      if (stop && b + 1 < spe) {
        stepper.sync(s);  // the backend's params / optimizer state into s for the checkpoint
        s.batch_in_epoch = b + 1;
        s.loss_sum = loss_sum;
        if (prog) prog->finish();
        slog.flush();
        if (!last.empty()) save_last();
        if (o.log)
          *o.log << fmt::format(
              "interrupted at step {} (epoch {}, batch {}/{}); {}\n", s.step, epoch, b + 1, spe,
              last.empty() ? "no run dir, nothing saved" : "saved " + last + "; rerun to resume");
        res.interrupted = true;
        res.steps = s.step;
        res.params = s.params;
        return res;
      }
    }
    if (prog) prog->finish();
    stepper.sync(s);  // evaluation and checkpoints read s.params / s.opt
    s.epoch = epoch;
    s.batch_in_epoch = 0;
    s.loss_sum = 0;

    EpochMetrics m;
    m.epoch = epoch;
    m.step = s.step;
    m.lr = lr;
    m.train_loss = loss_sum / static_cast<double>(samples);
    m.samples = samples;
    const double run_steps = static_cast<double>(spe - b0);
    m.ms_per_step = run_steps > 0 ? 1e3 * step_secs / run_steps : 0;
    m.samples_per_s = step_secs > 0 ? static_cast<double>(run_samples) / step_secs : 0;
    if (det) {  // every row has the mAP columns (metrics.csv takes its header from the first)
      m.det = true;
      m.map.voc_ap50.assign(targets.classes, -1);
      m.map.coco_ap.assign(targets.classes, -1);
    }
    if (epoch % c.evalEveryNEpochs == 0 || epoch == c.epochs) {
      if (det) {
        m.map =
            evaluate_det(evaluator, s.params, s.running, data.test, data.det->test, targets, split);
        m.val.top1 = m.map.voc_map50;
        m.val.count = data.test.size();
      } else {
        m.val =
            ddpm ? ddpm_evaluate(*ddpm, c.dataset, evaluator, s.params, s.running, data.test, 1024,
                                 split)
                 : evaluator.run(s.params, s.running, data.test, eval_stop, o.dp.comm, o.dp.rank);
      }
      // Interrupted: the epoch's row has no validation fields (as an epoch not evaluated).
      m.evaluated = !m.val.interrupted;
      if (m.evaluated) guard.check_eval(m.val.loss, epoch);
      m.best = m.evaluated && m.val.count > 0 && m.val.score() > best_top1;
      if (m.val.interrupted && o.log)
        *o.log << fmt::format("interrupted during the evaluation of epoch {}; it is skipped\n",
                              epoch);
    }
    // Each average (EMA / SWA / SWAG) evaluated and saved beside the weights.
    std::string avg = averages.any() ? averages.end_epoch(epoch, s, train_ds, data.test,
                                                          m.evaluated, o.run_dir, net.name)
                                     : "";
    m.average_top1 = averages.top1_columns();
    if (c.useTTA) {  // ttaSamples augmented views per sample, logits averaged
      std::optional<double> tta;
      if (m.evaluated)
        tta = evaluate_tta(evaluator, s.params, s.running, data.test, aug, c.ttaSamples,
                           static_cast<uint64_t>(c.seed) + 1, split)
                  .top1;
      if (tta) avg += fmt::format("  tta top-1 {:.2f}%", 100 * *tta);
      m.average_top1.emplace_back("tta_top1", tta);
    }
    m.seconds = secs(t0);
    std::string line = epoch_line(m, c.epochs, text, text ? train_ds.x.shape().at(1) : 0);
    line.insert(line.size() - 1, avg);
    res.epochs.push_back(m);
    if (o.log) *o.log << line << std::flush;

    // Order matters for a kill at any point: rows, then best, then last (a resume drops rows
    // past `last` and recomputes them bit for bit).
    mlog.append(metrics_row(m, text, seg_classes));
    slog.flush();
    if (!o.run_dir.empty()) {
      report::write_loss_plots(o.run_dir, mlog.rows(), slog.rows());
      if (m.best) {
        save_checkpoint((dir / "best.safetensors").string(), table, s, net.name, false);
        nlohmann::ordered_json b;
        b["epoch"] = m.epoch;
        b["step"] = m.step;
        if (!m.det) b["val_loss"] = m.val.loss;
        b["val_top1"] = m.val.top1;  // detection: the VOC mAP@0.5 (resume compares it)
        if (m.det) b["val_map"] = m.map.coco_map;
        if (m.val.has_top5) b["val_top5"] = m.val.top5;
        b["val_count"] = m.val.count;
        b["val_score"] = m.val.score();  // what "best" compares: mIoU (seg) or top-1
        if (m.val.seg) b["val_miou"] = m.val.miou;
        write_file_atomic((dir / "best.json").string(), b.dump(2) + "\n");
      }
      if (epoch % c.checkpointEveryNEpochs == 0 || epoch == c.epochs) save_last();
    }
    if (m.best) best_top1 = m.val.score();
    if (any_rank(stop_requested(), o.dp) && (epoch < c.epochs || m.val.interrupted)) {
      if (!last.empty() && epoch % c.checkpointEveryNEpochs != 0) save_last();
      if (o.log) *o.log << fmt::format("interrupted after epoch {}; rerun to resume\n", epoch);
      res.interrupted = true;
      break;
    }
  }
  res.steps = s.step;
  res.params = s.params;
  return res;
}

}  // namespace netspec::train
