// The pickle machine (see pickle.h): a value stack with marks and a memo, one case per opcode
// (names and semantics as CPython's Lib/pickle.py).
#include "core/pickle.h"

#include <charconv>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/error.h"

namespace netspec {

using K = PyValue::Kind;

PyRef PyValue::str_value(std::string s) {
  PyRef v = make(K::str);
  v->s = std::move(s);
  return v;
}

PyRef PyValue::int_value(int64_t i) {
  PyRef v = make(K::integer);
  v->i = i;
  return v;
}

PyRef PyValue::get(const std::string& key) const {
  if (kind != K::dict) return nullptr;
  for (const auto& [k, v] : entries)
    if (k->kind == K::str && k->s == key) return v;
  return nullptr;
}

std::string PyValue::kind_name() const {
  static const char* names[] = {"None", "bool", "int", "float",  "str",    "bytes",  "tuple",
                                "list", "dict", "set", "global", "object", "tensor", "opaque"};
  std::string n = names[static_cast<int>(kind)];
  if (kind == K::global || kind == K::object) n += " " + s;
  return n;
}

namespace {

class Machine {
 public:
  Machine(const std::string& data, const std::string& where, const PickleHooks& hooks)
      : d_(data), where_(where), hooks_(hooks) {}

  PyRef run() {
    while (true) {
      const size_t at = p_;
      const auto op = static_cast<uint8_t>(byte());
      if (op == '.') {
        if (stack_.empty()) bad(at, "STOP with an empty stack");
        return stack_.back();
      }
      step(op, at);
    }
  }

 private:
  const std::string& d_;
  const std::string& where_;
  const PickleHooks& hooks_;
  size_t p_ = 0;
  std::vector<PyRef> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, PyRef> memo_;
  // str key -> position in `entries`, per dict that SETITEM(S) touched: a key set twice is found
  // in O(1), not by a scan (200k keys took minutes). The PyRef keeps the dict's address unique.
  struct DictIndex {
    PyRef dict;
    std::unordered_map<std::string, size_t> at;
  };
  std::unordered_map<const PyValue*, DictIndex> dict_index_;

