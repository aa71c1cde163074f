// Tasks from the command line: a field of another task refused by name with exit 2, a loss that
// does not fit the data refused naming lossKind (not the executor's argument error), and an
// autoencoder (floatTargetMse, target = input) trained on Fashion-MNIST-shaped images whose
// class labels are not checked against its 1-channel output.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_util.h"

namespace netspec::cli_test {
namespace {

TEST(TaskCli, AFieldOfAnotherTaskIsRefusedByName) {
  auto data = synthetic_fashion("task_cli_", 64, 32, 3);
  auto dir = temp_dir("task_cli_", "foreign");
  Result r = sh("train mlp --data " + data.string() + " --epochs 1 --set fpnAffineProb=0.5 " +
                "--run-dir " + (dir / "run").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("fpnAffineProb is read by the detection task only; this run is "
                       "classification"),
            std::string::npos)
      << r.out;
  r = sh("train mlp --data " + data.string() + " --epochs 1 --set ddpmSteps=10 --run-dir " +
         (dir / "run2").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("ddpmSteps is read by the diffusion task only"), std::string::npos) << r.out;
}

TEST(TaskCli, FloatTargetMseOnAClassifierNamesTheLossNotAnExecutorArgument) {
  auto data = synthetic_fashion("task_cli_", 64, 32, 4);
  auto dir = temp_dir("task_cli_", "mse");
  Result r = sh("train mlp --data " + data.string() +
                " --epochs 1 --set lossKind=floatTargetMse --run-dir " + (dir / "run").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("lossKind floatTargetMse (regression) trains the net to reproduce its "
                       "input"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("argument"), std::string::npos) << r.out;
}

TEST(TaskCli, AnAutoencoderTrainsOnImagesWithClassLabels) {
  auto data = synthetic_fashion("task_cli_", 64, 32, 5);
  auto dir = temp_dir("task_cli_", "ae");
  std::ofstream(dir / "ae.json") << R"({"name": "ae", "inputChannels": 1, "inputHeight": 28,
    "inputWidth": 28, "layers": [{"kind": "conv2d", "ic": 1, "oc": 4, "k": 3, "act": "relu"},
    {"kind": "conv2d", "ic": 4, "oc": 1, "k": 3, "act": "identity"}],
    "train": {"dataset": "fashionMnist", "optimizer": "adam", "learningRate": 0.01,
    "batchSize": 16, "epochs": 2, "lossKind": "floatTargetMse"}})";
  Result r = sh("train " + (dir / "ae.json").string() + " --data " + data.string() + " --run-dir " +
                (dir / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(reconstruction mse)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(mean squared error) over 25088 values"), std::string::npos)
      << r.out;  // 32 test images x 28 x 28
  // metrics.csv: a loss, no top-1 (an MSE has no accuracy).
  std::ifstream csv(dir / "run" / "metrics.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header.rfind("epoch,step,lr,train_loss,val_loss,val_top1,", 0), 0u) << header;
  size_t comma = 0;
  for (int i = 0; i < 5; ++i) comma = row.find(',', comma) + 1;  // past val_loss
  EXPECT_EQ(row[comma], ',') << row;                             // val_top1 empty
}

// A symlink loop among predict's inputs is named with exit 2 (was a raw filesystem error,
// "internal error", exit 3).
TEST(TaskCli, PredictNamesASymlinkLoopInAnInputDirectory) {
  auto data = synthetic_fashion("task_cli_", 64, 32, 6);
  auto dir = temp_dir("task_cli_", "loop");
  Result r =
      sh("train mlp --data " + data.string() + " --epochs 1 --run-dir " + (dir / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::filesystem::create_directories(dir / "imgs");
  std::filesystem::create_symlink("b.png", dir / "imgs" / "a.png");
  std::filesystem::create_symlink("a.png", dir / "imgs" / "b.png");
  r = sh("predict " + (dir / "run").string() + " " + (dir / "imgs").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(".png: cannot follow (Too many levels of symbolic links)"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace netspec::cli_test
