// Which local address Gloo's sockets use, and which build this process is (docs/distributed.md).
// A rank's address must be one the other nodes reach: GLOO_SOCKET_IFNAME / `launch --iface`
// names the interface; otherwise the interface the kernel routes MASTER_ADDR through (a UDP
// connect() sends nothing, getsockname() gives the source address, getifaddrs() its interface),
// never the address of this host's name (Debian maps it to 127.0.1.1). A group spanning several
// nodes refuses an address on loopback, naming why, rather than hanging at connect.
#pragma once
#include <string>

namespace netspec::dist {

struct LocalAddress {
  std::string iface;    // "veth0"
  std::string address;  // IPv4, numeric: what Gloo binds and advertises
  bool loopback = false;
  std::string how;  // "GLOO_SOCKET_IFNAME" or "route to MASTER_ADDR"
};

// iface non-empty: that interface's IPv4 address (throws naming the interfaces there are when it
// has none). Else the source address of the route to master_addr:port. multi_node: refuse a
// loopback result (the other nodes could not connect to it). `where` prefixes errors.
LocalAddress choose_local_address(const std::string& iface, const std::string& master_addr,
                                  int master_port, bool multi_node, const char* where);

// True when `host` resolves (IPv4) to an address in 127.0.0.0/8.
bool resolves_to_loopback(const std::string& host);

// This executable: netspec's version, the compiler and a 64-bit hash of /proc/self/exe's bytes,
// as JSON text; ranks compare it at rendezvous so one node cannot run another build.
std::string build_identity_json();

}  // namespace netspec::dist
