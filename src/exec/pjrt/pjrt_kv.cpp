#include "exec/pjrt/pjrt_kv.h"

#include <cstring>
#include <exception>
#include <string>

namespace netspec::exec::pjrt {
namespace {

void delete_value(char* v) { delete[] v; }

// A new[] copy of s the plugin frees through delete_value.
char* copy_out(const std::string& s) {
  char* v = new char[s.size() + 1];
  std::memcpy(v, s.data(), s.size());
  v[s.size()] = '\0';
  return v;
}

PJRT_Error* report(PJRT_CallbackError* err, PJRT_Error_Code code, const std::string& msg) {
  return err ? (*err)(code, msg.data(), msg.size()) : nullptr;
}

}  // namespace

PJRT_Error* kv_get(PJRT_KeyValueGetCallback_Args* a) {
  try {
    auto* kv = static_cast<KvStore*>(a->user_arg);
    const std::string v =
        kv->get(std::string(a->key, a->key_size), std::chrono::milliseconds(a->timeout_in_ms));
    a->value = copy_out(v);
    a->value_size = v.size();
    a->value_deleter_callback = &delete_value;
    return nullptr;
  } catch (const std::exception& e) {
    return report(a->callback_error, PJRT_Error_Code_DEADLINE_EXCEEDED, e.what());
  }
}

PJRT_Error* kv_try_get(PJRT_KeyValueTryGetCallback_Args* a) {
  try {
    auto* kv = static_cast<KvStore*>(a->user_arg);
    const std::string key(a->key, a->key_size);
    std::optional<std::string> v = kv->try_get(key);
    if (!v) return report(a->callback_error, PJRT_Error_Code_NOT_FOUND, "key not found: " + key);
    a->value = copy_out(*v);
    a->value_size = v->size();
    a->value_deleter_callback = &delete_value;
    return nullptr;
  } catch (const std::exception& e) {
    return report(a->callback_error, PJRT_Error_Code_INTERNAL, e.what());
  }
}

PJRT_Error* kv_put(PJRT_KeyValuePutCallback_Args* a) {
  try {
    auto* kv = static_cast<KvStore*>(a->user_arg);
    kv->put(std::string(a->key, a->key_size), std::string(a->value, a->value_size));
    return nullptr;
  } catch (const std::exception& e) {
    return report(a->callback_error, PJRT_Error_Code_INTERNAL, e.what());
  }
}

void install_kv_callbacks(PJRT_Client_Create_Args& a, KvStore* kv) {
  a.kv_get_callback = &kv_get;
  a.kv_get_user_arg = kv;
  a.kv_put_callback = &kv_put;
  a.kv_put_user_arg = kv;
  a.kv_try_get_callback = &kv_try_get;
  a.kv_try_get_user_arg = kv;
}

}  // namespace netspec::exec::pjrt
