// Local address choice for Gloo and the build identity (see net_iface.h).
#include "dist/net_iface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "netspec_version.h"  // generated: NETSPEC_GIT_DESCRIBE

namespace netspec::dist {
namespace {

struct IfAddr {
  std::string name, address;
  bool loopback;
};

std::vector<IfAddr> ipv4_interfaces() {
  std::vector<IfAddr> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    out.push_back({i->ifa_name, buf, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  ::freeifaddrs(list);
  return out;
}

std::string list_interfaces(const std::vector<IfAddr>& ifs) {
  std::string s;
  for (const IfAddr& i : ifs) s += (s.empty() ? "" : ", ") + i.name + " " + i.address;
  return s.empty() ? "none" : s;
}

bool is_loopback_v4(const in_addr& a) { return (ntohl(a.s_addr) >> 24) == 127; }

// The first IPv4 address of `host` (numeric or a name).
in_addr resolve_v4(const std::string& host, const char* where) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res)
    fail(where, "cannot resolve MASTER_ADDR '{}' to an IPv4 address ({})", host,
         rc ? ::gai_strerror(rc) : "no address");
  const in_addr a = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return a;
}

}  // namespace

bool resolves_to_loopback(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  const bool lo = is_loopback_v4(reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr);
  ::freeaddrinfo(res);
  return lo;
}

LocalAddress choose_local_address(const std::string& iface, const std::string& master_addr,
                                  int master_port, bool multi_node, const char* where) {
  const std::vector<IfAddr> ifs = ipv4_interfaces();
  LocalAddress out;
  if (!iface.empty()) {
    for (const IfAddr& i : ifs)
      if (i.name == iface) {
        out = {i.name, i.address, i.loopback, "GLOO_SOCKET_IFNAME"};
        break;
      }
    if (out.address.empty())
      fail(where, "interface '{}' (GLOO_SOCKET_IFNAME / --iface) has no IPv4 address here "
           "(interfaces: {})", iface, list_interfaces(ifs));
  } else {
    // connect() on a UDP socket only picks the route; nothing is sent.
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(master_port));
    to.sin_addr = resolve_v4(master_addr, where);
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in me{};
    socklen_t len = sizeof me;
    const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0;
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (!ok)
      fail(where, "no route to MASTER_ADDR {} ({}); name the interface with --iface or "
           "GLOO_SOCKET_IFNAME", master_addr, std::strerror(err));
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &me.sin_addr, buf, sizeof buf);
    out = {"", buf, is_loopback_v4(me.sin_addr), "route to MASTER_ADDR " + master_addr};
    for (const IfAddr& i : ifs)
      if (i.address == out.address) {
        out.iface = i.name;
        out.loopback = out.loopback || i.loopback;
        break;
      }
    if (out.iface.empty()) out.iface = "?";
  }
  if (multi_node && out.loopback)
    fail(where,
         "this group spans several nodes but the address for its connections is {} on {} ({}), "
         "a loopback address the other nodes cannot reach; give MASTER_ADDR as an address of "
         "rank 0's node that the others route to (not 127.x or a host name mapped to 127.0.1.1), "
         "or name the network interface with --iface / GLOO_SOCKET_IFNAME (interfaces: {})",
         out.address, out.iface, out.how, list_interfaces(ifs));
  return out;
}

std::string build_identity_json() {
  // 64-bit chained splitmix over the executable's 8-byte words (order-sensitive), then the tail.
  uint64_t h = 0x6e65747370656331ULL, size = 0;
  std::ifstream f("/proc/self/exe", std::ios::binary);
  std::vector<char> buf(size_t{1} << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const size_t n = static_cast<size_t>(f.gcount());
    for (size_t i = 0; i < n; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, buf.data() + i, std::min<size_t>(8, n - i));
      h = splitmix64(h ^ w);
    }
    size += n;
  }
  nlohmann::ordered_json j;
  j["version"] = NETSPEC_GIT_DESCRIBE;
#if defined(__VERSION__)
  j["compiler"] = __VERSION__;
#endif
  j["binary"] = fmt::format("{:016x} ({} bytes)", h, size);
  return j.dump();
}

}  // namespace netspec::dist
