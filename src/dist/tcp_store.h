// A minimal TCP key-value store for rendezvous (what PyTorch's TCPStore is): rank 0 serves it on
// MASTER_ADDR:MASTER_PORT; every rank (rank 0 too) is a client. Implements Gloo's
// rendezvous::Store, so Gloo's full-mesh connect exchanges its addresses through it. get() and
// wait() block until the keys are set or the timeout passes (then throw netspec::Error naming the
// keys and the address), so a rank that never arrives cannot hang the others.
#pragma once
#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace netspec::dist {

// A TCP port free on 127.0.0.1 now (the kernel picks it; whoever binds it next may lose a race).
int free_loopback_port();

class TcpStoreServer;

class TcpStore final : public gloo::rendezvous::Store {
 public:
  // serve: start the server first (rank 0). Connecting retries until `timeout` (the server may
  // start later than its clients).
  TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout);
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
