// Mutation fuzz of the pack index reader (data/pack.h): mutants of a real index, each with its
// checksum recomputed so the structural checks (counts, names, record spans, labels, raw sizes)
// are what refuses them, must be read or refused with a netspec::Error; so must mutants with
// the stale checksum.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data/pack.h"
#include "tests/data/image_fixture.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/support/test_files.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;

// A pack of a tiny two-class folder (raw or JPEG) -> its index bytes.
std::string index_of(const fs::path& root, bool raw) {
  const fs::path data = root / "data", out = root / (raw ? "raw" : "jpeg");
  if (!fs::exists(data))
    for (int c = 0; c < 2; ++c) {
      fs::create_directories(data / ("c" + std::to_string(c)));
      for (int i = 0; i < 3; ++i) {
        std::vector<uint8_t> px(7 * 5 * 3, static_cast<uint8_t>(40 * c + i));
        std::ofstream(data / ("c" + std::to_string(c)) / (std::to_string(i) + ".jpg"),
                      std::ios::binary)
            << test::jpeg_bytes(7, 5, 3, px);
      }
    }
  data::PackOptions o;
  o.data = data.string();
  o.out = out.string();
  o.raw = raw;
  o.threads = 1;
  data::write_pack(o);
  return test_util::slurp(out / data::kPackIndexName);
}

void append_checksum(std::string& body) {
  const uint64_t h = data::pack_index_checksum(body);
  body.append(reinterpret_cast<const char*>(&h), sizeof h);
}

TEST(FuzzPack, IndexReader) {
  const fs::path root = fs::temp_directory_path() / ("netspec_fuzz_pack_" + std::to_string(getpid()));
  fs::remove_all(root);
  std::vector<std::string> bodies;
  for (bool raw : {false, true}) {
    std::string ix = index_of(root, raw);
    ASSERT_EQ(data::parse_pack_index(ix, "seed").records.size(), 6u);
    bodies.push_back(ix.substr(0, ix.size() - 8));
  }
  fuzz::run(bodies, [](const std::string& body) {
    std::string b = body;
    append_checksum(b);
    data::parse_pack_index(b, "fuzz");
  });
  std::vector<std::string> whole;
  for (std::string b : bodies) {
    append_checksum(b);
    whole.push_back(b);
  }
  fuzz::run(whole, [](const std::string& b) { data::parse_pack_index(b, "fuzz"); });
  fs::remove_all(root);
}

}  // namespace
}  // namespace netspec
