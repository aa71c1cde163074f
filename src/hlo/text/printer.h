// StableHLO text printer. Pretty form: the custom syntax StableHLO's own tools print (and XLA
// and IREE parse), falling back to the generic form for ops that have none. Generic form: MLIR's
// generic op syntax for everything ("stablehlo.add"(%0, %1) : (...) -> ...). Deterministic;
// parse(print(m)) == m for both forms.
#pragma once
#include <string>

#include "hlo/ir.h"

namespace netspec::hlo {

struct PrintOptions {
  bool generic = false;
};

std::string print_module(const Module& m, const PrintOptions& opts = {});
std::string print_func(const Func& f, const PrintOptions& opts = {});

}  // namespace netspec::hlo
