// PJRT_Client_Create's key-value callbacks (pjrt_c_api.h: kv_get / kv_put / kv_try_get) over an
// exec::KvStore passed as their user_arg. get blocks up to the plugin's timeout_in_ms and then
// answers DEADLINE_EXCEEDED; try_get answers NOT_FOUND at once; a value handed to the plugin is
// a new[] copy with its deleter. No exception crosses the C boundary: a store error becomes the
// plugin's error through args->callback_error (code INTERNAL, the store's message).
#pragma once
#include "exec/kv_store.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace netspec::exec::pjrt {

PJRT_Error* kv_get(PJRT_KeyValueGetCallback_Args* args);
PJRT_Error* kv_try_get(PJRT_KeyValueTryGetCallback_Args* args);
PJRT_Error* kv_put(PJRT_KeyValuePutCallback_Args* args);

// Sets the three callbacks and their user_arg (kv) in `args`.
void install_kv_callbacks(PJRT_Client_Create_Args& args, KvStore* kv);

}  // namespace netspec::exec::pjrt
