// A Python pickle reader for data, not code: it runs the opcodes of protocols 2-5 (and the
// protocol-0 INT/LONG/FLOAT/GET/PUT lines) into a tree of PyValues and never imports or calls
// anything. GLOBAL/STACK_GLOBAL give a `global` value naming "module.name"; REDUCE/NEWOBJ of a
// global yield what the `reduce` hook returns, else an opaque `object` holding the name and the
// arguments (collections.OrderedDict() is a dict). BINPERSID/PERSID call `persistent_load`.
// Hostile input is bounded: values nest at most kMaxPickleDepth deep and never form a cycle
// (so destructors and consumers may recurse), and each dict key is found through an index.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace netspec {

// Nesting depth of pickled values (Python's own recursion limit is 1000 by default).
inline constexpr int kMaxPickleDepth = 1000;

struct PyValue;
using PyRef = std::shared_ptr<PyValue>;

struct PyValue {
  enum class Kind {
    none,
    boolean,
    integer,
    real,
    str,
    bytes,
    tuple,
    list,
    dict,
    set,
    global,
    object,
    tensor,
    opaque
  };
  Kind kind = Kind::none;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                                 // str, bytes; global/object: "module.name"
  std::vector<PyRef> items;                      // tuple, list, set; object: the arguments
  std::vector<std::pair<PyRef, PyRef>> entries;  // dict, insertion order
  PyRef state;                                   // object: what BUILD set
  Tensor tensor;                                 // tensor (made by a reduce hook)
  std::shared_ptr<void> payload;                 // opaque: a hook's own data (e.g. a storage)
  // The unpickler's bookkeeping: an upper bound of the nesting depth (1 for a leaf), and
  // whether the value already sits inside a container (its depth may then no longer grow).
  int depth = 1;
  bool contained = false;

  static PyRef make(Kind k) {
    auto v = std::make_shared<PyValue>();
    v->kind = k;
    return v;
  }
  static PyRef str_value(std::string s);
  static PyRef int_value(int64_t i);
  // A dict's value for a string key (nullptr when absent or not a dict).
  PyRef get(const std::string& key) const;
  std::string kind_name() const;  // "dict", "tuple", "object collections.Foo", ...
};

struct PickleHooks {
  std::function<PyRef(const PyRef& pid)> persistent_load;  // required when the data has ids
  // Called for REDUCE/NEWOBJ with the callable global's "module.name" and its argument tuple;
  // returns nullptr to leave an opaque object.
  std::function<PyRef(const std::string& callable, const PyRef& args)> reduce;
};

// Runs the pickle in `data` (named `where` in errors) and returns the value STOP leaves.
PyRef unpickle(const std::string& data, const std::string& where, const PickleHooks& hooks);

}  // namespace netspec
