// The key-value store XLA's multi-node PJRT client meets the other nodes through: StoreKv over
// the rendezvous TCP store (values cross clients, keys live under netspec/pjrt/, try_get does
// not wait, get times out naming the key, one thread's wait does not block another's put), and
// PJRT_Client_Create's kv_get / kv_try_get / kv_put callbacks over it, called as the plugin
// calls them (argument structs, callback_error for failures, value + deleter handed over).
#include "dist/store_kv.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "dist/tcp_store.h"
#include "tests/error_of.h"
#if NETSPEC_HAVE_PJRT
#include "exec/pjrt/pjrt_kv.h"
#endif

namespace netspec::dist {
namespace {

using namespace std::chrono_literals;

TEST(StoreKv, ValuesCrossClientsUnderThePrefixAndWaitsAreBounded) {
  const int port = free_loopback_port();
  TcpStore server("127.0.0.1", port, true, 5000ms, "t");
  TcpStore client("127.0.0.1", port, false, 5000ms, "t");
  StoreKv a(server, "netspec/pjrt/"), b(client, "netspec/pjrt/");
  a.put("topology/0", std::string("gpu\0x", 5));  // binary values survive
  EXPECT_EQ(b.get("topology/0", 1000ms), std::string("gpu\0x", 5));
  std::vector<char> raw;
  ASSERT_TRUE(client.try_get("netspec/pjrt/topology/0", raw));  // the prefix is in the store
  EXPECT_FALSE(client.try_get("topology/0", raw));
  EXPECT_FALSE(b.try_get("missing").has_value());
  const auto t0 = std::chrono::steady_clock::now();
  std::string e = test_util::error_of([&] { b.get("missing", 300ms); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_NE(e.find("'netspec/pjrt/missing' was not set within 300 ms"), std::string::npos) << e;
  // A get waiting in one thread does not hold the connection another thread's put needs.
  auto waiting = std::async(std::launch::async, [&] { return b.get("late", 5000ms); });
  std::this_thread::sleep_for(100ms);
  const auto t1 = std::chrono::steady_clock::now();
  b.put("late", "v");
  EXPECT_EQ(waiting.get(), "v");
  EXPECT_LT(std::chrono::steady_clock::now() - t1, 2s);
}

#if NETSPEC_HAVE_PJRT
// The plugin's PJRT_CallbackError: records the code and message; returns a non-null marker.
PJRT_Error_Code last_code;
std::string last_message;
PJRT_Error* record_error(PJRT_Error_Code code, const char* msg, size_t size) {
  last_code = code;
  last_message.assign(msg, size);
  return reinterpret_cast<PJRT_Error*>(&last_code);
}

TEST(StoreKv, PjrtCallbacksAnswerAsThePluginExpects) {
  const int port = free_loopback_port();
  TcpStore server("127.0.0.1", port, true, 5000ms, "t");
  TcpStore client("127.0.0.1", port, false, 5000ms, "t");
  StoreKv node0(server, "netspec/pjrt/"), node1(client, "netspec/pjrt/");
  PJRT_Client_Create_Args create{};
  exec::pjrt::install_kv_callbacks(create, &node0);
  EXPECT_EQ(create.kv_put_user_arg, &node0);
  EXPECT_EQ(create.kv_try_get_user_arg, &node0);
  PJRT_CallbackError on_error = &record_error;

  // Node 0 puts (the plugin's key and value need not outlive the call).
  std::string key = "nccl_unique_id:0", value("abc\0def", 7);
  PJRT_KeyValuePutCallback_Args put{};
  put.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
  put.key = key.data();
  put.key_size = key.size();
  put.value = value.data();
  put.value_size = 7;
  put.callback_error = &on_error;
  put.user_arg = create.kv_put_user_arg;
  EXPECT_EQ(create.kv_put_callback(&put), nullptr);

  // Node 1 gets it through its own store connection: a copy the plugin frees with the deleter.
  PJRT_KeyValueGetCallback_Args get{};
  get.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
  get.key = key.data();
  get.key_size = key.size();
  get.timeout_in_ms = 2000;
  get.callback_error = &on_error;
  get.user_arg = &node1;
  ASSERT_EQ(exec::pjrt::kv_get(&get), nullptr);
  EXPECT_EQ(std::string(get.value, get.value_size), std::string("abc\0def", 7));
  ASSERT_NE(get.value_deleter_callback, nullptr);
  get.value_deleter_callback(get.value);

  PJRT_KeyValueTryGetCallback_Args tg{};
  tg.struct_size = PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE;
  tg.key = key.data();
  tg.key_size = key.size();
  tg.callback_error = &on_error;
  tg.user_arg = &node1;
  ASSERT_EQ(exec::pjrt::kv_try_get(&tg), nullptr);
  EXPECT_EQ(std::string(tg.value, tg.value_size), std::string("abc\0def", 7));
  tg.value_deleter_callback(tg.value);

  // Not set: try_get answers NOT_FOUND at once, get DEADLINE_EXCEEDED after its timeout.
  std::string missing = "nccl_unique_id:9";
  tg.key = missing.data();
  tg.key_size = missing.size();
  tg.value = nullptr;
  EXPECT_NE(exec::pjrt::kv_try_get(&tg), nullptr);
  EXPECT_EQ(last_code, PJRT_Error_Code_NOT_FOUND);
  EXPECT_NE(last_message.find("nccl_unique_id:9"), std::string::npos) << last_message;
  EXPECT_EQ(tg.value, nullptr);
  get.key = missing.data();
  get.key_size = missing.size();
  get.timeout_in_ms = 200;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(exec::pjrt::kv_get(&get), nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_EQ(last_code, PJRT_Error_Code_DEADLINE_EXCEEDED);
  EXPECT_NE(last_message.find("'netspec/pjrt/nccl_unique_id:9' was not set within 200 ms"),
            std::string::npos)
      << last_message;
}
#endif

}  // namespace
}  // namespace netspec::dist
