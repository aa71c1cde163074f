// Writes small IDX files (raw or gzip) for the data and train tests.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace netspec::test {

inline std::string idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string b = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<char>((d >> s) & 0xff));
  b.append(data.begin(), data.end());
  return b;
}

inline void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

// n synthetic 28x28 images whose class c (0..9) lights the c-th 7x7 tile of a 4x4 grid of tiles
// (plus deterministic noise); written as DIR/{prefix}-images-idx3-ubyte.gz and labels.
inline void write_synthetic_split(const std::string& dir, const std::string& prefix, int n,
                                  uint32_t seed) {
  std::vector<uint8_t> img(static_cast<size_t>(n) * 784), lab(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return s >> 24;
  };
  for (int i = 0; i < n; ++i) {
    int c = static_cast<int>(next() % 10);
    lab[i] = static_cast<uint8_t>(c);
    int ty = c / 4, tx = c % 4;
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x) {
        bool on = y / 7 == ty && x / 7 == tx;
        img[static_cast<size_t>(i) * 784 + y * 28 + x] =
            static_cast<uint8_t>(on ? 160 + next() % 96 : next() % 64);
      }
  }
  write_gz(dir + "/" + prefix + "-images-idx3-ubyte.gz",
           idx_bytes({static_cast<uint32_t>(n), 28, 28}, img));
  write_gz(dir + "/" + prefix + "-labels-idx1-ubyte.gz",
           idx_bytes({static_cast<uint32_t>(n)}, lab));
}

}  // namespace netspec::test
