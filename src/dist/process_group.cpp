// Rendezvous, config agreement and the Gloo communicator (see process_group.h).
#include "dist/process_group.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.h"
#include "dist/net_iface.h"
#include "dist/store_kv.h"
#include "dist/tcp_store.h"

namespace netspec::dist {
namespace {

template <class T>
void sum_into(void* c, const void* a, const void* b, size_t n) {
  auto* o = static_cast<T*>(c);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
}

// all_reduce / exchange over a Gloo context; every failure (a peer closed, a timeout) becomes a
// netspec Error naming this rank.
class GlooComm final : public exec::Communicator {
 public:
  // addresses[r]: rank r's connection address, to name the rank a transport error came from;
  // store: the rendezvous store (outlives this), through which the ranks that time out find
  // the one that did not.
  GlooComm(std::shared_ptr<gloo::Context> ctx, std::chrono::milliseconds timeout,
           std::vector<std::string> addresses, TcpStore* store)
      : ctx_(std::move(ctx)), timeout_(timeout), addresses_(std::move(addresses)), store_(store) {}
  int num_replicas() const override { return ctx_->size; }

  std::optional<std::vector<Tensor>> sum_all(int, const std::vector<Tensor>& xs) override {
    std::vector<Tensor> out;
    out.reserve(xs.size());
    for (const Tensor& t : xs) out.push_back(t.clone());
    // One allreduce per dtype over the tensors packed end to end.
    std::map<DType, std::vector<size_t>> by_type;
    for (size_t i = 0; i < out.size(); ++i) by_type[out[i].dtype()].push_back(i);
    for (auto& [dt, idx] : by_type) {
      size_t bytes = 0;
      for (size_t i : idx) bytes += out[i].nbytes();
      std::vector<uint8_t> buf(bytes);
      size_t off = 0;
      for (size_t i : idx) {
        std::memcpy(buf.data() + off, out[i].raw(), out[i].nbytes());
        off += out[i].nbytes();
      }
      guarded("all_reduce", [&] {
        switch (dt) {
          case DType::kF32:
            reduce<float>(buf);
            break;
          case DType::kF64:
            reduce<double>(buf);
            break;
          case DType::kI32:
            reduce<int32_t>(buf);
            break;
          case DType::kI64:
            reduce<int64_t>(buf);
            break;
          default:
            fail("all_reduce", "cannot sum {} across processes (f32, f64, i32, i64 only)",
                 dtype_name(dt));
        }
      });
      off = 0;
      for (size_t i : idx) {
        std::memcpy(out[i].raw(), buf.data() + off, out[i].nbytes());
        off += out[i].nbytes();
      }
    }
    return out;
  }

  // Generic combiners: every rank's tensors (same types on every rank: one module).
  std::vector<std::vector<Tensor>> exchange(int, std::vector<Tensor> mine) override {
    size_t bytes = 0;
    for (const Tensor& t : mine) bytes += t.nbytes();
    std::vector<uint8_t> in(bytes), all(bytes * static_cast<size_t>(ctx_->size));
    size_t off = 0;
    for (const Tensor& t : mine) {
      std::memcpy(in.data() + off, t.raw(), t.nbytes());
      off += t.nbytes();
    }
    if (bytes > 0)
      guarded("all_reduce", [&] {
        gloo::AllgatherOptions o(ctx_);
        o.setInput(in.data(), bytes);
        o.setOutput(all.data(), all.size());
        o.setTag(next_tag());
        o.setTimeout(timeout_);
        gloo::allgather(o);
      });
    std::vector<std::vector<Tensor>> res(static_cast<size_t>(ctx_->size));
    for (size_t r = 0; r < res.size(); ++r) {
      off = r * bytes;
      for (const Tensor& t : mine) {
        Tensor c(t.dtype(), t.shape());
        std::memcpy(c.raw(), all.data() + off, t.nbytes());
        off += t.nbytes();
        res[r].push_back(std::move(c));
      }
    }
    return res;
  }

