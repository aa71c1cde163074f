// Composite pictures as PNG bytes: a prediction grid (each image with its top-k classes and
// probabilities, green when the top class is the known label, red when not) and a Grad-CAM panel
// (the input and the input with the class-activation heatmap blended over it, captioned).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/canvas.h"

namespace netspec::report {

struct Tile {
  RgbImage image;
  std::string caption;                              // e.g. the file name; may be empty
  std::vector<std::pair<std::string, double>> top;  // (class name, probability), best first
  std::optional<std::string> truth;                 // the known label's name
};
constexpr Rgb kCorrect{20, 140, 40}, kWrong{200, 30, 30}, kNeutral{30, 30, 30};

// Tiles in rows of `cols`, each image drawn `cell` pixels wide (nearest-neighbour when the image
// is smaller, so 28x28 digits stay crisp).
std::string grid_png(const std::vector<Tile>& tiles, int cols = 4, int cell = 160);

// Input | overlay side by side (each `size` px), title above, top classes below.
std::string cam_panel_png(const RgbImage& input, const RgbImage& overlaid, const std::string& title,
                          const std::vector<std::pair<std::string, double>>& top, int size = 224);

void write_bytes(const std::string& path, const std::string& bytes);

}  // namespace netspec::report
