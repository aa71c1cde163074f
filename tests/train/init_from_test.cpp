// bootstrapRanges "floats:N" (the seed's bootstrapBackbone prefixFloats): the layers whose
// parameters, in table order, are exactly the first N floats are loaded; the rest keep their init.
#include "train/init_from.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/safetensors.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

TEST(InitFrom, FloatPrefixLoadsTheLayersOfTheFirstNFloats) {
  // dense 4->3 (12 + 3 floats), dense 3->5 (15 + 5), dense 5->2 (10 + 2).
  const SpecFile s = parse_spec(R"({"name": "m", "inputChannels": 1, "inputHeight": 1,
    "inputWidth": 4, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 4, "out": 3},
    {"kind": "dense", "in": 3, "out": 5}, {"kind": "dense", "in": 5, "out": 2}]})");
  const ParamTable t = build_param_table(s.net);
  ASSERT_EQ(t.total_params(), 47);
  SafeTensors file;  // every tensor 7.0
  for (const ParamDesc& p : t.params) {
    Tensor v(DType::kF32, p.shape);
    for (float& x : v.span<float>()) x = 7.f;
    file.tensors.emplace_back(p.name, v);
  }
  const std::string path = (std::filesystem::temp_directory_path() / "prefix.safetensors").string();
  write_safetensors(path, file);
  auto loaded_layers = [&](const std::string& ranges) {
    TrainState st;
    st.params = init_params(t, InitKind::he, 1);
    load_init_weights(path, t, st, ranges, nullptr);
    std::set<int> out;
    for (size_t i = 0; i < t.params.size(); ++i) {
      bool all7 = true;
      for (float x : st.params[i].span<float>()) all7 = all7 && x == 7.f;
      if (all7) out.insert(t.params[i].layer);
    }
    return out;
  };
  const int d1 = t.params[0].layer, d2 = t.params[2].layer, d3 = t.params[4].layer;
  EXPECT_EQ(loaded_layers("floats:15"), (std::set<int>{d1}));
  EXPECT_EQ(loaded_layers("floats:35"), (std::set<int>{d1, d2}));
  EXPECT_EQ(loaded_layers("floats:47"), (std::set<int>{d1, d2, d3}));
  auto error_of = [&](const std::string& r) {
    try {
      loaded_layers(r);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(error_of("floats:20").find("the first 20 floats do not end at a layer boundary (the "
                                       "nearest boundaries are 15 and 35 floats; the net has 47)"),
            std::string::npos)
      << error_of("floats:20");
  EXPECT_NE(error_of("floats:x").find("expected floats:N with N >= 1"), std::string::npos);
  EXPECT_NE(error_of("floats:60").find("boundaries are 35 and 47"), std::string::npos)
      << error_of("floats:60");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace netspec::train
