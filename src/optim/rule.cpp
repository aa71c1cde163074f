// The update-rule registry (rule.h): filled by each rule file's NETSPEC_REGISTER_OPTIMIZER.
#include "optim/rule.h"

#include <array>

#include "core/error.h"

namespace netspec::optim {
namespace {

constexpr size_t kKinds = std::size(EnumTraits<OptimizerKind>::kNames);

std::array<std::optional<UpdateRule>, kKinds>& registry() {
  static std::array<std::optional<UpdateRule>, kKinds> r;
  return r;
}

std::string registered_names() {
  std::string s;
  for (OptimizerKind k : registered_kinds())
    s += (s.empty() ? "" : ", ") + std::string(enum_name(k));
  return s;
}

}  // namespace

RuleRegistrar::RuleRegistrar(OptimizerKind kind, UpdateRule rule) {
  const auto i = static_cast<size_t>(kind);
  if (i >= kKinds || !rule.slots || !rule.update || registry()[i])
    fail("optimizer", "bad registration of kind {} (a second rule, or no slots or update)",
         static_cast<int>(kind));
  registry()[i] = rule;
}

const UpdateRule& rule_for(OptimizerKind kind) {
  const auto i = static_cast<size_t>(kind);
  if (i >= kKinds || !registry()[i])
    fail("optimizer", "optimizer kind has no update rule (got {}, expected one of: {})",
         i < kKinds ? std::string(enum_name(kind)) : std::to_string(i), registered_names());
  return *registry()[i];
}

std::vector<OptimizerKind> registered_kinds() {
  std::vector<OptimizerKind> out;
  for (size_t i = 0; i < kKinds; ++i)
    if (registry()[i]) out.push_back(static_cast<OptimizerKind>(i));
  return out;
}

std::vector<OptimizerKind> partition(OptimizerKind kind, const ParamTable& table) {
  const UpdateRule& r = rule_for(kind);
  std::vector<OptimizerKind> out;
  out.reserve(table.params.size());
  for (const ParamDesc& p : table.params)
    out.push_back(!r.eligible || r.eligible(p) ? kind : *r.fallback);
  return out;
}

}  // namespace netspec::optim
