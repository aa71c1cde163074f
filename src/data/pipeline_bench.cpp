// See pipeline_bench.h.
#include "data/pipeline_bench.h"

#include <fmt/format.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "core/error.h"
#include "data/loader.h"
#include "data/own_data.h"
#include "data/pack.h"
#include "data/sample_source.h"

namespace netspec::data {
namespace {

// User + system CPU seconds of every thread of this process so far.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

std::string bench_pipeline(const std::string& dataset, const std::string& dir,
                           const std::string& input, const std::string& augment, int threads,
                           int64_t batch, int64_t batches) {
  if (dataset != "folder" && dataset != "imagenet" && dataset != "packed")
    fail("data bench", "--dataset {}: expected folder, imagenet or packed", dataset);
  if (dataset == "packed" && !is_packed_dir(dir))
    fail("data bench", "--dataset packed: {} holds no {}", dir, kPackIndexName);
  if (augment != "train" && augment != "rrc" && augment != "eval")
    fail("data bench", "--augment {}: expected train, rrc or eval", augment);
  long long c = 0, h = 0, w = 0;
  char tail = 0;
  if (std::sscanf(input.c_str(), "%lldx%lldx%lld%c", &c, &h, &w, &tail) != 3 || c < 1 || h < 1 ||
      w < 1)
    fail("data bench", "--input {}: expected CxHxW (e.g. 3x224x224)", input);
  if (batch < 1 || batches < 0 || threads < 0)
    fail("data bench", "--batch must be >= 1, --batches and --threads >= 0");
  PipelineOptions& p = pipeline_options();
  p.stream_allowed = true;
  p.memory_mb = 0;  // always streamed: the pipeline is what is measured
  if (threads > 0) p.threads = threads;
  const bool train = augment != "eval", rrc = augment == "rrc";
  const Splits s = load_image_folder_dataset(dir, c, h, w, 0, 0.875, rrc);
  const Dataset& ds = train ? s.train : s.test;
  if (ds.size() == 0) fail("data bench", "{}: the {} split is empty", dir, train ? "train" : "test");
  Augment aug = train ? Augment::standard() : Augment{};
  if (rrc) aug.rrc = true, aug.crop = false;  // RandomResizedCrop + flip
  Loader ld(ds, batch, train, 0, aug);
  Prefetcher pf(ld);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  int64_t images = 0, done = 0;
  for (int64_t epoch = 0; batches == 0 ? epoch < 1 : done < batches; ++epoch) {
    pf.start_epoch(epoch);
    Batch b;
    while ((batches == 0 || done < batches) && pf.next(b)) {
      images += b.valid;
      ++done;
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - c0;
  const int t = decode_threads();
  // Per CPU-second: what one core would do, robust to a machine shared with other work.
  return fmt::format("{} {} images ({}x{}x{}, {} batches of {}) in {:.2f} s: {:.0f} images/s, "
                     "{:.0f} per decode thread ({} threads), {:.0f} per CPU-second",
                     images, augment, c, h, w, done, batch, secs, images / secs,
                     images / secs / t, t, cpu > 0 ? images / cpu : 0.0);
}

}  // namespace netspec::data
