// Optional oracle: when Debian's python3-torchvision is importable, recount a few zoo nets'
// parameters with torchvision itself and compare with the ParamTable. Skips otherwise.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "spec/param_table.h"
#include "spec/spec_json.h"
#include "layers/param_table.h"

namespace netspec {
namespace {

// Runs python and returns its stdout, or "" when python/torchvision is missing.
std::string run_python(const std::string& code) {
  std::string cmd = "/usr/bin/python3 -c \"" + code + "\" 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  return pclose(p) == 0 ? out : "";
}

TEST(TorchvisionOracle, ParameterCountsAgree) {
  if (run_python("import torchvision; print(1)").empty())
    GTEST_SKIP() << "python3-torchvision not installed";
  const std::pair<const char*, const char*> nets[] = {
      {"resnet18", "m.resnet18(num_classes=10)"},
      {"mobilenet-v3-small", "m.mobilenet_v3_small(num_classes=10)"},
      {"squeezenet", "m.squeezenet1_1(num_classes=10)"},
      {"shufflenet-v2", "m.shufflenet_v2_x1_0(num_classes=10)"},
  };
  // One interpreter start for all nets (importing torch is slow): one count per line.
  std::string code = "import torchvision.models as m; n=lambda x: sum(p.numel() for p in "
                     "x.parameters())";
  for (auto [zoo, ctor] : nets) code += std::string("; print(n(") + ctor + "))";
  std::string out = run_python(code);
  ASSERT_FALSE(out.empty());
  size_t pos = 0;
  for (auto [zoo, ctor] : nets) {
    size_t nl = out.find('\n', pos);
    ASSERT_NE(nl, std::string::npos) << out;
    int64_t want = std::stoll(out.substr(pos, nl - pos));
    pos = nl + 1;
    NetSpec net =
        load_spec_file(std::string(NETSPEC_SOURCE_DIR) + "/models/" + zoo + ".json").net;
    set_num_classes(net, 10);
    EXPECT_EQ(build_param_table(net).total_params(), want) << zoo << " vs " << ctor;
  }
}

}  // namespace
}  // namespace netspec
