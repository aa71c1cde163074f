// The datasets a TrainConfig can name, loaded whole into memory as train and test splits with the
// per-dataset normalisation applied. Every reader checks its files and names the file and the
// fault on error. `dir` empty means the dataset's default location (Debian's package where one
// exists); limit > 0 keeps only the first `limit` training samples.
#pragma once
#include <string>
#include <vector>

#include "data/idx.h"
#include "spec/enums.h"

namespace netspec::data {

struct Splits {
  Dataset train, test;
};

Splits load_dataset(DatasetKind kind, const std::string& dir, int64_t limit);

}  // namespace netspec::data
