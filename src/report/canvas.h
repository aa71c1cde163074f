// Drawing through cairo (Debian libcairo2-dev): an antialiased raster (ARGB32) or SVG surface
// with text in a real font (DejaVu Sans through fontconfig), RGB image blits, and PNG output to a
// file or to bytes (for report.html). Plots, prediction grids and Grad-CAM overlays draw on it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

typedef struct _cairo cairo_t;
typedef struct _cairo_surface cairo_surface_t;

namespace netspec::report {

using Rgb = std::array<uint8_t, 3>;
inline constexpr Rgb kWhite{255, 255, 255}, kBlack{0, 0, 0};
inline constexpr const char* kFontFamily = "DejaVu Sans";

// An 8-bit RGB picture, row-major, 3 bytes per pixel.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  RgbImage() = default;
  RgbImage(int w, int h, Rgb fill = kWhite);
  Rgb at(int x, int y) const;
};

enum class Align { left, center, right };

class Canvas {
 public:
  // Raster surface filled white.
  Canvas(int width, int height);
  // SVG surface written to `svg_path` by finish() (atomically: temp file + rename).
  Canvas(const std::string& svg_path, int width, int height);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  cairo_t* cr() const { return cr_; }
  int width() const { return width_; }
  int height() const { return height_; }
  void color(Rgb c, double alpha = 1) const;
  void rect(double x, double y, double w, double h, Rgb fill, double alpha = 1) const;
  // Text with its baseline at y; size in pixels. angle in radians (counter-clockwise).
  void text(double x, double y, const std::string& s, double size, Rgb c, Align a = Align::left,
            bool bold = false, double angle = 0) const;
  double text_width(const std::string& s, double size, bool bold = false) const;
  // Draws `img` scaled into (x, y, w, h); nearest when `nearest` (small inputs stay crisp).
  void image(const RgbImage& img, double x, double y, double w, double h,
             bool nearest = false) const;
  void write_png(const std::string& path) const;  // raster only
  std::string png_bytes() const;                  // raster only
  RgbImage pixels() const;                        // raster only
  void finish();                                  // SVG: write the file

 private:
  int width_, height_;
  bool svg_ = false;
  std::string path_, svg_bytes_;
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
};

// The font file fontconfig picks for kFontFamily (for tests and error messages).
std::string font_file();
// Standard base64 (RFC 4648, with padding) for data: URIs.
std::string base64(const std::string& bytes);

}  // namespace netspec::report
