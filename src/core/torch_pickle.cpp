// torch.save zip archives and safetensors files as ordered tensor lists (see torch_pickle.h).
#include "core/torch_pickle.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>

#include "core/error.h"
#include "core/pickle.h"
#include "core/safetensors.h"
#include "core/zip_reader.h"

namespace netspec {
namespace {

using K = PyValue::Kind;

// torch.<Name>Storage -> element type (torch/storage.py's typed storages).
struct StorageType {
  const char* name;
  DType dtype;
};
constexpr StorageType kStorageTypes[] = {
    {"torch.FloatStorage", DType::kF32},  {"torch.DoubleStorage", DType::kF64},
    {"torch.HalfStorage", DType::kF16},   {"torch.BFloat16Storage", DType::kBF16},
    {"torch.LongStorage", DType::kI64},   {"torch.IntStorage", DType::kI32},
    {"torch.ShortStorage", DType::kI16},  {"torch.CharStorage", DType::kI8},
    {"torch.ByteStorage", DType::kUI8},   {"torch.BoolStorage", DType::kI1},
    {"torch.UntypedStorage", DType::kUI8}};

struct Storage {
  DType dtype;
  int64_t numel;
  std::shared_ptr<const std::string> bytes;
};

int64_t as_int(const PyRef& v, const std::string& what, const std::string& where) {
  if (!v || v->kind != K::integer)
    fail("torch", "{}: {} is a {}, not an int", where, what, v ? v->kind_name() : "nothing");
  return v->i;
}

std::vector<int64_t> int_tuple(const PyRef& v, const std::string& what, const std::string& where) {
  if (!v || v->kind != K::tuple)
    fail("torch", "{}: {} is a {}, not a tuple", where, what, v ? v->kind_name() : "nothing");
  std::vector<int64_t> out;
  for (const PyRef& x : v->items) out.push_back(as_int(x, what, where));
  return out;
}

// The tensor viewing `st` at (offset, size, stride), copied into contiguous memory.
Tensor view_storage(const Storage& st, int64_t offset, const std::vector<int64_t>& size,
                    const std::vector<int64_t>& stride, const std::string& where) {
  if (size.size() != stride.size())
    fail("torch", "{}: tensor with {} sizes and {} strides", where, size.size(), stride.size());
  int64_t numel = 1;
  for (int64_t s : size)
    if (s < 0 || __builtin_mul_overflow(numel, s, &numel) || numel > (int64_t{1} << 40))
      fail("torch", "{}: tensor size [{}] is not a size", where, fmt::join(size, ", "));
  if (numel == 0) return Tensor(st.dtype, Shape(size.begin(), size.end()));
  // Every check before the copy is allocated: the view must lie inside the storage ...
  int64_t last = offset;  // the largest element index the view reads
  bool overflow = false;
  for (size_t d = 0; d < size.size(); ++d) {
    if (stride[d] < 0) fail("torch", "{}: negative stride (got {} in dim {})", where, stride[d], d);
    int64_t span = 0;
    overflow = overflow || __builtin_mul_overflow(size[d] - 1, stride[d], &span) ||
               __builtin_add_overflow(last, span, &last);
  }
  if (overflow || offset < 0 || last >= st.numel)
    fail("torch", "{}: tensor reads element {} of a storage of {}", where, last, st.numel);
  // ... and be no larger than it, but for small broadcasts (stride-0 views such as HF's
  // position_ids): otherwise a few bytes of storage would expand into gigabytes.
  constexpr int64_t kMaxBroadcast = int64_t{1} << 24;
  if (numel > st.numel && numel > kMaxBroadcast)
    fail("torch",
         "{}: a view of {} elements of a storage of {} (stride-0 views larger than {} "
         "elements are not read)",
         where, numel, st.numel, kMaxBroadcast);
  Tensor t(st.dtype, Shape(size.begin(), size.end()));
  const size_t es = dtype_size(st.dtype);
  const char* src = st.bytes->data();
  char* dst = static_cast<char*>(t.raw());
  std::vector<int64_t> idx(size.size(), 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t at = offset;
    for (size_t d = 0; d < size.size(); ++d) at += idx[d] * stride[d];
    std::memcpy(dst + i * es, src + at * es, es);
    for (size_t d = size.size(); d-- > 0;) {  // row-major increment
      if (++idx[d] < size[d]) break;
      idx[d] = 0;
    }
  }
  return t;
}

class TorchZip {
 public:
  explicit TorchZip(const std::string& path) : path_(path), zip_(path) {
    for (const auto& e : zip_.entries()) {
      const size_t slash = e.name.find('/');
      if (slash != std::string::npos && e.name.substr(slash + 1) == "data.pkl")
        prefix_ = e.name.substr(0, slash + 1);
    }
    for (const auto& e : zip_.entries())
      if (e.name.find("/constants.pkl") != std::string::npos)
        fail("torch",
             "{}: a TorchScript archive (torch.jit.save), not a torch.save file: save "
             "model.state_dict() with torch.save",
             path);
    if (prefix_.empty())
      fail("torch", "{}: a zip archive without ARCHIVE/data.pkl: not written by torch.save", path);
    if (const ZipEntry* bo = zip_.find(prefix_ + "byteorder"))
      if (std::string order = zip_.read(*bo); order != "little")
        fail("torch", "{}: tensors stored {}-endian (only little-endian is read)", path, order);
  }

