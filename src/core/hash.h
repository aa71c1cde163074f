// Counter-based random bits: splitmix64 (Steele, Lea, Flood 2014), a bijective 64-bit mix, so
// nested keys like mix(mix(seed) ^ epoch) ^ index give independent, reproducible draws whatever
// thread asks (augmentation, dropPath/dropout keep masks).
#pragma once
#include <cstdint>

namespace netspec {

inline uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace netspec
