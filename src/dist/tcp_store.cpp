// TCP key-value store (see tcp_store.h). Wire format, per request: op byte ('A' auth, 'S' set,
// 'G' get), u32 length + key (the token for 'A'), and for 'S' u32 length + value. Replies:
// 'A' -> one byte 1 (0, then close: wrong token); 'S' -> one byte 1; 'G' -> byte found (0/1),
// and when found u32 length + value. A get of a missing key answers 0 at once; the client
// polls, so the server never blocks on a key. The server is one thread polling every
// connection: a connection that breaks a bound or the protocol is closed, never the server.
#include "dist/tcp_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "core/error.h"
#include "exec/replicas.h"

namespace netspec::dist {
namespace {

using Clock = std::chrono::steady_clock;

// Connections that have not shown the token yet: the oldest is dropped for a new one, so idle
// connections cannot lock the ranks out; each must show the token within kAuthWindow.
constexpr size_t kMaxPending = 64;
constexpr size_t kMaxClients = exec::kMaxReplicas + 64;  // ranks (each holds one)
constexpr auto kAuthWindow = std::chrono::seconds(10);

int remaining_ms(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1 << 30));
}

enum class Io { kOk, kClosed, kTimeout };

Io send_all(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = ::send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Io::kTimeout;  // SO_SNDTIMEO
    if (k <= 0) return Io::kClosed;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return Io::kOk;
}

// Reads n bytes, waiting at most until `deadline` in all.
Io recv_all(int fd, void* p, size_t n, Clock::time_point deadline) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    pollfd q{fd, POLLIN, 0};
    int r = ::poll(&q, 1, remaining_ms(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Io::kTimeout;
    if (r < 0) return Io::kClosed;
    ssize_t k = ::recv(fd, c, n, 0);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) return Io::kClosed;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return Io::kOk;
}

// A length-prefixed value of at most `bound` bytes; the buffer grows with the bytes that arrive,
// never ahead of them.
Io recv_str(int fd, std::vector<char>& out, size_t bound, Clock::time_point deadline) {
  uint32_t n = 0;
  if (Io r = recv_all(fd, &n, sizeof n, deadline); r != Io::kOk) return r;
  if (n > bound) return Io::kClosed;
  out.clear();
  while (out.size() < n) {
    const size_t at = out.size(), chunk = std::min<size_t>(n - at, 1 << 16);
    out.resize(at + chunk);
    if (Io r = recv_all(fd, out.data() + at, chunk, deadline); r != Io::kOk) return r;
  }
  return Io::kOk;
}

std::string framed(char op, std::string_view key, const std::vector<char>* value = nullptr) {
  std::string m(1, op);
  auto put = [&](const char* p, size_t n) {
    const auto len = static_cast<uint32_t>(n);
    m.append(reinterpret_cast<const char*>(&len), sizeof len);
    m.append(p, n);
  };
  put(key.data(), key.size());
  if (value) put(value->data(), value->size());
  return m;
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

// Equal strings, in time that depends on their lengths only.
bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char d = 0;
  for (size_t i = 0; i < a.size(); ++i) d |= static_cast<unsigned char>(a[i] ^ b[i]);
  return d == 0;
}

}  // namespace

size_t parse_store_request(std::string_view buf, StoreRequest& out) {
  if (buf.empty()) return 0;
  const char op = buf[0];
  if (op != 'A' && op != 'S' && op != 'G')
    fail("dist", "rendezvous store: unknown request byte 0x{:02x} (expected 'A', 'S' or 'G')",
         static_cast<unsigned char>(op));
  size_t at = 1;
  // One length-prefixed field; false: not all there yet.
  auto field = [&](size_t bound, const char* what, auto& dst) {
    uint32_t n = 0;
    if (buf.size() < at + sizeof n) return false;
    std::memcpy(&n, buf.data() + at, sizeof n);
    if (n > bound)
      fail("dist", "rendezvous store: {} of {} bytes (expected at most {})", what, n, bound);
    if (buf.size() < at + sizeof n + n) return false;
    dst.assign(buf.data() + at + sizeof n, buf.data() + at + sizeof n + n);
    at += sizeof n + n;
    return true;
  };
  out.op = op;
  if (!field(op == 'A' ? kMaxStoreToken : kMaxStoreKey, op == 'A' ? "a token" : "a key", out.key))
    return 0;
  if (op == 'S' && !field(kMaxStoreValue, "a value", out.value)) return 0;
  if (op != 'S') out.value.clear();
  return at;
}

