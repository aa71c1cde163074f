// trainRes (see train_res.h).
#include "train/train_res.h"

#include <fmt/format.h>

#include "core/error.h"
#include "data/image.h"
#include "data/sample_source.h"
#include "layers/param_table.h"

namespace netspec::train {

std::optional<TrainResolution> train_resolution(const NetSpec& net, const ParamTable& table,
                                                const TrainConfig& c, const data::Dataset& train) {
  if (c.trainRes <= 0) return std::nullopt;
  const int r = c.trainRes;
  if (train.x.rank() != 4 || train.y.rank() != 1)
    fail("train",
         "trainRes {} needs image classification data (images [N, C, H, W], labels [N]; got {} "
         "and labels {})",
         r, train.x.type_str(), train.y.type_str());
  if (c.ddpm) fail("train", "trainRes {} does not apply to DDPM (its targets are the images)", r);
  TrainResolution tr;
  tr.net = net;
  tr.net.inputHeight = tr.net.inputWidth = r;
  try {
    tr.table = build_param_table(tr.net);
  } catch (const Error& e) {
    fail("train", "trainRes {}: the net cannot run on {}x{} inputs: {}", r, r, r, e.what());
  }
  for (size_t i = 0; i < table.params.size(); ++i) {
    const auto& a = table.params[i];
    const auto* b = i < tr.table.params.size() ? &tr.table.params[i] : nullptr;
    if (!b || b->name != a.name || b->shape != a.shape)
      fail("train",
           "trainRes {}: parameter {} is {} at the net's {}x{} input but {} at {}x{}: its "
           "parameters depend on the input size (trainRes needs a net that pools globally "
           "before its head, e.g. globalAvgPool)",
           r, a.name, shape_str(a.shape), net.inputHeight, net.inputWidth,
           b ? shape_str(b->shape) : "absent", r, r);
  }
  if (tr.table.params.size() != table.params.size() || tr.table.output != table.output)
    fail("train", "trainRes {}: the net's parameters or output change at {}x{} (output {} vs {})",
         r, r, r, shape_str(tr.table.output), shape_str(table.output));
  tr.train = train;
  if (train.streamed()) {  // each sample resized as it is read: the same bytes as below
    const Shape& s = train.x.shape();
    tr.train.source = data::resized_source(train.source, s[1], s[2], s[3], r, r);
    tr.train.x = Tensor::wrap(DType::kUI8, {s[0], s[1], r, r}, nullptr);  // shape only
  } else {
    tr.train.x = data::resize_images(train.x, r, r);
  }
  return tr;
}

}  // namespace netspec::train
