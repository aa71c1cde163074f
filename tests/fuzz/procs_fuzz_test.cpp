// Fuzz targets for what other processes and old runs hand netspec (issue 40): the run-record
// loader (config.json: strict JSON, every field checked as its flag) and the rendezvous store's
// wire parser, alone and through a live store server that must keep serving its ranks whatever a
// connection sends (fuzz_util.h: NETSPEC_FUZZ_SECONDS per target).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string_view>

#include "dist/tcp_store.h"
#include "spec/spec_json.h"
#include "tests/fuzz/fuzz_util.h"
#include "train/run_dir.h"

namespace netspec {
namespace {

using namespace std::chrono_literals;

std::string framed(char op, std::string_view key, std::string_view value = {}, bool with = false) {
  std::string m(1, op);
  auto put = [&](std::string_view s) {
    const auto n = static_cast<uint32_t>(s.size());
    m.append(reinterpret_cast<const char*>(&n), sizeof n);
    m.append(s);
  };
  put(key);
  if (with) put(value);
  return m;
}

TEST(FuzzRuns, RunRecordLoader) {
  std::vector<std::string> seeds;
  for (const char* net : {"mlp", "mnist-cnn", "cifar-bn"}) {
    train::RunRecord r;
    r.spec = parse_spec(std::string(R"({"name": ")") + net +
                            R"(", "inputChannels": 1, "inputHeight": 4, "inputWidth": 4,
        "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 16, "out": 3}],
        "train": {"epochs": 3, "seed": 5, "learningRate": 0.01}})",
                        "seed.json");
    r.limit = 640;
    r.val_split = 0.1;
    r.classes = 3;
    r.data = "/data/x";
    r.command = "netspec train x";
    seeds.push_back(train::run_record_json(r));
  }
  fuzz::run(seeds, [](const std::string& text) {
    train::RunRecord r = train::parse_run_record(text, "fuzz/config.json");
    // What the loader accepts is within the flags' bounds.
    EXPECT_GE(r.limit, 0);
    EXPECT_GE(r.classes, 0);
    EXPECT_TRUE(r.val_split >= 0 && r.val_split < 1) << r.val_split;
  });
}

TEST(FuzzRuns, StoreMessageParser) {
  const std::vector<std::string> seeds = {
      framed('A', "0123456789abcdef") + framed('S', "netspec/config/0", "{\"a\": 1}", true) +
          framed('G', "netspec/config/0"),
      framed('S', "netspec/gloo/rank_1", std::string(300, '\x01'), true),
      framed('G', "k") + framed('G', "kk")};
  fuzz::run(seeds, [](const std::string& buf) {
    std::string_view rest = buf;
    dist::StoreRequest r;
    while (size_t used = dist::parse_store_request(rest, r)) {
      ASSERT_LE(used, rest.size());
      EXPECT_LE(r.key.size(), dist::kMaxStoreKey);
      EXPECT_LE(r.value.size(), dist::kMaxStoreValue);
      rest.remove_prefix(used);
    }
  });
}

// Mutants sent to a live server, with and without the token in front: it must keep answering
// a rank (checked after every mutant) and never die.
TEST(FuzzRuns, StoreServerKeepsServing) {
  const int port = dist::free_loopback_port();
  dist::TcpStore rank0("127.0.0.1", port, true, 5000ms, "tok");
  const std::string hello = framed('A', "tok");
  const std::vector<std::string> seeds = {
      framed('S', "a", "xyz", true) + framed('G', "a"), framed('G', "zz"),
      framed('S', "netspec/config/0", std::string(64, 'c'), true)};
  int round = 0;
  fuzz::run(seeds, [&](const std::string& m) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const std::string msg = (++round % 4 == 0 ? "" : hello) + m;
    ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
    ::close(fd);
    rank0.set("alive", {'1'});
    std::vector<char> v;
    ASSERT_TRUE(rank0.try_get("alive", v));
  });
}

}  // namespace
}  // namespace netspec
