// Images: JPEG (libjpeg-turbo) and PNG (libpng) decoding to RGB, torchvision-style
// Resize(shorter side) + CenterCrop, and image-folder trees (DIR/train/<class>/*.jpg|jpeg|png,
// DIR/val/<class>/..., class = sorted subfolder names) kept as raw ui8 [N, 3, H, W] at the net's
// input size. Grayscale is replicated to RGB; alpha is dropped (PIL's convert("RGB")). A corrupt
// or truncated file is an error naming it: `[image] DIR/x.jpg: Premature end of JPEG file`.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"

namespace netspec::data {

// Decoded images larger than this many pixels are refused from the header, before allocating
// (PIL's MAX_IMAGE_PIXELS, ~358 MB as RGBA); the environment variable overrides it.
inline constexpr int64_t kDefaultMaxImagePixels = 89478485;
inline constexpr const char* kMaxImagePixelsEnv = "NETSPEC_MAX_IMAGE_PIXELS";
int64_t max_image_pixels();

// The file (JPEG or PNG, told by its magic bytes) -> ui8 [3, H, W] RGB.
Tensor decode_image(const std::string& path);
// The same -> ui8 [4, H, W] RGBA, straight alpha (255 where the file has none).
Tensor decode_image_rgba(const std::string& path);
// The same from the file's bytes; `path` names it in errors.
Tensor decode_image_bytes(const std::string& bytes, const std::string& path);
// ui8 [3, h, w] -> ui8 [3, H, W]: scale so the image covers H x W (for a square target the
// shorter side becomes H, the longer int(H·long/short) as torchvision's Resize(H)), bilinear with
// PIL's antialiasing when shrinking (triangle filter widened by the scale), then the centre crop
// (offset round((size - H) / 2), half to even as Python).
// crop_ratio < 1 (torchvision's eval recipe, Resize(int(H / r)) + CenterCrop(H)): the image is
// scaled to cover floor(H / r) x floor(W / r) and the centre H x W is kept.
Tensor resize_center_crop(const Tensor& img, int64_t height, int64_t width,
                          double crop_ratio = 1.0);
// Images ui8 or f32 [N, C, H, W] -> [N, C, height, width], the whole image stretched with the
// same PIL bilinear filter (antialiased when shrinking); ui8 values rounded and clamped.
Tensor resize_images(const Tensor& x, int64_t height, int64_t width);
// The geometry of resize_center_crop for an ih x iw image: resized size rh x rw, crop offset.
struct CoverCrop {
  int64_t rh, rw, top, left;
};
CoverCrop cover_crop(int64_t ih, int64_t iw, int64_t height, int64_t width,
                     double crop_ratio = 1.0);
// decode + resize_center_crop + (v / 255 - mean[c]) / std[c] -> f32 [3, H, W] (for predict).
Tensor preprocess_image(const std::string& path, int64_t height, int64_t width,
                        const std::vector<float>& mean, const std::vector<float>& std,
                        double crop_ratio = 1.0);

struct ImageFolder {
  Dataset ds;  // x ui8 [N, 3, H, W] with mean/std attached, y i32 [N]
  std::vector<std::string> classes;
};
// The files of one split directory (`DIR/train`), labelled by class folder, as load_image_folder
// lists them (limit and classes likewise), without decoding.
struct ImageFolderList {
  std::vector<std::pair<std::string, int32_t>> files;
  std::vector<std::string> classes;
};
ImageFolderList list_image_folder(const std::string& split_dir, int64_t limit = 0,
                                  const std::vector<std::string>& classes = {});
// One split directory (`DIR/train`): every <class>/*.{jpg,jpeg,png} (any case) in sorted order,
// decoded in parallel. limit > 0 keeps `limit` files evenly strided over the sorted list (so
// every class stays represented). `classes` non-empty: the folder must have exactly these.
ImageFolder load_image_folder(const std::string& split_dir, int64_t height, int64_t width,
                              const Normalization& norm, int64_t limit = 0,
                              const std::vector<std::string>& classes = {},
                              double crop_ratio = 1.0);
// (file, label) pairs decoded in parallel, each resized and centre-cropped to H x W.
Dataset load_image_list(const std::vector<std::pair<std::string, int32_t>>& files, int64_t height,
                        int64_t width, const Normalization& norm, double crop_ratio = 1.0);
// .jpg, .jpeg or .png in any case.
bool has_image_ext(const std::string& path);

}  // namespace netspec::data
