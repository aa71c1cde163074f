// Packed image sets (`netspec data pack`): an image-folder tree (class folders, or ImageNet's
// layout with a flat val/ and a labels file) rewritten as a few large shard files plus one index,
// so training reads each sample with one pread instead of opening a file per image.
//
// OUT/index.nspack, little-endian:
//   "NSPACK01"                                     magic (8 bytes)
//   u32 encoding (0 JPEG, 1 raw ui8 [3, h, w]), u32 max_side (0: kept), u32 quality,
//   u32 shards, u32 classes, u64 records
//   classes x (u32 length, bytes)                  class names by label
//   shards  x (u32 length, bytes, u64 size)        shard file names (in OUT) and their sizes
//   records x 36 bytes: u8 split (0 train, 1 test), 3 zero bytes, u32 shard, u64 offset,
//                       u32 size, i32 label, u32 h, u32 w, u32 fnv1a32(payload)
//   u64 fnv1a64 of every byte before it
// OUT/shard-NNNNN.bin: the payloads back to back (JPEG files, or raw pixels planar RGB).
//
// Opening checks all of it before any sample is read: magic, counts against the file's size,
// the checksum, every record's shard / span / label / raw size, and each shard's size on disk (a
// truncated shard is named). A payload whose hash differs is named with its shard and offset
// when it is read.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/datasets.h"

namespace netspec::data {

inline constexpr const char* kPackIndexName = "index.nspack";

struct PackOptions {
  std::string data;      // the image-folder tree (own_data.h's layouts)
  std::string out;       // output directory (created; must not hold an index already)
  int max_side = 0;      // > 0: images whose longer side is over this are shrunk to it
  int quality = 90;      // JPEG quality of the re-encoded images
  bool raw = false;      // raw pixels instead of JPEG
  int64_t shard_mb = 1024;  // a new shard starts when one would pass this size
  int threads = 0;          // decode/encode threads (0: data::decode_threads())
};
// Writes the pack; returns a one-line summary (records, shards, bytes).
std::string write_pack(const PackOptions& o);

struct PackRecord {
  uint8_t split = 0;
  uint32_t shard = 0;
  uint64_t offset = 0;
  uint32_t size = 0;
  int32_t label = 0;
  uint32_t h = 0, w = 0;
  uint32_t hash = 0;
};
struct PackIndex {
  uint32_t encoding = 0, max_side = 0, quality = 0;
  std::vector<std::string> classes;
  std::vector<std::string> shard_names;
  std::vector<uint64_t> shard_sizes;
  std::vector<PackRecord> records;
};
// The trailing checksum of an index whose bytes before it are `body` (fnv1a64).
uint64_t pack_index_checksum(const std::string& body);
// Parses and checks an index's bytes (`where` names it in errors); shards are not touched.
PackIndex parse_pack_index(const std::string& bytes, const std::string& where);
// Reads DIR/index.nspack and checks it and the shards' sizes.
PackIndex open_pack_index(const std::string& dir);

// True when DIR holds index.nspack.
bool is_packed_dir(const std::string& dir);
// A packed set as train/test splits at the net's input (each image resized to cover H x W and
// centre-cropped as the folder reader does; gray for channels 1); streamed, or in RAM for
// commands that do not stream. limit as LoadOptions::limit (evenly strided); whole_train as
// LoadOptions::whole_train.
Splits load_packed_dataset(const std::string& dir, int64_t channels, int64_t height,
                           int64_t width, int64_t limit, double crop_ratio,
                           bool whole_train = false);

}  // namespace netspec::data
