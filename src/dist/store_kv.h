// exec::KvStore over the rendezvous TCP store (tcp_store.h), every key under a prefix so that a
// PJRT plugin's keys cannot meet netspec's own (netspec/config/..., netspec/gloo/...). get()
// polls try_get (10 ms growing to 100 ms) instead of a blocking store wait, so one thread's long
// wait never holds the store connection that another thread's put needs.
#pragma once
#include <string>

#include "dist/tcp_store.h"
#include "exec/kv_store.h"

namespace netspec::dist {

class StoreKv final : public exec::KvStore {
 public:
  StoreKv(TcpStore& store, std::string prefix) : store_(store), prefix_(std::move(prefix)) {}
  void put(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::optional<std::string> try_get(const std::string& key) override;

 private:
  TcpStore& store_;
  std::string prefix_;
};

}  // namespace netspec::dist
