// StableHLO text parser: pretty and generic forms of every op in ops.def, with the spellings
// found in real files (see docs/ir.md). Errors throw ParseError (`file:line:col: error: msg`);
// the result is verified (verify_module) before it is returned.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir.h"

namespace netspec::hlo {

// Parses one module. `filename` is used in error messages only.
std::unique_ptr<Module> parse_module(std::string_view text, const std::string& filename = "<input>");
// Splits on lines `// -----` and parses each part (line numbers stay those of the whole file).
std::vector<std::unique_ptr<Module>> parse_split_modules(std::string_view text, const std::string& filename);
// Reads and parses a file (first part of a split file unless `split` returns all via the above).
std::unique_ptr<Module> parse_file(const std::string& path);

}  // namespace netspec::hlo
