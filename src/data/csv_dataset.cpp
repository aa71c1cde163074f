// A user's table (own_data.cpp): numeric feature columns and a label column, f32 [N, D]; the whole
// file is the training split (a --val-split holds out validation).
#include "data/dataset_registry.h"
#include "data/own_data.h"

namespace netspec::data {
namespace {

Splits load_csv(const LoadOptions& o) { return load_csv_dataset(o.dir, o.limit); }

}  // namespace

// augment stays the image default here: the Loader refuses it for non-image data.
NETSPEC_REGISTER_DATASET(csv, .flag = "csv", .listed_at = 70, .load = load_csv,
                         .classes_from = "the sorted label names (none for integer labels)")

}  // namespace netspec::data
