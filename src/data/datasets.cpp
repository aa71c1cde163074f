// Named datasets (see datasets.h): the descriptor registry and the public functions that read it.
#include "data/datasets.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "data/dataset_registry.h"
#include "data/sample_source.h"

namespace netspec::data {

Dataset take_first(const Dataset& ds, int64_t n) {
  if (n >= ds.size()) return ds;
  std::vector<int64_t> rows(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  return take_rows(ds, rows);
}

Dataset take_rows(const Dataset& ds, const std::vector<int64_t>& rows) {
  const auto n = static_cast<int64_t>(rows.size());
  if (ds.streamed()) {  // the rows' labels, and a source that reads the rows' files
    std::vector<int32_t> labels;
    for (int64_t r : rows) {
      if (r < 0 || r >= ds.size())
        fail("data", "row out of range (got {}, expected < {})", r, ds.size());
      labels.push_back(ds.y.data<int32_t>()[r]);
    }
    const Shape& s = ds.x.shape();
    Dataset o = streamed_dataset(subset_source(ds.source, rows), std::move(labels), s[1], s[2],
                                 s[3], Normalization{ds.mean, ds.std});
    o.pixel_values = ds.pixel_values;
    return o;
  }
  Shape xs = ds.x.shape(), ys = ds.y.shape();
  xs[0] = ys[0] = n;
  Dataset o{Tensor(ds.x.dtype(), xs), Tensor(ds.y.dtype(), ys), ds.mean, ds.std, ds.black,
            ds.pixel_values};
  const size_t xr = ds.size() ? ds.x.nbytes() / static_cast<size_t>(ds.size()) : 0;
  const size_t yr = ds.size() ? ds.y.nbytes() / static_cast<size_t>(ds.size()) : 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = rows[static_cast<size_t>(i)];
    if (r < 0 || r >= ds.size())
      fail("data", "row out of range (got {}, expected < {})", r, ds.size());
    std::memcpy(static_cast<uint8_t*>(o.x.raw()) + i * xr,
                static_cast<const uint8_t*>(ds.x.raw()) + r * xr, xr);
    std::memcpy(static_cast<uint8_t*>(o.y.raw()) + i * yr,
                static_cast<const uint8_t*>(ds.y.raw()) + r * yr, yr);
  }
  return o;
}

namespace {

constexpr size_t kNumKinds = std::size(EnumTraits<DatasetKind>::kNames);

// Indexed by DatasetKind; filled by the registrars before main.
std::array<std::optional<DatasetDescriptor>, kNumKinds>& table() {
  static std::array<std::optional<DatasetDescriptor>, kNumKinds> t;
  return t;
}

// "fashionMnist" -> "fashion-mnist".
std::string kebab(std::string_view camel) {
  std::string out;
  for (char c : camel)
    if (std::isupper(static_cast<unsigned char>(c)))
      out += std::string("-") + static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else
      out += c;
  return out;
}

}  // namespace

DatasetRegistrar::DatasetRegistrar(DatasetDescriptor d) {
  const auto i = static_cast<size_t>(d.kind);
  const char* bad = i >= kNumKinds                       ? "unknown kind"
                    : d.flag != kebab(enum_name(d.kind)) ? "flag is not the kebab-case kind name"
                    : !d.augment && !*d.no_augment       ? "augment refused without a reason"
                    : table()[i].has_value()             ? "registered twice"
                                                         : nullptr;
  // A wrong registration line would otherwise leave a dataset silently misnamed or missing.
  if (bad) {
    fmt::print(stderr, "netspec: bad dataset registration '{}' ({})\n", d.flag, bad);
    std::abort();
  }
  table()[i] = std::move(d);
}

const DatasetDescriptor* find_dataset_descriptor(DatasetKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i < kNumKinds && table()[i] ? &*table()[i] : nullptr;
}

const DatasetDescriptor& dataset_descriptor(DatasetKind kind) {
  const DatasetDescriptor* d = find_dataset_descriptor(kind);
  if (!d)
    fail("data", "dataset {} has no descriptor (expected a NETSPEC_REGISTER_DATASET line)",
         enum_name(kind));
  return *d;
}

std::vector<const DatasetDescriptor*> dataset_descriptors() {
  std::vector<const DatasetDescriptor*> out;
  for (const auto& d : table())
    if (d) out.push_back(&*d);
  return out;
}

std::vector<std::string> dataset_class_names(DatasetKind kind) {
  const DatasetDescriptor& d = dataset_descriptor(kind);
  if (d.class_names.empty())
    fail("data", "dataset {} has no fixed class list (its classes come from its files)",
         enum_name(kind));
  return d.class_names;
}

Augment standard_augment(DatasetKind kind) {
  const DatasetDescriptor& d = dataset_descriptor(kind);
  if (!d.augment) fail("data", "augment is not defined for {} ({})", enum_name(kind), d.no_augment);
  return *d.augment;
}

Normalization dataset_normalization(DatasetKind kind) {
  const DatasetDescriptor* d = find_dataset_descriptor(kind);
  if (!d || !d->norm) fail("data", "dataset {} is not an image dataset", enum_name(kind));
  return *d->norm;
}

std::vector<DatasetKind> loadable_datasets() {
  std::vector<const DatasetDescriptor*> ds;
  for (const DatasetDescriptor* d : dataset_descriptors())
    if (d->load) ds.push_back(d);
  // Stable: equal positions keep enum order.
  std::stable_sort(ds.begin(), ds.end(),
                   [](const DatasetDescriptor* a, const DatasetDescriptor* b) {
                     return a->listed_at < b->listed_at;
                   });
  std::vector<DatasetKind> out;
  for (const DatasetDescriptor* d : ds) out.push_back(d->kind);
  return out;
}

std::string dataset_flag_name(DatasetKind kind) {
  const DatasetDescriptor* d = find_dataset_descriptor(kind);
  return d ? std::string(d->flag) : kebab(enum_name(kind));
}

std::string loadable_dataset_names(const std::string& sep) {
  std::string out;
  for (DatasetKind k : loadable_datasets()) out += (out.empty() ? "" : sep) + dataset_flag_name(k);
  return out;
}

Splits load_dataset(DatasetKind kind, const LoadOptions& o) {
  const DatasetDescriptor* d = find_dataset_descriptor(kind);
  if (!d || !d->load)
    fail("data", "dataset {} is not supported yet (have: {})", enum_name(kind),
         loadable_dataset_names(", "));
  Splits s = d->load(o);
  if (s.class_names.empty()) s.class_names = d->class_names;
  return s;
}

Splits load_dataset(DatasetKind kind, const std::string& dir, int64_t limit) {
  LoadOptions o;
  o.dir = dir;
  o.limit = limit;
  return load_dataset(kind, o);
}

}  // namespace netspec::data
