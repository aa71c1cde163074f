// Reference equality of the segmentation kinds against PyTorch at equal weights (eval mode, BN
// on randomised running statistics): bilinearUpsample against F.interpolate(bilinear,
// align_corners=False), asppModule against torchvision's DeepLabV3 ASPP, unetDown/unetUp against
// a Pytorch-UNet. The modules are in tools/seg_reference_models.py (tools/torchvision_reference.py
// --model peer:NAME builds, randomises and runs them). Skips without Debian's torch/torchvision.
#include "reference_util.h"

namespace netspec::reference {
namespace {

RefResult compare(const NetSpec& net, const std::string& model, int size, int classes) {
  RefOptions o;
  o.size = size;
  o.classes = classes;
  o.extra_args = fmt::format("--peer-file {}/tools/seg_reference_models.py", NETSPEC_SOURCE_DIR);
  return compare_net_with_torchvision(net, "peer:" + model, o);
}

TEST(ReferenceSeg, BilinearUpsampleMatchesInterpolate) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net = NetBuilder("bilinear")
                    .input(3, 7, 7)
                    .add(Conv2d{3, 4, 1, 1, Padding::same, Activation::identity})
                    .add(BilinearUpsample{3})
                    .build();
  RefResult r = compare(net, "bilinear", 7, 4);
  std::cout << "[ reference ] " << r.str() << "\n";
  EXPECT_LE(r.max_abs_diff, 1e-5 * r.max_abs_ref) << r.str();
}

TEST(ReferenceSeg, AsppMatchesTorchvision) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net = NetBuilder("aspp").input(3, 20, 20).add(AsppModule{3, 6}).build();
  RefResult r = compare(net, "aspp", 20, 6);
  std::cout << "[ reference ] " << r.str() << "\n";
  EXPECT_LE(r.max_abs_diff, 1e-4 * r.max_abs_ref) << r.str();
}

TEST(ReferenceSeg, UnetMatchesPytorchUnet) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net = NetBuilder("unet")
                    .input(3, 16, 16)
                    .add(ConvBn{3, 8, 3})
                    .add(ConvBn{8, 8, 3})
                    .add(UnetDown{8, 16})
                    .add(UnetDown{16, 32})
                    .add(UnetUp{32, 16})
                    .add(UnetUp{16, 8})
                    .add(Conv2d{8, 3, 1, 1, Padding::same, Activation::identity})
                    .build();
  RefResult r = compare(net, "unet", 16, 3);
  std::cout << "[ reference ] " << r.str() << "\n";
  EXPECT_LE(r.max_abs_diff, 1e-4 * r.max_abs_ref) << r.str();
}

}  // namespace
}  // namespace netspec::reference
