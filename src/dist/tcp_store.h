// A minimal TCP key-value store for rendezvous (what PyTorch's TCPStore is): rank 0 serves it on
// MASTER_ADDR:MASTER_PORT; every rank (rank 0 too) is a client. Implements Gloo's
// rendezvous::Store, so Gloo's full-mesh connect exchanges its addresses through it. get() and
// wait() block until the keys are set or the timeout passes (then throw netspec::Error naming the
// keys and the address), and every socket read has the same deadline, so a rank that never
// arrives, or a server that accepts and never answers, cannot hang the others.
// Hardened against other local processes (docs/security.md): a client must first present the
// run's token (NETSPEC_DIST_TOKEN, made by `netspec launch`); messages and the store are bounded;
// one thread serves every connection and a bad one is closed, never taking rank 0 down.
#pragma once
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace netspec::dist {

// Bounds of the wire format (a rendezvous moves a fingerprint and Gloo's addresses: kilobytes).
inline constexpr size_t kMaxStoreKey = 4096;
inline constexpr size_t kMaxStoreValue = size_t{16} << 20;
inline constexpr size_t kMaxStoreToken = 256;
inline constexpr size_t kMaxStoreBytes = size_t{256} << 20;  // all values together
inline constexpr size_t kMaxStoreKeys = 1 << 16;

// One request: 'A' token (must come first on a connection), 'S' key value, 'G' key.
struct StoreRequest {
  char op = 0;
  std::string key;  // the token for 'A'
  std::vector<char> value;
};

// Parses the request at the front of `buf`: returns the bytes it spans, or 0 when `buf` holds
// only a prefix of it (wait for more). A malformed request (unknown op, a length over its bound)
// throws netspec::Error as soon as its header shows it, before its body arrives.
size_t parse_store_request(std::string_view buf, StoreRequest& out);

// A TCP port free on 127.0.0.1 now (the kernel picks it; whoever binds it next may lose a race).
int free_loopback_port();

// 32 random hex digits (getrandom): a run's token.
std::string random_token();

class TcpStoreServer;

class TcpStore final : public gloo::rendezvous::Store {
 public:
  // serve: start the server first (rank 0). Connecting retries until `timeout` (the server may
  // start later than its clients); `token` must equal the server's.
  TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout,
           const std::string& token);
  ~TcpStore() override;
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  // Non-blocking: the value, or false when the key is not set.
  bool try_get(const std::string& key, std::vector<char>& out);

 private:
  std::string where_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<TcpStoreServer> server_;
  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace netspec::dist
