// The rendezvous store against other local processes (issue 40 items 2 and 4): oversized and
// malformed messages, requests without the run's token and a thousand idle connections close
// those connections only (rank 0 keeps serving its ranks); a wrong token is refused by name; a
// server that accepts and never answers fails the client within its timeout; the wire parser
// refuses an oversized length from the header, before the body arrives.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "dist/tcp_store.h"
#include "tests/error_of.h"

namespace netspec::dist {
namespace {

using namespace std::chrono_literals;
using test_util::error_of;

int connect_raw(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  return fd;
}

std::string header(char op, uint32_t len) {
  std::string m(1, op);
  m.append(reinterpret_cast<const char*>(&len), sizeof len);
  return m;
}

// True when the server closed `fd` within `wait` (reading EOF, or a reset).
bool closed_by_server(int fd, std::chrono::milliseconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left.count(), 0, 50))) <= 0) continue;
    char b[64];
    ssize_t k = ::recv(fd, b, sizeof b, MSG_DONTWAIT);
    if (k <= 0) return true;
  }
  return false;
}

TEST(StoreHardening, OversizedAndMalformedMessagesCloseOnlyThatConnection) {
  const int port = free_loopback_port();
  TcpStore rank0("127.0.0.1", port, true, 5000ms, "secret");
  // Nine 'S' + 2^30 (the old server zero-filled 1 GiB for each before a byte arrived), a token
  // of 2^30 bytes, an unknown op, and a key of 2^30 after a valid token.
  std::vector<std::string> attacks(9, header('S', 1u << 30));
  attacks.push_back(header('A', 1u << 30));
  attacks.push_back("Zjunk");
  std::string after_auth = header('A', 6) + "secret" + header('G', 1u << 30);
  attacks.push_back(after_auth);
  for (const std::string& m : attacks) {
    int fd = connect_raw(port);
    ASSERT_EQ(::send(fd, m.data(), m.size(), MSG_NOSIGNAL), static_cast<ssize_t>(m.size()));
    EXPECT_TRUE(closed_by_server(fd, 3000ms)) << "message of " << m.size() << " bytes";
    ::close(fd);
  }
  // Rank 0 still serves: a rank sets and reads a key.
  TcpStore rank1("127.0.0.1", port, false, 5000ms, "secret");
  rank1.set("k", {'o', 'k'});
  std::vector<char> v;
  ASSERT_TRUE(rank0.try_get("k", v));
  EXPECT_EQ(std::string(v.begin(), v.end()), "ok");
}

TEST(StoreHardening, RequestsWithoutTheTokenAreRefused) {
  const int port = free_loopback_port();
  TcpStore rank0("127.0.0.1", port, true, 5000ms, "secret");
  // A local process sets a key of the run without the token: the connection is closed unheard.
  int fd = connect_raw(port);
  std::string set = header('S', 16) + "netspec/config/1" + header('S', 1).substr(1) + "x";
  ASSERT_EQ(::send(fd, set.data(), set.size(), MSG_NOSIGNAL), static_cast<ssize_t>(set.size()));
  EXPECT_TRUE(closed_by_server(fd, 3000ms));
  ::close(fd);
  std::vector<char> v;
  EXPECT_FALSE(rank0.try_get("netspec/config/1", v));
  // A rank with another token is refused by name, at once.
  const auto t0 = std::chrono::steady_clock::now();
  std::string e = error_of([&] { TcpStore("127.0.0.1", port, false, 5000ms, "guess"); });
  EXPECT_NE(e.find("refused this rank's token (NETSPEC_DIST_TOKEN differs from rank 0's"),
            std::string::npos)
      << e;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

TEST(StoreHardening, AThousandIdleConnectionsDoNotLockTheRanksOut) {
  const int port = free_loopback_port();
  TcpStore rank0("127.0.0.1", port, true, 5000ms, "secret");
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) idle.push_back(connect_raw(port));
  // A rank connecting after them is served (the oldest idle connections make room).
  const auto t0 = std::chrono::steady_clock::now();
  TcpStore rank1("127.0.0.1", port, false, 5000ms, "secret");
  rank1.set("k", {'1'});
  std::vector<char> v;
  EXPECT_TRUE(rank0.try_get("k", v));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  // The server keeps at most 64 connections without the token: the rest were closed.
  int closed = 0;
  for (int fd : idle) closed += closed_by_server(fd, 1ms) ? 1 : 0;
  EXPECT_GE(closed, 1000 - 64);
  for (int fd : idle) ::close(fd);
}

TEST(StoreHardening, AServerThatNeverAnswersFailsTheRankWithinItsTimeout) {
  // Listening (the kernel completes the handshake) but never reading or answering.
  int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(ls, 8), 0);
  ASSERT_EQ(::getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int port = ntohs(a.sin_port);
  const auto t0 = std::chrono::steady_clock::now();
  std::string e = error_of([&] { TcpStore("127.0.0.1", port, false, 1000ms, "secret"); });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(e.find("accepted the connection but did not answer within 1 s"), std::string::npos)
      << e;
  EXPECT_LT(took, 3.0);
  ::close(ls);
}

TEST(StoreHardening, ParserBoundsLengthsFromTheHeader) {
  StoreRequest r;
  const std::string set = header('S', 3) + "key" + header('x', 2).substr(1) + "vv";
  EXPECT_EQ(parse_store_request(set, r), set.size());
  EXPECT_EQ(r.op, 'S');
  EXPECT_EQ(r.key, "key");
  EXPECT_EQ(std::string(r.value.begin(), r.value.end()), "vv");
  for (size_t cut = 0; cut < set.size(); ++cut)  // every prefix: wait for more
    EXPECT_EQ(parse_store_request(std::string_view(set).substr(0, cut), r), 0u) << cut;
  // Over the bound: refused from the five header bytes alone.
  std::string e = error_of([&] { parse_store_request(header('S', kMaxStoreKey + 1), r); });
  EXPECT_NE(e.find("a key of 4097 bytes (expected at most 4096)"), std::string::npos) << e;
  e = error_of(
      [&] { parse_store_request(header('S', 1) + "k" + header('x', 1u << 30).substr(1), r); });
  EXPECT_NE(e.find("a value of 1073741824 bytes (expected at most 16777216)"), std::string::npos)
      << e;
  e = error_of([&] { parse_store_request(header('A', 257), r); });
  EXPECT_NE(e.find("a token of 257 bytes (expected at most 256)"), std::string::npos) << e;
  e = error_of([&] { parse_store_request("Q", r); });
  EXPECT_NE(e.find("unknown request byte 0x51"), std::string::npos) << e;
}

}  // namespace
}  // namespace netspec::dist
