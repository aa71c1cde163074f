// Internal: the printer shared by printer.cpp (modules, functions, generic ops, attributes,
// dense literals) and printer_ops.cpp (the custom pretty syntaxes). Not a public header.
#pragma once
#include <string>
#include <unordered_map>

#include "hlo/text/printer.h"

namespace netspec::hlo {

class Printer {
 public:
  explicit Printer(const PrintOptions& o) : opts_(o) {}
  std::string take() { return std::move(out_); }

  void print_module(const Module& m);
  void print_func(const Func& f, int indent);
  void print_op(const Op& op, int indent);
  void print_generic_op(const Op& op, int indent);
  // printer_ops.cpp: the custom syntax after `%r = `; false when the op has none (or carries
  // attributes its custom syntax cannot show), in which case nothing was written.
  bool print_custom_op(const Op& op, int indent);
  // Prints `{\n ops \n}` for a region; `label` adds the `^bb0(...)` line for block args.
  void print_region(const Block& b, int indent, bool label);
  void print_block_ops(const Block& b, int indent);

  std::string name(const Value* v) const;
  std::string operands_str(const Op& op, size_t from = 0, size_t to = SIZE_MAX) const;
  std::string arg_def(const Value* v);  // defines a fresh %argN name: "%arg3: tensor<f32>"
  void set_name(const Value* v, std::string n) { names_[v] = std::move(n); }
  std::string fresh_iter_arg();

  std::string out_;

 private:
  void name_results(const Op& op);
  const PrintOptions& opts_;
  std::unordered_map<const Value*, std::string> names_;
  int next_value_ = 0, next_arg_ = 0, next_iter_ = 0;
};

std::string attr_str(const AttrValue& v);
std::string dense_str(const Tensor& t);  // `dense<...> : tensor<...>`
std::string dense_body(const Tensor& t);  // the part between `dense<` and `>`
std::string ints_str(const I64s& v);      // [1, 2]
std::string conv_dims_str(const ConvDims& d);
std::string dot_algorithm_fields(const DotAlgorithm& a);  // `lhs_precision_type = tf32, ...`
std::string functional_type(const Op& op);  // (T, ...) -> R
std::string indent_str(int n);

}  // namespace netspec::hlo