 private:
  template <class T>
  void reduce(std::vector<uint8_t>& buf) {
    if (buf.empty()) return;
    gloo::AllreduceOptions o(ctx_);
    o.setOutput(reinterpret_cast<T*>(buf.data()), buf.size() / sizeof(T));
    o.setReduceFunction(&sum_into<T>);
    o.setTag(next_tag());
    o.setTimeout(timeout_);
    gloo::allreduce(o);
  }
  uint32_t next_tag() { return tag_++ & 0x7fffffffu; }
  template <class F>
  void guarded(const char* what, F&& f) {
    try {
      f();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      std::string lost = peer_ranks(e.what());
      // More than two ranks: a closed connection may come from a peer that timed out itself.
      if (ctx_->size > 2) lost = silent_ranks(tag_ - 1, lost);  // the failed collective's tag
      fail("dist", "rank {} of {}: {} across processes failed after at most {} s: {} ({})",
           ctx_->rank, ctx_->size, what, timeout_.count() / 1000.0, e.what(), lost);
    }
  }
  // Gloo names the peer of a failed pair as "[address]:port": the ranks at that address.
  std::string peer_ranks(const std::string& msg) const {
    for (size_t at = msg.find('['); at != std::string::npos; at = msg.find('[', at + 1)) {
      const size_t end = msg.find(']', at);
      if (end == std::string::npos || msg.compare(end, 2, "]:") != 0) continue;
      const std::string ip = msg.substr(at + 1, end - at - 1);
      std::vector<int> ranks;
      for (size_t r = 0; r < addresses_.size(); ++r)
        if (addresses_[r] == ip && static_cast<int>(r) != ctx_->rank)
          ranks.push_back(static_cast<int>(r));
      if (ranks.size() == 1)
        return fmt::format("lost rank {} on {}: it died, hung or was stopped", ranks[0], ip);
      if (!ranks.empty())
        return fmt::format("lost one of ranks {} on {}: it died, hung or was stopped",
                           fmt::join(ranks, ", "), ip);
    }
    if (ctx_->size == 2)  // a timeout names no peer; with two ranks it is the other one
      return fmt::format("lost rank {} on {}: it died, hung or was stopped", 1 - ctx_->rank,
                         addresses_.at(static_cast<size_t>(1 - ctx_->rank)));
    return "";
  }
  // More than two ranks: a timeout names no peer, and a closed connection may come from a rank
  // that timed out itself (Gloo closes a pair that timed out). Every rank whose collective `tag`
  // failed says so in the store and waits up to half the timeout (1-10 s) for the others: a
  // live rank in that collective fails within that window too, so the ranks that never report
  // are the lost ones (died, hung or stopped). Rank 0 serves the store, so it stays until the
  // ranks that reported have read (each marks itself done); a store that does not answer names
  // rank 0. `fallback` (what the transport error said) when every other rank reported.
  std::string silent_ranks(uint32_t tag, const std::string& fallback) const {
    using namespace std::chrono;
    const std::string prefix = fmt::format("netspec/failed/{}/", tag);
    const auto grace = std::clamp<milliseconds>(timeout_ / 2, milliseconds(1000), seconds(10));
    std::vector<int> silent;
    try {
      // The ranks of `among` that have not set prefix + what + rank within the window.
      auto poll = [&](const std::string& what, const std::vector<int>& among) {
        const auto until = steady_clock::now() + grace;
        std::vector<int> left;
        for (;;) {
          left.clear();
          std::vector<char> v;
          for (int r : among)
            if (!store_->try_get(prefix + what + std::to_string(r), v)) left.push_back(r);
          if (left.empty() || steady_clock::now() >= until) return left;
          std::this_thread::sleep_for(milliseconds(50));
        }
      };
      std::vector<int> others;
      for (int r = 0; r < ctx_->size; ++r)
        if (r != ctx_->rank) others.push_back(r);
      store_->set(prefix + std::to_string(ctx_->rank), {'1'});
      silent = poll("", others);
      store_->set(prefix + "done/" + std::to_string(ctx_->rank), {'1'});
      if (ctx_->rank == 0) {  // the reporters finish their own windows, then the store may go
        std::vector<int> reporters;
        for (int r : others)
          if (std::find(silent.begin(), silent.end(), r) == silent.end()) reporters.push_back(r);
        poll("done/", reporters);
      }
    } catch (const std::exception&) {
      return fmt::format(
          "lost rank 0 on {} or the link to it: its rendezvous store does not answer; it died, "
          "hung or was stopped",
          addresses_.at(0));
    }
    if (silent.empty())
      return fallback.empty() ? "every other rank failed in this collective too: none was lost; "
                                "it took longer than NETSPEC_DIST_TIMEOUT"
                              : fallback;
    std::vector<std::string> named;
    for (int r : silent)
      named.push_back(fmt::format("{} on {}", r, addresses_.at(static_cast<size_t>(r))));
    return fmt::format(
        "lost rank{} {}: {} not report this failure within {} s; died, hung or "
        "stopped",
        silent.size() > 1 ? "s" : "", fmt::join(named, ", "),
        silent.size() > 1 ? "they did" : "it did", duration<double>(grace).count());
  }