  PyRef load() {
    PickleHooks h;
    h.persistent_load = [this](const PyRef& pid) { return storage(pid); };
    h.reduce = [this](const std::string& fn, const PyRef& args) { return rebuild(fn, args); };
    return unpickle(zip_.read(prefix_ + "data.pkl"), path_ + ": data.pkl", h);
  }

 private:
  std::string path_;
  ZipReader zip_;
  std::string prefix_;
  std::map<std::string, std::shared_ptr<const std::string>> bytes_;  // by storage key

  // ('storage', torch.FloatStorage, key, location, numel)
  PyRef storage(const PyRef& pid) {
    if (pid->kind != K::tuple || pid->items.size() < 5 || pid->items[0]->kind != K::str ||
        pid->items[0]->s != "storage" || pid->items[1]->kind != K::global ||
        pid->items[2]->kind != K::str)
      fail("torch", "{}: unknown persistent id (a {}, expected ('storage', type, key, ...))", path_,
           pid->kind_name());
    const std::string& type = pid->items[1]->s;
    const StorageType* st = nullptr;
    for (const auto& s : kStorageTypes)
      if (type == s.name) st = &s;
    if (!st) fail("torch", "{}: unsupported storage type {}", path_, type);
    const std::string key = pid->items[2]->s;
    auto s = std::make_shared<Storage>();
    s->dtype = st->dtype;
    s->numel = as_int(pid->items[4], "storage numel", path_);
    auto& b = bytes_[key];
    if (!b) b = std::make_shared<const std::string>(zip_.read(prefix_ + "data/" + key));
    // numel comes from the file: its byte count is checked, never wrapped (2^62+1 x 4 wraps to 4).
    int64_t need = 0;
    if (s->numel < 0 ||
        __builtin_mul_overflow(s->numel, static_cast<int64_t>(dtype_size(s->dtype)), &need) ||
        static_cast<int64_t>(b->size()) < need)
      fail("torch", "{}: storage {} holds {} bytes (expected {} x {} bytes)", path_, key, b->size(),
           s->numel, dtype_size(s->dtype));
    s->bytes = b;
    PyRef v = PyValue::make(K::opaque);
    v->s = type;
    v->payload = s;
    return v;
  }

