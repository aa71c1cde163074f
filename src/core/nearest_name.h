// Did-you-mean for every name a user types (commands, flags, --set fields, nets, datasets): the
// known name nearest by edit distance, offered only when it is close.
#pragma once
#include <string>
#include <vector>

namespace netspec {

// The name of `names` nearest to `s` by edit distance (insert, delete, substitute, swap of two
// adjacent characters each cost 1) when that distance is <= 2 and below s's length, else "".
std::string nearest_name(const std::string& s, const std::vector<std::string>& names);

// "; did you mean 'NAME'?" for nearest_name's answer, "" when there is none.
std::string did_you_mean(const std::string& s, const std::vector<std::string>& names);

}  // namespace netspec