  [[noreturn]] void bad(size_t at, const std::string& what) {
    fail("pickle", "{}: {} (at byte {})", where_, what, at);
  }
  char byte() {
    if (p_ >= d_.size()) bad(p_, "truncated: ends without STOP");
    return d_[p_++];
  }
  std::string take(uint64_t n) {
    if (n > d_.size() - p_) bad(p_, fmt::format("truncated: {} bytes needed", n));
    std::string s = d_.substr(p_, n);
    p_ += n;
    return s;
  }
  uint64_t uint(int n) {
    const std::string b = take(n);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
    return v;
  }
  std::string line() {
    const size_t e = d_.find('\n', p_);
    if (e == std::string::npos) bad(p_, "truncated text argument");
    std::string s = d_.substr(p_, e - p_);
    p_ = e + 1;
    return s;
  }
  void push(PyRef v) { stack_.push_back(std::move(v)); }
  PyRef pop(size_t at) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      bad(at, "pop from an empty stack");
    PyRef v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  PyRef& top(size_t at) {
    if (stack_.empty()) bad(at, "empty stack");
    return stack_.back();
  }
  std::vector<PyRef> pop_mark(size_t at) {
    if (marks_.empty()) bad(at, "no MARK");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PyRef> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  // Records that `c` holds `item`. Depths are upper bounds that only grow while a value is not
  // yet inside another: then depth(parent) > depth(child) holds for every edge ever made, so the
  // values form no cycle and nest at most kMaxPickleDepth deep (destructors recurse per level).
  void adopt(PyValue& c, const PyRef& item, size_t at) {
    if (!item) return;
    if (item.get() == &c) bad(at, "a " + c.kind_name() + " that contains itself");
    if (item->depth >= c.depth) {
      if (c.contained)
        bad(at, "a " + c.kind_name() +
                    " grows deeper after being placed in another container (a cycle or "
                    "nesting the reader cannot bound)");
      if (item->depth + 1 > kMaxPickleDepth)
        bad(at, fmt::format("values nest deeper than {} levels", kMaxPickleDepth));
      c.depth = item->depth + 1;
    }
    item->contained = true;
  }
  PyRef seq(K k, std::vector<PyRef> items, size_t at) {
    PyRef v = PyValue::make(k);
    for (const PyRef& x : items) adopt(*v, x, at);
    v->items = std::move(items);
    return v;
  }
  void extend(PyRef& c, std::vector<PyRef> items, size_t at) {
    for (const PyRef& x : items) adopt(*c, x, at);
    c->items.insert(c->items.end(), items.begin(), items.end());
  }
  PyRef integer_from_le(const std::string& b, size_t at) {  // LONG1/LONG4: two's complement
    if (b.size() > 8) bad(at, fmt::format("integer of {} bytes does not fit in 64 bits", b.size()));
    uint64_t v = 0;
    for (size_t i = 0; i < b.size(); ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
    if (!b.empty() && b.size() < 8 && (static_cast<uint8_t>(b.back()) & 0x80))
      v |= ~uint64_t{0} << (8 * b.size());
    return PyValue::int_value(static_cast<int64_t>(v));
  }
  PyRef global(std::string module, std::string name) {
    PyRef g = PyValue::make(K::global);
    g->s = module + "." + name;
    return g;
  }
  PyRef call(const PyRef& fn, const PyRef& args, size_t at) {
    if (fn->kind != K::global) bad(at, "REDUCE of a " + fn->kind_name() + ", not a global");
    if (args->kind != K::tuple) bad(at, "REDUCE arguments are a " + args->kind_name());
    if (fn->s == "collections.OrderedDict" || fn->s == "builtins.dict") {
      PyRef d = PyValue::make(K::dict);
      std::vector<PyRef> kv;
      if (!args->items.empty() && args->items[0]->kind == K::list)  // OrderedDict([(k, v), ...])
        for (const PyRef& pair : args->items[0]->items)
          if (pair->kind == K::tuple && pair->items.size() == 2)
            kv.insert(kv.end(), pair->items.begin(), pair->items.end());
      set_items(d, kv, at);
      return d;
    }
    if (hooks_.reduce)
      if (PyRef r = hooks_.reduce(fn->s, args)) return r;
    PyRef o = PyValue::make(K::object);
    o->s = fn->s;
    for (const PyRef& x : args->items) adopt(*o, x, at);
    o->items = args->items;
    return o;
  }
  void set_items(PyRef& d, const std::vector<PyRef>& kv, size_t at) {
    if (d->kind != K::dict) bad(at, "SETITEM(S) on a " + d->kind_name());
    if (kv.size() % 2) bad(at, "SETITEMS with an odd item count");
    auto [it, fresh] = dict_index_.try_emplace(d.get());
    DictIndex& index = it->second;
    if (fresh) {  // a dict first met here: index the str keys it already holds
      index.dict = d;
      for (size_t e = 0; e < d->entries.size(); ++e)
        if (d->entries[e].first->kind == K::str) index.at.try_emplace(d->entries[e].first->s, e);
    }
    for (size_t i = 0; i < kv.size(); i += 2) {
      if (!kv[i]) bad(at, "SETITEMS with a missing key");
      adopt(*d, kv[i], at);
      adopt(*d, kv[i + 1], at);
      if (kv[i]->kind == K::str) {  // a key set twice keeps its first position (Python dict)
        auto [pos, added] = index.at.try_emplace(kv[i]->s, d->entries.size());
        if (!added) {
          d->entries[pos->second].second = kv[i + 1];
          continue;
        }
      }
      d->entries.emplace_back(kv[i], kv[i + 1]);
    }
  }
  uint64_t text_uint(size_t at) {
    const std::string s = line();
    uint64_t v = 0;
    auto [e, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || e != s.data() + s.size()) bad(at, "bad memo key '" + s + "'");
    return v;
  }
  void memo_put(uint64_t key, size_t at) { memo_[key] = top(at); }
  PyRef memo_get(uint64_t key, size_t at) {
    auto it = memo_.find(key);
    if (it == memo_.end()) bad(at, fmt::format("memo key {} was never stored", key));
    return it->second;
  }

  void step(uint8_t op, size_t at) {
    switch (op) {
      case 0x80:
        byte();
        break;  // PROTO
      case 0x95:
        uint(8);
        break;  // FRAME (framing is transparent)
      case '(':
        marks_.push_back(stack_.size());
        break;  // MARK
      case '0':
        pop(at);
        break;  // POP
      case '1':
        pop_mark(at);
        break;  // POP_MARK
      case '2':
        push(top(at));
        break;  // DUP
      case 'N':
        push(PyValue::make(K::none));
        break;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        PyRef v = PyValue::make(K::boolean);
        v->b = op == 0x88;
        push(v);
        break;
      }
      case 'J':
        push(PyValue::int_value(static_cast<int32_t>(uint(4))));
        break;  // BININT
      case 'K':
        push(PyValue::int_value(static_cast<int64_t>(uint(1))));
        break;  // BININT1
      case 'M':
        push(PyValue::int_value(static_cast<int64_t>(uint(2))));
        break;  // BININT2
      case 0x8a:
        push(integer_from_le(take(uint(1)), at));
        break;  // LONG1
      case 0x8b:
        push(integer_from_le(take(uint(4)), at));
        break;  // LONG4
      case 'I':
      case 'L': {  // INT / LONG text lines ("I01" is True, "I00" False)
        std::string s = line();
        if (!s.empty() && s.back() == 'L') s.pop_back();
        if (op == 'I' && (s == "00" || s == "01")) {
          PyRef v = PyValue::make(K::boolean);
          v->b = s == "01";
          push(v);
        } else {
          try {
            push(PyValue::int_value(std::stoll(s)));
          } catch (const std::logic_error&) {
            bad(at, "bad integer line '" + s + "'");
          }
        }
        break;
      }
      case 'G': {  // BINFLOAT: big-endian double
        uint64_t bits = 0;
        for (char c : take(8)) bits = (bits << 8) | static_cast<uint8_t>(c);
        PyRef v = PyValue::make(K::real);
        std::memcpy(&v->f, &bits, 8);
        push(v);
        break;
      }
      case 'F': {
        PyRef v = PyValue::make(K::real);
        v->f = std::strtod(line().c_str(), nullptr);
        push(v);
        break;
      }
      case 'X':
        push(PyValue::str_value(take(uint(4))));
        break;  // BINUNICODE
      case 0x8c:
        push(PyValue::str_value(take(uint(1))));
        break;  // SHORT_BINUNICODE
      case 0x8d:
        push(PyValue::str_value(take(uint(8))));
        break;  // BINUNICODE8
      case 'T':
        push(PyValue::str_value(take(uint(4))));
        break;  // BINSTRING (py2 str)
      case 'U':
        push(PyValue::str_value(take(uint(1))));
        break;  // SHORT_BINSTRING
      case 'B':
      case 'C':
      case 0x8e:
      case 0x96: {  // BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8
        PyRef v = PyValue::make(K::bytes);
        v->s = take(uint(op == 'B' ? 4 : op == 'C' ? 1 : 8));
        push(v);
        break;
      }
      case ')':
        push(PyValue::make(K::tuple));
        break;
      case 't':
        push(seq(K::tuple, pop_mark(at), at));
        break;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        std::vector<PyRef> items(op - 0x84);
        for (size_t i = items.size(); i-- > 0;) items[i] = pop(at);
        push(seq(K::tuple, std::move(items), at));
        break;
      }
      case ']':
        push(PyValue::make(K::list));
        break;
      case 'l':
        push(seq(K::list, pop_mark(at), at));
        break;
      case 'a': {  // APPEND
        PyRef v = pop(at);
        PyRef& l = top(at);
        if (l->kind != K::list) bad(at, "APPEND to a " + l->kind_name());
        extend(l, {std::move(v)}, at);
        break;
      }
      case 'e': {  // APPENDS
        std::vector<PyRef> items = pop_mark(at);
        PyRef& l = top(at);
        if (l->kind != K::list) bad(at, "APPENDS to a " + l->kind_name());
        extend(l, std::move(items), at);
        break;
      }
      case '}':
        push(PyValue::make(K::dict));
        break;
      case 'd': {  // DICT
        std::vector<PyRef> kv = pop_mark(at);
        PyRef d = PyValue::make(K::dict);
        set_items(d, kv, at);
        push(d);
        break;
      }
      case 's': {  // SETITEM
        PyRef v = pop(at), k = pop(at);
        set_items(top(at), {k, v}, at);
        break;
      }
      case 'u': {  // SETITEMS
        std::vector<PyRef> kv = pop_mark(at);
        set_items(top(at), kv, at);
        break;
      }
      case 0x8f:
        push(PyValue::make(K::set));
        break;      // EMPTY_SET
      case 0x90: {  // ADDITEMS
        std::vector<PyRef> items = pop_mark(at);
        PyRef& s = top(at);
        if (s->kind != K::set) bad(at, "ADDITEMS to a " + s->kind_name());
        extend(s, std::move(items), at);
        break;
      }
      case 0x91:
        push(seq(K::set, pop_mark(at), at));
        break;     // FROZENSET
      case 'c': {  // GLOBAL "module\nname\n"
        std::string module = line();
        push(global(module, line()));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        PyRef name = pop(at), module = pop(at);
        if (name->kind != K::str || module->kind != K::str) bad(at, "STACK_GLOBAL of non-strings");
        push(global(module->s, name->s));
        break;
      }
      case 'R': {  // REDUCE
        PyRef args = pop(at), fn = pop(at);
        push(call(fn, args, at));
        break;
      }
      case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
        PyRef args = pop(at), cls = pop(at);
        push(call(cls, args, at));
        break;
      }
      case 0x92: {  // NEWOBJ_EX (keyword arguments dropped: opaque objects only)
        pop(at);
        PyRef args = pop(at), cls = pop(at);
        push(call(cls, args, at));
        break;
      }
      case 'b': {  // BUILD: obj.__setstate__(state); dicts keep their items
        PyRef state = pop(at);
        PyRef& obj = top(at);
        if (obj->kind == K::object) {
          adopt(*obj, state, at);
          obj->state = std::move(state);
        }
        break;
      }
      case 'Q':
      case 'P': {  // BINPERSID, PERSID
        PyRef pid = op == 'Q' ? pop(at) : PyValue::str_value(line());
        if (!hooks_.persistent_load) bad(at, "a persistent id, and no loader for one");
        push(hooks_.persistent_load(pid));
        break;
      }
      case 'q':
        memo_put(uint(1), at);
        break;  // BINPUT
      case 'r':
        memo_put(uint(4), at);
        break;  // LONG_BINPUT
      case 0x94:
        memo_put(memo_.size(), at);
        break;  // MEMOIZE
      case 'p':
        memo_put(text_uint(at), at);
        break;  // PUT
      case 'h':
        push(memo_get(uint(1), at));
        break;  // BINGET
      case 'j':
        push(memo_get(uint(4), at));
        break;  // LONG_BINGET
      case 'g':
        push(memo_get(text_uint(at), at));
        break;  // GET
      default:
        bad(at, fmt::format("unsupported opcode 0x{:02x} ('{}')", op,
                            op >= 32 && op < 127 ? std::string(1, static_cast<char>(op)) : "?"));
    }
  }
};

}  // namespace

PyRef unpickle(const std::string& data, const std::string& where, const PickleHooks& hooks) {
  return Machine(data, where, hooks).run();
}

}  // namespace netspec