  PyRef rebuild(std::string fn, PyRef args) {
    // (func, subclass, args, state): func(*args), unwrapped in a loop (no recursion per level)
    while (fn == "torch._tensor._rebuild_from_type_v2" && args->items.size() >= 3 &&
           args->items[0]->kind == K::global && args->items[2]->kind == K::tuple) {
      fn = args->items[0]->s;
      args = args->items[2];
    }
    const auto& a = args->items;
    if (fn == "torch._utils._rebuild_tensor_v2" || fn == "torch._utils._rebuild_tensor") {
      if (a.size() < 4 || a[0]->kind != K::opaque || !a[0]->payload)
        fail("torch", "{}: {} without (storage, offset, size, stride)", path_, fn);
      const auto& st = *std::static_pointer_cast<Storage>(a[0]->payload);
      PyRef t = PyValue::make(K::tensor);
      t->tensor =
          view_storage(st, as_int(a[1], "storage offset", path_), int_tuple(a[2], "size", path_),
                       int_tuple(a[3], "stride", path_), path_);
      return t;
    }
    if (fn == "torch._utils._rebuild_parameter" ||
        fn == "torch._utils._rebuild_parameter_with_state")
      return a.empty() ? nullptr : a[0];  // nn.Parameter(data): the data
    return nullptr;
  }
};

// "..." (int) for an entry that is not a tensor.
std::string describe(const std::string& name, const PyRef& v) {
  constexpr size_t kMaxName = 80;  // a key may be megabytes long
  return fmt::format("{}{} ({})", name.substr(0, kMaxName), name.size() > kMaxName ? "..." : "",
                     v->kind_name());
}

bool is_library_order(const std::vector<std::pair<std::string, Tensor>>& ts) {
  for (size_t i = 1; i < ts.size(); ++i) {
    const size_t a = dtype_size(ts[i - 1].second.dtype()), b = dtype_size(ts[i].second.dtype());
    if (a < b || (a == b && ts[i - 1].first > ts[i].first)) return false;
  }
  return ts.size() > 1;
}

}  // namespace

TorchTensors read_torch_zip(const std::string& path) {
  if (!ZipReader::is_zip(path)) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail("torch", "{}: cannot open", path);
    unsigned char head[2] = {};
    f.read(reinterpret_cast<char*>(head), 2);
    if (head[0] == 0x80)  // a bare pickle: torch.save before 1.6 (magic number, then protocol 2)
      fail("torch",
           "{}: the legacy (pre-1.6, non-zip) torch.save format is not read: re-save it with "
           "torch >= 1.6 (torch.save(torch.load(F), F2))",
           path);
    fail("torch", "{}: not a torch.save zip archive", path);
  }
  TorchTensors out;
  out.format = "PyTorch zip";
  PyRef root = TorchZip(path).load();
  if (root->kind == K::object)
    fail("torch", "{}: holds a pickled {}, not a state dict: save model.state_dict()", path,
         root->s);
  if (root->kind != K::dict)
    fail("torch", "{}: holds a {}, not a state dict (a dict of tensors)", path, root->kind_name());
  for (const char* key : {"state_dict", "model", "model_state_dict"})
    if (PyRef sd = root->get(key); sd && sd->kind == K::dict) {
      out.container = key;
      root = sd;
      break;
    }
  for (const auto& [k, v] : root->entries) {
    if (k->kind != K::str) fail("torch", "{}: a state-dict key is a {}", path, k->kind_name());
    if (v->kind == K::tensor)
      out.tensors.emplace_back(k->s, v->tensor);
    else
      out.skipped.push_back(describe(k->s, v));
  }
  if (out.tensors.empty()) {
    // Names the first few entries only: a hostile dict has hundreds of thousands.
    constexpr size_t kListed = 8;
    const size_t n = out.skipped.size();
    const std::vector<std::string> head(out.skipped.begin(),
                                        out.skipped.begin() + std::min(n, kListed));
    fail("torch", "{}: no tensors in the {} ({} entries: {}{})", path,
         out.container.empty() ? "top-level dict" : "'" + out.container + "' entry", n,
         fmt::join(head, ", "), n > kListed ? fmt::format(", ... and {} more", n - kListed) : "");
  }
  return out;
}

TorchTensors read_weight_file(const std::string& path) {
  if (ZipReader::is_zip(path)) return read_torch_zip(path);
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("convert", "{}: cannot open", path);
  char head[9] = {};
  f.read(head, 9);
  if (f.gcount() == 9 && head[8] == '{') {  // safetensors: u64 header length, then JSON
    SafeTensors st = read_safetensors(path);
    TorchTensors out;
    out.format = "safetensors";
    out.tensors = std::move(st.tensors);
    out.library_order = is_library_order(out.tensors);
    return out;
  }
  return read_torch_zip(path);  // names the legacy format, or says what the file is not
}

Tensor to_f32(const Tensor& t, const std::string& what) {
  Tensor out(DType::kF32, t.shape());
  float* o = out.data<float>();
  const int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::kF32:
      std::memcpy(o, t.raw(), t.nbytes());
      break;
    case DType::kF64:
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(t.data<double>()[i]);
      break;
    case DType::kBF16:  // the high half of an f32
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t bits = static_cast<uint32_t>(t.data<uint16_t>()[i]) << 16;
        std::memcpy(o + i, &bits, 4);
      }
      break;
    case DType::kF16:  // IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = t.data<uint16_t>()[i];
        const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        float v = e == 0    ? std::ldexp(static_cast<float>(m), -24)
                  : e == 31 ? (m ? std::nanf("") : std::numeric_limits<float>::infinity())
                            : std::ldexp(static_cast<float>(m | 0x400), e - 25);
        o[i] = (h & 0x8000) ? -v : v;
      }
      break;
    default:
      fail("convert", "{}: {} tensor, not floating point", what, dtype_name(t.dtype()));
  }
  return out;
}

}  // namespace netspec
