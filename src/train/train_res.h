// TrainConfig trainRes (RSB-A3's train/test resolution split, the seed's field): the fused train
// step is emitted for and fed with trainRes x trainRes images while evaluation (and every saved
// checkpoint's use) stays at the net's own input size. The training split is resized once with
// PIL's antialiased bilinear filter (data::resize_images); augmentation then works at trainRes.
// A streamed split (or one of whole images) resizes each sample as it is read (resized_source:
// the same bytes), and random-resized crops are rendered at trainRes x trainRes.
// Only nets whose parameters do not depend on the input size qualify (a conv stack with a global
// pool before its head: the ResNets, MobileNets, EfficientNets, ConvNeXt); others are refused
// naming the first parameter whose shape changes.
#pragma once
#include <optional>

#include "data/dataset.h"
#include "spec/layer.h"
#include "spec/param_table.h"
#include "spec/train_config.h"

namespace netspec::train {

struct TrainResolution {
  NetSpec net;          // the net at trainRes x trainRes (the train step's input)
  ParamTable table;     // its ParamTable: the same parameters as the net's, another input
  data::Dataset train;  // the training split at trainRes x trainRes
};

// nullopt when c.trainRes is 0. Fails (exit 2) when the data is not image classification data
// [N, C, H, W] with class labels [N], or when the net cannot train at that size.
std::optional<TrainResolution> train_resolution(const NetSpec& net, const ParamTable& table,
                                                const TrainConfig& c, const data::Dataset& train);

}  // namespace netspec::train
