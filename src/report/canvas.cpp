// Cairo canvas (see canvas.h).
#include "report/canvas.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>

#include <algorithm>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::report {
namespace {

void check(cairo_status_t st, const std::string& what) {
  if (st != CAIRO_STATUS_SUCCESS) fail("draw", "{}: {}", what, cairo_status_to_string(st));
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int n) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), n);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

RgbImage::RgbImage(int w, int h, Rgb fill)
    : width(w), height(h), rgb(static_cast<size_t>(w) * h * 3) {
  for (size_t i = 0; i < rgb.size(); i += 3) std::copy(fill.begin(), fill.end(), rgb.begin() + i);
}

Rgb RgbImage::at(int x, int y) const {
  const size_t i = (static_cast<size_t>(y) * width + x) * 3;
  return {rgb[i], rgb[i + 1], rgb[i + 2]};
}

Canvas::Canvas(int width, int height) : width_(width), height_(height) {
  if (width < 1 || height < 1) fail("draw", "canvas size must be >= 1 (got {}x{})", width, height);
  surface_ = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  check(cairo_surface_status(surface_), "image surface");
  cr_ = cairo_create(surface_);
  rect(0, 0, width, height, kWhite);
}

Canvas::Canvas(const std::string& svg_path, int width, int height)
    : width_(width), height_(height), svg_(true), path_(svg_path) {
  // Drawn into memory and written by finish() atomically: never through a planted symlink.
  surface_ = cairo_svg_surface_create_for_stream(append_bytes, &svg_bytes_, width, height);
  check(cairo_surface_status(surface_), svg_path);
  cairo_svg_surface_set_document_unit(surface_, CAIRO_SVG_UNIT_PX);  // as large as the PNG
  cr_ = cairo_create(surface_);
  rect(0, 0, width, height, kWhite);
}

Canvas::~Canvas() {
  if (cr_) cairo_destroy(cr_);
  if (surface_) cairo_surface_destroy(surface_);
}

void Canvas::finish() {
  cairo_surface_finish(surface_);
  check(cairo_surface_status(surface_), svg_ ? path_ : "surface");
  if (svg_) write_file_atomic(path_, svg_bytes_, "draw");
}

void Canvas::color(Rgb c, double alpha) const {
  cairo_set_source_rgba(cr_, c[0] / 255.0, c[1] / 255.0, c[2] / 255.0, alpha);
}

void Canvas::rect(double x, double y, double w, double h, Rgb fill, double alpha) const {
  color(fill, alpha);
  cairo_rectangle(cr_, x, y, w, h);
  cairo_fill(cr_);
}

namespace {
void select_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}
}  // namespace

double Canvas::text_width(const std::string& s, double size, bool bold) const {
  select_font(cr_, size, bold);
  cairo_text_extents_t e;
  cairo_text_extents(cr_, s.c_str(), &e);
  return e.x_advance;
}

void Canvas::text(double x, double y, const std::string& s, double size, Rgb c, Align a, bool bold,
                  double angle) const {
  const double w = text_width(s, size, bold);
  const double dx = a == Align::left ? 0 : a == Align::center ? -w / 2 : -w;
  cairo_save(cr_);
  cairo_translate(cr_, x, y);
  cairo_rotate(cr_, -angle);
  color(c);
  cairo_move_to(cr_, dx, 0);
  cairo_show_text(cr_, s.c_str());
  cairo_restore(cr_);
}

void Canvas::image(const RgbImage& img, double x, double y, double w, double h,
                   bool nearest) const {
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, img.width, img.height);
  check(cairo_surface_status(s), "image blit");
  cairo_surface_flush(s);
  const int stride = cairo_image_surface_get_stride(s);
  unsigned char* d = cairo_image_surface_get_data(s);
  for (int r = 0; r < img.height; ++r)
    for (int col = 0; col < img.width; ++col) {
      Rgb p = img.at(col, r);
      auto* px = reinterpret_cast<uint32_t*>(d + static_cast<size_t>(r) * stride) + col;
      *px = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
    }
  cairo_surface_mark_dirty(s);
  cairo_save(cr_);
  cairo_rectangle(cr_, x, y, w, h);
  cairo_clip(cr_);
  cairo_translate(cr_, x, y);
  cairo_scale(cr_, w / img.width, h / img.height);
  cairo_set_source_surface(cr_, s, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr_),
                           nearest ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_BILINEAR);
  cairo_paint(cr_);
  cairo_restore(cr_);
  cairo_surface_destroy(s);
}

void Canvas::write_png(const std::string& path) const {
  if (svg_) fail("draw", "{}: an SVG canvas has no PNG", path);
  write_file_atomic(path, png_bytes(), "draw");  // temp + rename: never through a symlink
}

std::string Canvas::png_bytes() const {
  if (svg_) fail("draw", "an SVG canvas has no PNG");
  cairo_surface_flush(surface_);
  std::string out;
  check(cairo_surface_write_to_png_stream(surface_, append_bytes, &out), "PNG encoding");
  return out;
}

RgbImage Canvas::pixels() const {
  if (svg_) fail("draw", "an SVG canvas has no pixels");
  cairo_surface_flush(surface_);
  RgbImage img(width_, height_);
  const int stride = cairo_image_surface_get_stride(surface_);
  const unsigned char* d = cairo_image_surface_get_data(surface_);
  for (int r = 0; r < height_; ++r)
    for (int col = 0; col < width_; ++col) {
      uint32_t px = reinterpret_cast<const uint32_t*>(d + static_cast<size_t>(r) * stride)[col];
      uint8_t* o = &img.rgb[(static_cast<size_t>(r) * width_ + col) * 3];
      o[0] = static_cast<uint8_t>(px >> 16);  // opaque background: premultiplied = straight
      o[1] = static_cast<uint8_t>(px >> 8);
      o[2] = static_cast<uint8_t>(px);
    }
  return img;
}

std::string font_file() {
  FcPattern* pat = FcNameParse(reinterpret_cast<const FcChar8*>(kFontFamily));
  FcConfigSubstitute(nullptr, pat, FcMatchPattern);
  FcDefaultSubstitute(pat);
  FcResult res;
  FcPattern* m = FcFontMatch(nullptr, pat, &res);
  std::string file;
  FcChar8* f = nullptr;
  if (m && FcPatternGetString(m, FC_FILE, 0, &f) == FcResultMatch)
    file = reinterpret_cast<const char*>(f);
  if (m) FcPatternDestroy(m);
  FcPatternDestroy(pat);
  return file;
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlpha[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlpha[(v >> 18) & 63];
    out += kAlpha[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlpha[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlpha[v & 63] : '=';
  }
  return out;
}

}  // namespace netspec::report
