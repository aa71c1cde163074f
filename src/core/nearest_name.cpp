// Nearest known name by edit distance (see nearest_name.h).
#include "core/nearest_name.h"

#include <algorithm>

namespace netspec {
namespace {

// Optimal string alignment distance: Levenshtein plus adjacent transpositions (trian -> train
// and mpl -> mlp are one edit each).
size_t edit_distance(const std::string& s, const std::string& n) {
  std::vector<std::vector<size_t>> d(s.size() + 1, std::vector<size_t>(n.size() + 1));
  for (size_t i = 0; i <= s.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= n.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= s.size(); ++i)
    for (size_t j = 1; j <= n.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (s[i - 1] == n[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && s[i - 1] == n[j - 2] && s[i - 2] == n[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[s.size()][n.size()];
}

}  // namespace

std::string nearest_name(const std::string& s, const std::vector<std::string>& names) {
  std::string best;
  // <= 2 edits, and fewer than the name has letters ("ab" is not a typo of "xy").
  size_t best_d = std::min<size_t>(3, s.size());
  for (const auto& n : names)
    if (const size_t d = edit_distance(s, n); d < best_d) best_d = d, best = n;
  return best;
}

std::string did_you_mean(const std::string& s, const std::vector<std::string>& names) {
  const std::string n = nearest_name(s, names);
  return n.empty() ? "" : "; did you mean '" + n + "'?";
}

}  // namespace netspec