std::string random_token() {
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t k = ::getrandom(b + got, sizeof b - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) fail("dist", "cannot draw a random token ({})", std::strerror(errno));
    got += static_cast<size_t>(k);
  }
  std::string s;
  for (unsigned char c : b) s += fmt::format("{:02x}", c);
  return s;
}

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
  TcpStoreServer(const std::string& host, int port, const std::string& where, std::string token)
      : token_(std::move(token)) {
    addrinfo* res = resolve(host, port, true, where);
    int err = 0;
    for (addrinfo* a = res; a; a = a->ai_next) {
      int fd =
          ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
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
    thread_ = std::thread([this] { loop(); });
  }
  ~TcpStoreServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (auto& c : conns_) ::close(c.fd);
    ::close(listen_fd_);
  }

 private:
  struct Conn {
    int fd;
    bool authed = false;
    Clock::time_point since;
    std::string in, out;
  };

  void loop() {
    while (!stop_) {
      try {
        step();
      } catch (const std::exception& e) {  // e.g. bad_alloc outside one connection: go on
        note(fmt::format("serving failed once ({})", e.what()));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }

  void step() {
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    for (const Conn& c : conns_)
      fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
    if (::poll(fds.data(), fds.size(), 100) < 0) return;
    std::vector<bool> keep(conns_.size(), true);
    for (size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = conns_[i];
      try {
        const short ev = fds[i + 1].revents;
        if (ev & (POLLIN | POLLHUP | POLLERR)) keep[i] = on_readable(c);
        if (keep[i] && !c.out.empty()) keep[i] = flush(c);
        if (keep[i] && !c.authed && Clock::now() - c.since > kAuthWindow) {
          note("a connection did not present the run's token in time");
          keep[i] = false;
        }
      } catch (const std::exception& e) {  // a malformed request, a bound broken, bad_alloc
        note(e.what());
        keep[i] = false;
      }
    }
    size_t w = 0;
    for (size_t i = 0; i < conns_.size(); ++i)
      if (keep[i])
        conns_[w++] = std::move(conns_[i]);
      else
        ::close(conns_[i].fd);
    conns_.resize(w);
    if (fds[0].revents & POLLIN) accept_new();
  }

  void accept_new() {
    for (int n = 0; n < 64; ++n) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of descriptors: make room by dropping the oldest connection without the token.
        if ((errno == EMFILE || errno == ENFILE) && !drop_oldest_pending())
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return;
      }
      const size_t pending =
          std::count_if(conns_.begin(), conns_.end(), [](const Conn& c) { return !c.authed; });
      if (pending >= kMaxPending) drop_oldest_pending();
      if (conns_.size() >= kMaxClients + kMaxPending) {
        ::close(fd);
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      conns_.push_back(Conn{fd, false, Clock::now(), {}, {}});
    }
  }

  bool drop_oldest_pending() {
    for (size_t i = 0; i < conns_.size(); ++i)
      if (!conns_[i].authed) {
        ::close(conns_[i].fd);
        conns_.erase(conns_.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
      }
    return false;
  }

  // Reads what has arrived and answers every complete request; false: close the connection.
  bool on_readable(Conn& c) {
    char buf[1 << 16];
    ssize_t k = ::recv(c.fd, buf, sizeof buf, 0);
    if (k < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    if (k <= 0) return false;
    c.in.append(buf, static_cast<size_t>(k));
    if (!c.authed && c.in[0] != 'A') {
      note("a connection sent a request before the run's token");
      return false;
    }
    StoreRequest req;
    size_t used;
    while ((used = parse_store_request(c.in, req)) > 0) {
      c.in.erase(0, used);
      if (!handle(c, req)) return false;
    }
    return c.out.size() <= 2 * kMaxStoreValue;  // a client that does not read its answers
  }

  bool handle(Conn& c, StoreRequest& r) {
    if (r.op == 'A') {
      if (!same_token(r.key, token_)) {
        note("a connection presented a wrong token");
        c.out.push_back(0);
        flush(c);
        return false;
      }
      c.authed = true;
      c.out.push_back(1);
      return true;
    }
    if (!c.authed) return false;
    if (r.op == 'S') {
      auto it = data_.find(r.key);
      const size_t old = it == data_.end() ? 0 : it->second.size();
      if (bytes_ - old + r.value.size() > kMaxStoreBytes ||
          (it == data_.end() && data_.size() >= kMaxStoreKeys)) {
        note(fmt::format("the store is full ({} keys, {} bytes)", data_.size(), bytes_));
        return false;
      }
      bytes_ = bytes_ - old + r.value.size();
      data_[r.key] = std::move(r.value);
      c.out.push_back(1);
      return true;
    }
    auto it = data_.find(r.key);  // 'G'
    c.out.push_back(it == data_.end() ? 0 : 1);
    if (it != data_.end()) {
      const auto n = static_cast<uint32_t>(it->second.size());
      c.out.append(reinterpret_cast<const char*>(&n), sizeof n);
      c.out.append(it->second.data(), it->second.size());
    }
    return true;
  }

  // Sends what the socket takes now; false when the peer is gone.
  bool flush(Conn& c) {
    while (!c.out.empty()) {
      ssize_t k = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (k <= 0) return false;
      c.out.erase(0, static_cast<size_t>(k));
    }
    return true;
  }

  // Says why a connection was closed: the first few times, then how many more.
  void note(const std::string& why) {
    if (++notes_ <= 5)
      std::fprintf(stderr, "[dist] rank 0's rendezvous store closed a connection: %s\n",
                   why.c_str());
    else if (notes_ == 6)
      std::fprintf(stderr, "[dist] rank 0's rendezvous store: more closed connections follow\n");
  }

  std::string token_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<Conn> conns_;  // touched by thread_ alone
  std::map<std::string, std::vector<char>> data_;
  size_t bytes_ = 0;
  int notes_ = 0;
};

TcpStore::TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout,
                   const std::string& token)
    : where_(fmt::format("{}:{}", host, port)), timeout_(timeout) {
  if (port < 1 || port > 65535) fail("dist", "MASTER_PORT must be in 1..65535 (got {})", port);
  if (token.size() > kMaxStoreToken)
    fail("dist", "NETSPEC_DIST_TOKEN has {} characters (expected at most {})", token.size(),
         kMaxStoreToken);
  if (serve) server_ = std::make_unique<TcpStoreServer>(host, port, where_, token);
  const auto deadline = Clock::now() + timeout;
  const std::string hello = framed('A', token);
  std::string last_err = "no address";
  while (fd_ < 0) {
    // Freed on every path, the refusals thrown from the loop included.
    const std::unique_ptr<addrinfo, void (*)(addrinfo*)> res(resolve(host, port, false, where_),
                                                             ::freeaddrinfo);
    for (addrinfo* a = res.get(); a && fd_ < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      // connect and send wait at most until the deadline (SO_SNDTIMEO bounds both).
      const int ms = std::max(1, remaining_ms(deadline));
      timeval tv{ms / 1000, (ms % 1000) * 1000};
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        last_err = std::strerror(errno);
        ::close(fd);
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      char ok = 0;
      Io r = send_all(fd, hello.data(), hello.size());
      if (r == Io::kOk) r = recv_all(fd, &ok, 1, deadline);
      if (r == Io::kOk && ok == 1) {
        fd_ = fd;
        break;
      }
      ::close(fd);
      if (r == Io::kOk)
        fail("dist",
             "the rendezvous store at {} refused this rank's token (NETSPEC_DIST_TOKEN differs "
             "from rank 0's: start the ranks with `netspec launch` or give each the same token)",
             where_);
      if (r == Io::kTimeout)
        fail("dist",
             "the rendezvous store at {} accepted the connection but did not answer within {} s "
             "(is another program listening on that port?)",
             where_, timeout.count() / 1000.0);
      last_err = "the connection was closed before the token was accepted";  // retried
    }
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

namespace {

[[noreturn]] void store_failed(Io r, const std::string& where, const char* doing,
                               const std::string& key, std::chrono::milliseconds timeout) {
  if (r == Io::kTimeout)
    fail("dist", "the rendezvous store at {} did not answer within {} s while {} '{}'", where,
         timeout.count() / 1000.0, doing, key);
  fail("dist", "the rendezvous store at {} went away while {} '{}' (rank 0 died?)", where, doing,
       key);
}

}  // namespace

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  if (key.size() > kMaxStoreKey || data.size() > kMaxStoreValue)
    fail("dist", "rendezvous store: '{}' is too large ({} + {} bytes, expected at most {} + {})",
         key.substr(0, 64), key.size(), data.size(), kMaxStoreKey, kMaxStoreValue);
  std::lock_guard<std::mutex> lk(mu_);
  const auto deadline = Clock::now() + timeout_;
  const std::string m = framed('S', key, &data);
  char ok = 0;
  Io r = send_all(fd_, m.data(), m.size());
  if (r == Io::kOk) r = recv_all(fd_, &ok, 1, deadline);
  if (r != Io::kOk) store_failed(r, where_, "setting", key, timeout_);
}

bool TcpStore::try_get(const std::string& key, std::vector<char>& out) {
  if (key.size() > kMaxStoreKey)
    fail("dist", "rendezvous store: a key of {} bytes (expected at most {})", key.size(),
         kMaxStoreKey);
  std::lock_guard<std::mutex> lk(mu_);
  const auto deadline = Clock::now() + timeout_;
  const std::string m = framed('G', key);
  char found = 0;
  Io r = send_all(fd_, m.data(), m.size());
  if (r == Io::kOk) r = recv_all(fd_, &found, 1, deadline);
  if (r == Io::kOk && found) r = recv_str(fd_, out, kMaxStoreValue, deadline);
  if (r != Io::kOk) store_failed(r, where_, "reading", key, timeout_);
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
