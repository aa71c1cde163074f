// TCP key-value store (see tcp_store.h). Wire format, per request: op byte ('S' set, 'G' get),
// u32 key length, key, and for 'S' u32 value length + value. Replies: 'S' -> one byte 1;
// 'G' -> byte found (0/1), and when found u32 length + value. A get of a missing key answers 0
// at once; the client polls, so the server never blocks on a key.
#include "dist/tcp_store.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "core/error.h"

namespace netspec::dist {
namespace {

using Clock = std::chrono::steady_clock;

bool send_all(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = ::send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool recv_all(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = ::recv(fd, c, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool send_str(int fd, const char* p, uint32_t n) {
  return send_all(fd, &n, sizeof n) && send_all(fd, p, n);
}

bool recv_str(int fd, std::vector<char>& out) {
  uint32_t n = 0;
  if (!recv_all(fd, &n, sizeof n) || n > (1u << 30)) return false;
  out.resize(n);
  return recv_all(fd, out.data(), n);
}

addrinfo* resolve(const std::string& host, int port, bool passive, const std::string& where) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string ps = std::to_string(port);
  int rc =
      ::getaddrinfo(passive && host.empty() ? nullptr : host.c_str(), ps.c_str(), &hints, &res);
  if (rc != 0 || !res)
    fail("dist", "cannot resolve {} (getaddrinfo: {})", where, ::gai_strerror(rc));
  return res;
}

}  // namespace

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) fail("dist", "cannot find a free port on 127.0.0.1 ({})", std::strerror(err));
  return ntohs(a.sin_port);
}

class TcpStoreServer {
 public:
  TcpStoreServer(const std::string& host, int port, const std::string& where) {
    addrinfo* res = resolve(host, port, true, where);
    int err = 0;
    for (addrinfo* a = res; a; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0) continue;
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
        listen_fd_ = fd;
        break;
      }
      err = errno;
      ::close(fd);
    }
    ::freeaddrinfo(res);
    if (listen_fd_ < 0)
      fail("dist", "rank 0 cannot serve the rendezvous store on {} ({}); is the port in use?",
           where, std::strerror(err));
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~TcpStoreServer() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (int fd : conns_) ::shutdown(fd, SHUT_RDWR);
    }
    if (accept_thread_.joinable()) accept_thread_.join();
    for (auto& t : workers_) t.join();
    ::close(listen_fd_);
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lk(mu_);
      if (stop_) {
        ::close(fd);
        break;
      }
      conns_.push_back(fd);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  }
  void serve(int fd) {
    for (;;) {
      char op = 0;
      std::vector<char> key, val;
      if (!recv_all(fd, &op, 1) || !recv_str(fd, key)) break;
      std::string k(key.begin(), key.end());
      if (op == 'S') {
        if (!recv_str(fd, val)) break;
        {
          std::lock_guard<std::mutex> lk(mu_);
          data_[k] = std::move(val);
        }
        char ok = 1;
        if (!send_all(fd, &ok, 1)) break;
      } else if (op == 'G') {
        bool found = false;
        {
          std::lock_guard<std::mutex> lk(mu_);
          auto it = data_.find(k);
          if (it != data_.end()) {
            found = true;
            val = it->second;
          }
        }
        char f = found ? 1 : 0;
        if (!send_all(fd, &f, 1)) break;
        if (found && !send_str(fd, val.data(), static_cast<uint32_t>(val.size()))) break;
      } else {
        break;
      }
    }
    ::shutdown(fd, SHUT_RDWR);
  }

  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<int> conns_;
  std::vector<std::thread> workers_;
  std::map<std::string, std::vector<char>> data_;
};

TcpStore::TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout)
    : where_(fmt::format("{}:{}", host, port)), timeout_(timeout) {
  if (port < 1 || port > 65535) fail("dist", "MASTER_PORT must be in 1..65535 (got {})", port);
  if (serve) server_ = std::make_unique<TcpStoreServer>(host, port, where_);
  const auto deadline = Clock::now() + timeout;
  std::string last_err = "no address";
  while (fd_ < 0) {
    addrinfo* res = resolve(host, port, false, where_);
    for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fd_ = fd;
      } else {
        last_err = std::strerror(errno);
        ::close(fd);
      }
    }
    ::freeaddrinfo(res);
    if (fd_ >= 0) break;
    if (Clock::now() > deadline)
      fail("dist", "cannot reach the rendezvous store of rank 0 at {} within {} s ({})", where_,
           timeout.count() / 1000.0, last_err);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  std::lock_guard<std::mutex> lk(mu_);
  char op = 'S', ok = 0;
  if (!send_all(fd_, &op, 1) || !send_str(fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !send_str(fd_, data.data(), static_cast<uint32_t>(data.size())) || !recv_all(fd_, &ok, 1))
    fail("dist", "the rendezvous store at {} went away while setting '{}' (rank 0 died?)", where_,
         key);
}

bool TcpStore::try_get(const std::string& key, std::vector<char>& out) {
  std::lock_guard<std::mutex> lk(mu_);
  char op = 'G', found = 0;
  if (!send_all(fd_, &op, 1) || !send_str(fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !recv_all(fd_, &found, 1) || (found && !recv_str(fd_, out)))
    fail("dist", "the rendezvous store at {} went away while reading '{}' (rank 0 died?)", where_,
         key);
  return found != 0;
}

std::vector<char> TcpStore::get(const std::string& key) {
  wait({key});
  std::vector<char> v;
  try_get(key, v);
  return v;
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) {
  const auto deadline = Clock::now() + t;
  std::vector<char> tmp;
  for (const auto& k : keys)
    while (!try_get(k, tmp)) {
      if (Clock::now() > deadline)
        fail("dist", "waited {} s for key '{}' in the rendezvous store at {} (a rank missing?)",
             t.count() / 1000.0, k, where_);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace netspec::dist
