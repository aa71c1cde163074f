#include "dist/store_kv.h"

#include <algorithm>
#include <thread>

#include "core/error.h"

namespace netspec::dist {

void StoreKv::put(const std::string& key, const std::string& value) {
  store_.set(prefix_ + key, std::vector<char>(value.begin(), value.end()));
}

std::optional<std::string> StoreKv::try_get(const std::string& key) {
  std::vector<char> v;
  if (!store_.try_get(prefix_ + key, v)) return std::nullopt;
  return std::string(v.begin(), v.end());
}

std::string StoreKv::get(const std::string& key, std::chrono::milliseconds timeout) {
  using namespace std::chrono;
  const auto until = steady_clock::now() + timeout;
  milliseconds pause(10);
  for (;;) {
    if (std::optional<std::string> v = try_get(key)) return *v;
    const auto now = steady_clock::now();
    if (now >= until)
      fail("dist", "key-value store: '{}{}' was not set within {} ms", prefix_, key,
           timeout.count());
    std::this_thread::sleep_for(std::min(pause, duration_cast<milliseconds>(until - now)));
    pause = std::min(pause * 2, milliseconds(100));
  }
}

}  // namespace netspec::dist
