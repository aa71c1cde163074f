// The did-you-mean helper every unknown name goes through (core/nearest_name.h).
#include "core/nearest_name.h"

#include <gtest/gtest.h>

namespace netspec {
namespace {

TEST(NearestName, OneOrTwoEditsAndSwaps) {
  const std::vector<std::string> nets = {"mlp", "linear", "resnet18", "resnet34"};
  EXPECT_EQ(nearest_name("mpl", nets), "mlp");          // adjacent swap: 1 edit
  EXPECT_EQ(nearest_name("resnet19", nets), "resnet18");  // substitution
  EXPECT_EQ(nearest_name("linearr", nets), "linear");   // insertion
  EXPECT_EQ(nearest_name("resnt34", nets), "resnet34");  // deletion
  EXPECT_EQ(nearest_name("lnear", nets), "linear");
  EXPECT_EQ(nearest_name("resnet5", nets), "resnet18");  // 2 edits: still offered
}

TEST(NearestName, FarOrShortNamesGetNoSuggestion) {
  const std::vector<std::string> names = {"--epochs", "--batch", "--lr"};
  EXPECT_EQ(nearest_name("--epoch", names), "--epochs");
  EXPECT_EQ(nearest_name("--seed", names), "");  // 4+ edits from every name
  // Two letters may be two edits from anything: "xy" is no typo of "lr".
  EXPECT_EQ(nearest_name("xy", {"lr", "bs"}), "");
  EXPECT_EQ(nearest_name("lx", {"lr", "bs"}), "lr");
  EXPECT_EQ(nearest_name("anything", {}), "");
}

TEST(NearestName, DidYouMeanText) {
  EXPECT_EQ(did_you_mean("fashion_mnist", {"mnist", "fashion-mnist"}),
            "; did you mean 'fashion-mnist'?");
  EXPECT_EQ(did_you_mean("coco2017", {"mnist"}), "");
}

}  // namespace
}  // namespace netspec