  std::shared_ptr<gloo::Context> ctx_;
  std::chrono::milliseconds timeout_;
  std::vector<std::string> addresses_;
  TcpStore* store_;
  uint32_t tag_ = 1;
};

class GlooGroup final : public ProcessGroup {
 public:
  GlooGroup(const DistEnv& env, const std::string& fingerprint) : env_(env) {
    store_ = std::make_unique<TcpStore>(env.master_addr, env.master_port, env.rank == 0,
                                        env.timeout, env.token);
    kv_ = std::make_unique<StoreKv>(*store_, "netspec/pjrt/");
    check_fingerprints(fingerprint);
    const LocalAddress local =
        choose_local_address(env.iface, env.master_addr, env.master_port, env.multi_node(), "dist");
    if (!local.loopback)  // the address the others connect to: in every rank's log
      std::fprintf(stderr, "[dist] rank %d of %d: connections on %s %s (%s)\n", env.rank, env.world,
                   local.iface.c_str(), local.address.c_str(), local.how.c_str());
    // Every rank's address, so a transport error can name the rank behind it.
    store_->set(fmt::format("netspec/addr/{}", env.rank),
                std::vector<char>(local.address.begin(), local.address.end()));
    std::vector<std::string> addresses;
    for (int r = 0; r < env.world; ++r) {
      std::vector<char> a = store_->get(fmt::format("netspec/addr/{}", r));
      addresses.emplace_back(a.begin(), a.end());
    }
    gloo::transport::tcp::attr attr;
    attr.hostname = local.address;  // numeric: Gloo binds and advertises exactly this address
    try {
      auto dev = gloo::transport::tcp::CreateDevice(attr);
      auto ctx = std::make_shared<gloo::rendezvous::Context>(env.rank, env.world);
      ctx->setTimeout(env.timeout);
      gloo::rendezvous::PrefixStore prefixed("netspec/gloo", *store_);
      ctx->connectFullMesh(prefixed, dev);
      comm_ = std::make_unique<GlooComm>(ctx, env.timeout, std::move(addresses), store_.get());
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail("dist", "rank {} of {}: connecting the Gloo mesh failed: {}", env.rank, env.world,
           e.what());
    }
  }
  exec::Communicator& comm() override { return *comm_; }
  const DistEnv& env() const override { return env_; }
  exec::KvStore& kv() override { return *kv_; }

 private:
  // Every rank publishes its fingerprint and compares them all with rank 0's, so every rank
  // (rank 0 included) refuses a mismatch by the same message instead of waiting forever.
  void check_fingerprints(const std::string& run) {
    // The build goes first: a rank of another build is named as such, not by a config field.
    const std::string mine =
        fmt::format(R"({{"build": {}, "run": {}}})", build_identity_json(), run);
    store_->set(fmt::format("netspec/config/{}", env_.rank),
                std::vector<char>(mine.begin(), mine.end()));
    std::vector<char> r0 = store_->get("netspec/config/0");
    const std::string zero(r0.begin(), r0.end());
    std::string error;
    for (int r = 1; r < env_.world && error.empty(); ++r) {
      std::vector<char> v = store_->get(fmt::format("netspec/config/{}", r));
      std::string d = json_difference(std::string(v.begin(), v.end()), zero);
      if (d.rfind("run.", 0) == 0) d = d.substr(4);  // the caller's own field names
      if (d.rfind("build.", 0) == 0)
        error = fmt::format(
            "rank {} runs another netspec build than rank 0 ({}: rank {} vs rank 0); every node "
            "must run the same netspec binary; refusing to join",
            r, d, r);
      else if (!d.empty())
        error = fmt::format(
            "rank {} was started with another config or net than rank 0 ({}: rank {} vs rank 0); "
            "refusing to join",
            r, d, r);
    }
    // Rank 0 serves the store: it stays until every rank has read what it needs.
    store_->set(fmt::format("netspec/config_read/{}", env_.rank), {'1'});
    if (env_.rank == 0)
      for (int r = 1; r < env_.world; ++r) store_->wait({fmt::format("netspec/config_read/{}", r)});
    if (!error.empty()) fail("dist", "{}", error);
  }

