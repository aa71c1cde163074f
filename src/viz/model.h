// A trained classifier to look at (Grad-CAM, prediction grids, the run report): its spec, the
// ParamTable, the checkpoint's parameters and BN running statistics, the class names; and the
// pictures of its inputs (files or dataset samples) as the net sees them (resized and cropped).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/dataset.h"
#include "report/canvas.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"

namespace netspec::viz {

struct Model {
  SpecFile spec;
  TrainConfig train;
  ParamTable table;
  std::vector<Tensor> params, running;
  std::string checkpoint;
  std::vector<std::string> class_names;  // RUN/classes.json, else the dataset's; empty: indices
  std::string class_name(int64_t k) const;
  // The evaluation crop of files (image folders: testCropRatio; fixed-size datasets: 1).
  double crop_ratio() const;
};

// run_dir given: RUN_DIR/config.json's resolved spec and RUN_DIR/best.safetensors (else
// last.safetensors; `checkpoint` overrides). Else `net` (zoo name or spec file) and `checkpoint`.
// dataset (optional) overrides the spec's (class names, normalisation).
Model load_model(const std::string& run_dir, const std::string& net, const std::string& checkpoint,
                 const std::string& dataset = "");

// One input sample f32 shaped like the net's input: a JPEG/PNG (decoded, resized and centre
// cropped as the evaluation split is, normalised with the dataset's mean/std; grayscale nets take
// the channel mean) or a .npy tensor already shaped like the input.
Tensor load_input(const std::string& path, const Shape& in, DatasetKind kind, double crop_ratio);
// Pixels ui8 [3, H, W] (already at the input's size) as that input, normalised for `kind`;
// `what` names them in errors.
Tensor input_from_pixels(const Tensor& px, const Shape& in, DatasetKind kind,
                         const std::string& what);
// The picture of that input at the net's resolution: the resized crop of an image file, or a
// .npy / normalised sample mapped back to pixels (x · std + mean, clamped to [0, 1]).
report::RgbImage input_picture(const std::string& path, const Shape& in, DatasetKind kind,
                               double crop_ratio);
// Sample i of a dataset as a picture (ui8 pixels, or f32 values un-normalised for `kind`); a
// streamed split's sample is read through its SampleSource.
report::RgbImage sample_picture(const data::Dataset& ds, int64_t i, DatasetKind kind);
// A normalised f32 [C, H, W] sample as a picture.
report::RgbImage tensor_picture(const float* x, const Shape& chw, DatasetKind kind);

// Inputs stacked into one batch [n, ...].
Tensor stack(const std::vector<Tensor>& samples);

}  // namespace netspec::viz
