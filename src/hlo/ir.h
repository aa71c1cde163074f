// The in-memory StableHLO IR: Module -> Func -> Block -> Op, in SSA form. An Op owns its result
// Values and its regions (each region is a single Block, as in StableHLO); operands point at
// Values defined earlier (op results or block arguments). Build with hlo::Builder (builder.h),
// print with printer.h, parse with parser.h, check with verify_module().
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "hlo/attr.h"
#include "hlo/type.h"

namespace netspec::hlo {

enum class OpKind : uint16_t {
#define X(e, name, family) e,
#include "hlo/ops.def"
#undef X
};
constexpr size_t kNumOpKinds = 0
#define X(e, name, family) +1
#include "hlo/ops.def"
#undef X
    ;

std::string_view op_name(OpKind k);    // "stablehlo.add", "func.call"
std::string_view op_family(OpKind k);  // "binary"
std::optional<OpKind> op_kind_from_name(std::string_view full_name);
// Short mnemonic without the dialect: "add", "call".
std::string_view op_mnemonic(OpKind k);

class Op;
class Block;
class Func;
class Module;

// An SSA value: either result `index` of op `def`, or argument `index` of block `block`.
class Value {
 public:
  Type type;
  Op* def = nullptr;
  Block* block = nullptr;
  int index = 0;
  bool is_block_arg() const { return def == nullptr; }
};

class Block {
 public:
  std::vector<std::unique_ptr<Value>> args;
  std::vector<std::unique_ptr<Op>> ops;
  Op* parent_op = nullptr;      // set for region blocks
  Func* parent_func = nullptr;  // set for a function body

  Value* add_arg(Type t);
  Value* arg(size_t i) const { return args.at(i).get(); }
  std::vector<Type> arg_types() const;
  // The terminator (stablehlo.return / func.return), or nullptr.
  Op* terminator() const;
  Func* func() const;  // enclosing function
};

class Op {
 public:
  OpKind kind;
  std::vector<Value*> operands;
  std::vector<std::unique_ptr<Value>> results;
  Attrs attrs;
  std::vector<std::unique_ptr<Block>> regions;
  Block* parent = nullptr;
  Location loc;  // source position when parsed

  explicit Op(OpKind k) : kind(k) {}
  Value* operand(size_t i) const { return operands.at(i); }
  Value* result(size_t i = 0) const { return results.at(i).get(); }
  const Type& operand_type(size_t i) const { return operands.at(i)->type; }
  std::vector<Type> operand_types() const;
  std::vector<Type> result_types() const;
  Block* region(size_t i) const { return regions.at(i).get(); }
  std::string_view name() const { return op_name(kind); }
  Func* func() const;
  Module* module() const;
};

class Func {
 public:
  std::string name;
  bool is_public = true;
  std::unique_ptr<Block> body;
  std::vector<Type> result_types;
  Module* module = nullptr;
  Location loc;

  Func();
  std::vector<Type> arg_types() const { return body->arg_types(); }
  Value* arg(size_t i) const { return body->arg(i); }
  size_t num_args() const { return body->args.size(); }
};

class Module {
 public:
  std::string name;  // optional `module @name`
  std::vector<std::unique_ptr<Func>> funcs;

  Func* add_func(const std::string& name, const std::vector<Type>& arg_types,
                 bool is_public = true);
  // O(1) for the functions add_func made (a module of 100k functions resolved each call by a
  // scan: quadratic); a function renamed or moved since is found by a scan.
  Func* find(std::string_view name) const;
  // `main` if present, else the only public function; throws naming the candidates otherwise.
  Func* entry(std::string_view requested = {}) const;

 private:
  // name -> position in funcs when add_func made it; checked against funcs on every hit, since
  // passes erase and rename functions directly.
  std::unordered_map<std::string, size_t> index_;
};

// Visits every op in a block, recursively into regions, in program order.
template <typename F>
void walk(const Block& b, F&& f) {
  for (const auto& op : b.ops) {
    f(*op);
    for (const auto& r : op->regions) walk(*r, f);
  }
}

}  // namespace netspec::hlo
