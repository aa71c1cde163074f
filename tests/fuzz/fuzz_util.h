// The mutation fuzz driver shared by the fuzz targets: valid seeds get byte flips, insertions,
// deletions, slice copies, truncations and number changes; every mutant must be accepted or
// refused with a netspec::Error. Another exception, a crash, a hang or a sanitizer report
// (NETSPEC_SANITIZE) fails. Deterministic; NETSPEC_FUZZ_SECONDS (per target, default 5),
// NETSPEC_FUZZ_SEED, NETSPEC_FUZZ_TRACE=FILE (each mutant written there before it runs).
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"

namespace netspec::fuzz {

inline std::string mutate(std::string t, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
  if (t.empty()) return std::string(1, static_cast<char>(rng()));
  size_t p = pick(t.size());
  switch (rng() % 7) {
    case 0:  // flip a bit
      t[p] = static_cast<char>(t[p] ^ (1 << pick(8)));
      break;
    case 1:  // set a byte to an interesting value
      t[p] = "\x00\xff\x7f\x80\x01[{\"-9"[pick(10)];
      break;
    case 2:  // delete a range
      t.erase(p, 1 + pick(16));
      break;
    case 3:  // copy a slice elsewhere
      t.insert(pick(t.size()), t.substr(p, 1 + pick(32)));
      break;
    case 4:  // truncate
      t.resize(p);
      break;
    case 5: {  // replace a decimal number
      size_t d = t.find_first_of("0123456789", p);
      if (d == std::string::npos) break;
      size_t e = t.find_first_not_of("0123456789", d);
      static const char* kNums[] = {"0",
                                    "1",
                                    "-1",
                                    "2",
                                    "65",
                                    "4294967296",
                                    "2000000000",
                                    "9223372036854775807",
                                    "-9223372036854775808",
                                    "1e300",
                                    "18446744073709551615",
                                    "0.5"};
      t.replace(d, (e == std::string::npos ? t.size() : e) - d, kNums[pick(std::size(kNums))]);
      break;
    }
    default: {  // overwrite 4 bytes with a big-endian or little-endian extreme
      static const char* kWords[] = {"\xff\xff\xff\xff", "\x7f\xff\xff\xff", "\x00\x00\x00\x00",
                                     "\x00\x01\x00\x00", "\x00\x00\x4e\x20", "\x00\x00\x00\x40"};
      t.replace(p, std::min<size_t>(4, t.size() - p), kWords[pick(std::size(kWords))], 4);
    }
  }
  return t;
}

// Runs `target` on mutants of `seeds` for the budget; seeds must be accepted.
inline void run(const std::vector<std::string>& seeds,
                const std::function<void(const std::string&)>& target) {
  for (const auto& s : seeds) ASSERT_NO_THROW(target(s));
  double budget = 5.0;
  if (const char* b = std::getenv("NETSPEC_FUZZ_SECONDS")) budget = std::atof(b);
  uint64_t seed = 12345;
  if (const char* s = std::getenv("NETSPEC_FUZZ_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::mt19937_64 rng(seed);
  const char* trace = std::getenv("NETSPEC_FUZZ_TRACE");
  const auto start = std::chrono::steady_clock::now();
  int n = 0, ok = 0, failures = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget) {
    std::string m = seeds[rng() % seeds.size()];
    for (int r = 1 + static_cast<int>(rng() % 3); r > 0; --r) m = mutate(m, rng);
    ++n;
    if (trace) std::ofstream(trace, std::ios::binary) << m;  // a hang or crash leaves it here
    const auto t0 = std::chrono::steady_clock::now();
    try {
      target(m);
      ++ok;
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a netspec::Error: " << e.what() << "\nmutant (" << m.size()
                    << " bytes):\n"
                    << m.substr(0, 2000);
      if (++failures > 5) break;
    }
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (took > 1.0)  // worth a look: a reader that is slow on some input
      std::printf("fuzz: slow mutant (%.1f s):\n%s\n", took, m.substr(0, 3000).c_str());
  }
  std::printf("fuzz: %d mutants, %d accepted, seed %llu\n", n, ok,
              static_cast<unsigned long long>(seed));
  EXPECT_GT(n, 20);
}

}  // namespace netspec::fuzz