  DistEnv env_;
  std::unique_ptr<TcpStore> store_;
  std::unique_ptr<StoreKv> kv_;
  std::unique_ptr<GlooComm> comm_;
};

int env_int(const char* name, const char* value, int lo, int hi) {
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (!*value || *end || v < lo || v > hi)
    fail("dist", "environment variable {} must be an integer in {}..{} (got '{}')", name, lo, hi,
         value);
  return static_cast<int>(v);
}

void diff_json(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
               std::string& out) {
  if (!out.empty()) return;
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end() && out.empty(); ++it) {
      std::string p = path.empty() ? it.key() : path + "." + it.key();
      if (!b.contains(it.key()))
        out = fmt::format("{}: {} vs absent", p, it.value().dump());
      else
        diff_json(it.value(), b.at(it.key()), p, out);
    }
    for (auto it = b.begin(); it != b.end() && out.empty(); ++it)
      if (!a.contains(it.key()))
        out = fmt::format("{}: absent vs {}", path.empty() ? it.key() : path + "." + it.key(),
                          it.value().dump());
    return;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size() && out.empty(); ++i)
      diff_json(a[i], b[i], fmt::format("{}[{}]", path, i), out);
    return;
  }
  if (a != b) out = fmt::format("{}: {} vs {}", path.empty() ? "(root)" : path, a.dump(), b.dump());
}

}  // namespace

std::string json_difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  nlohmann::json ja = nlohmann::json::parse(a, nullptr, false);
  nlohmann::json jb = nlohmann::json::parse(b, nullptr, false);
  if (ja.is_discarded() || jb.is_discarded()) return "(unparsable fingerprint)";
  std::string out;
  diff_json(ja, jb, "", out);
  return out;
}

std::optional<DistEnv> dist_env_from_environment() {
  const char* ws = std::getenv("WORLD_SIZE");
  if (!ws) return std::nullopt;
  DistEnv e;
  e.world = env_int("WORLD_SIZE", ws, 1, exec::kMaxReplicas);
  auto need = [](const char* n) {
    const char* v = std::getenv(n);
    if (!v) fail("dist", "WORLD_SIZE is set but {} is not (torchrun convention)", n);
    return v;
  };
  e.rank = env_int("RANK", need("RANK"), 0, e.world - 1);
  e.master_addr = need("MASTER_ADDR");
  e.master_port = env_int("MASTER_PORT", need("MASTER_PORT"), 1, 65535);
  if (const char* lr = std::getenv("LOCAL_RANK"))
    e.local_rank = env_int("LOCAL_RANK", lr, 0, 1 << 20);
  if (const char* lw = std::getenv("LOCAL_WORLD_SIZE"))
    e.local_world = env_int("LOCAL_WORLD_SIZE", lw, 1, e.world);
  if (const char* i = std::getenv("GLOO_SOCKET_IFNAME")) e.iface = i;
  const char* token = std::getenv("NETSPEC_DIST_TOKEN");
  if (e.world > 1 && (!token || !*token))
    fail("dist",
         "WORLD_SIZE is {} but NETSPEC_DIST_TOKEN is not set: every rank must present the run's "
         "token to rank 0's rendezvous store (`netspec launch` sets one; by hand, give every rank "
         "the same secret, e.g. NETSPEC_DIST_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' '))",
         e.world);
  if (token) e.token = token;
  if (const char* t = std::getenv("NETSPEC_DIST_TIMEOUT"))
    e.timeout =
        std::chrono::milliseconds(1000LL * env_int("NETSPEC_DIST_TIMEOUT", t, 1, 24 * 3600));
  return e;
}

std::unique_ptr<ProcessGroup> ProcessGroup::join(const DistEnv& env,
                                                 const std::string& fingerprint) {
  // Gloo writes to its peers' sockets without MSG_NOSIGNAL: when a peer rank dies, the default
  // SIGPIPE would kill this rank silently (exit 141) instead of letting the write fail with
  // EPIPE, which Gloo reports as an error we name. Ranks ignore SIGPIPE from here on.
  std::signal(SIGPIPE, SIG_IGN);
  return std::make_unique<GlooGroup>(env, fingerprint);
}

}  // namespace netspec::dist
