// Generated text fixtures shared by several test folders (one copy each, not one per test file).
#pragma once
#include <cstdint>
#include <random>
#include <string>

namespace netspec::test_support {

// StableHLO text: @main -> @f1 -> ... -> @fn, each adding 1 before it calls the next (n calls
// deep), acyclic, so only a call-depth limit refuses it.
inline std::string call_chain_mlir(int n) {
  std::string t;
  for (int k = 0; k <= n; ++k) {
    t += "func.func " + std::string(k == 0 ? "@main" : "private @f" + std::to_string(k)) +
         "(%a: tensor<f32>) -> tensor<f32> {\n";
    if (k == n) {
      t += "  return %a : tensor<f32>\n}\n";
      continue;
    }
    t += "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
         "  %s = stablehlo.add %a, %c : tensor<f32>\n"
         "  %0 = call @f" +
         std::to_string(k + 1) +
         "(%s) : (tensor<f32>) -> tensor<f32>\n"
         "  return %0 : tensor<f32>\n}\n";
  }
  return t;
}

// ~`bytes` of repetitive English: random sentences from a small grammar (24 distinct characters).
inline std::string grammar_sentences(uint64_t seed, size_t bytes) {
  const char* subj[] = {"the cat", "a dog", "the bird", "my friend", "the old man", "a child"};
  const char* verb[] = {"sees", "likes", "eats", "finds", "wants", "hears"};
  const char* obj[] = {"the ball", "a red apple", "the green tree", "some bread", "the sky"};
  std::mt19937_64 r(seed);
  std::string s;
  while (s.size() < bytes)
    s += std::string(subj[r() % 6]) + " " + verb[r() % 6] + " " + obj[r() % 5] + ".\n";
  return s;
}

}  // namespace netspec::test_support
