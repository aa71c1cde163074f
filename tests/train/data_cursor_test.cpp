// The data cursor in `last` (train/checkpoint.h): written and read back exactly; a checkpoint
// without it (before session 19) loads with no cursor, so it resumes from batch_in_epoch as
// before; a malformed or out-of-range cursor is refused naming the file.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/safetensors.h"
#include "layers/param_table.h"
#include "tests/train/train_test_util.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

TEST(DataCursor, RoundTripsAndOldCheckpointsHaveNone) {
  const std::string dir = test_util::tmpdir("dc", "roundtrip");
  SpecFile spec = parse_spec(test_util::kSmallMlp, "small");
  const ParamTable t = build_param_table(spec.net);
  TrainState s = make_state(init_params(t, InitKind::he, 1), {}, {});
  s.epoch = 2;
  s.step = 40;
  s.batch_in_epoch = 5;
  s.cursor = {2, 160, -3, 1000, 32, 4, true};
  const std::string path = dir + "/last.safetensors";
  save_checkpoint(path, t, s, "small");
  EXPECT_EQ(read_safetensors(path).metadata.at("netspec.data_cursor"),
            "epoch=2 position=160 seed=-3 samples=1000 batch=32 replicas=4");
  TrainState r = make_state(init_params(t, InitKind::he, 2), {}, {});
  load_checkpoint(path, t, r);
  EXPECT_TRUE(r.cursor.present);
  EXPECT_EQ(cursor_text(r.cursor), cursor_text(s.cursor));
  EXPECT_EQ(r.batch_in_epoch, 5);

  s.cursor = {};  // as every checkpoint before the cursor
  save_checkpoint(path, t, s, "small");
  EXPECT_EQ(read_safetensors(path).metadata.count("netspec.data_cursor"), 0u);
  load_checkpoint(path, t, r);
  EXPECT_FALSE(r.cursor.present);
  EXPECT_EQ(r.batch_in_epoch, 5);  // the old resume point
}

TEST(DataCursor, MalformedCursorIsRefusedNamingTheFile) {
  for (const char* bad : {"epoch=1 position=2",
                          "epoch=1 position=9 seed=0 samples=8 batch=4 "
                          "replicas=1",
                          "epoch=1 position=x seed=0 samples=8 batch=4 replicas=1",
                          "epoch=1 position=0 seed=0 samples=8 batch=0 replicas=1",
                          "epoch=1 position=0 seed=0 samples=8 batch=4 replicas=1 extra"}) {
    try {
      parse_cursor(bad, "RUN/last.safetensors");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("RUN/last.safetensors: metadata "
                                           "'netspec.data_cursor'"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(parse_cursor("epoch=0 position=8 seed=7 samples=8 batch=4 replicas=2", "x").position,
            8);
}

}  // namespace
}  // namespace netspec::train
