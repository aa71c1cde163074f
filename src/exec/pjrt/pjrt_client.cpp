#include "exec/pjrt/pjrt_client.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/error.h"
#include "exec/pjrt/pjrt_kv.h"

namespace netspec::exec::pjrt {
namespace {

namespace fs = std::filesystem;

// Protobuf wire format: tag = field << 3 | wire type (0 varint, 2 length-delimited).
void put_varint(std::string& s, uint64_t v) {
  for (; v >= 0x80; v >>= 7) s += static_cast<char>((v & 0x7f) | 0x80);
  s += static_cast<char>(v);
}
void put_int(std::string& s, int field, int64_t v) {
  put_varint(s, static_cast<uint64_t>(field) << 3);
  put_varint(s, static_cast<uint64_t>(v));
}
void put_message(std::string& s, int field, const std::string& body) {
  put_varint(s, static_cast<uint64_t>(field) << 3 | 2);
  put_varint(s, body.size());
  s += body;
}

PJRT_Buffer_Type buffer_type(DType t) {
  switch (t) {
    case DType::kI1:
      return PJRT_Buffer_Type_PRED;
    case DType::kI8:
      return PJRT_Buffer_Type_S8;
    case DType::kI16:
      return PJRT_Buffer_Type_S16;
    case DType::kI32:
      return PJRT_Buffer_Type_S32;
    case DType::kI64:
      return PJRT_Buffer_Type_S64;
    case DType::kUI8:
      return PJRT_Buffer_Type_U8;
    case DType::kUI16:
      return PJRT_Buffer_Type_U16;
    case DType::kUI32:
      return PJRT_Buffer_Type_U32;
    case DType::kUI64:
      return PJRT_Buffer_Type_U64;
    case DType::kBF16:
      return PJRT_Buffer_Type_BF16;
    case DType::kF16:
      return PJRT_Buffer_Type_F16;
    case DType::kF32:
      return PJRT_Buffer_Type_F32;
    case DType::kF64:
      return PJRT_Buffer_Type_F64;
  }
  fail("xla", "no PJRT buffer type for dtype {}", static_cast<int>(t));
}

// The error's message; frees the error.
std::string take_error(const PJRT_Api* api, PJRT_Error* e) {
  PJRT_Error_Message_Args m{};
  m.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  m.error = e;
  api->PJRT_Error_Message(&m);
  std::string msg(m.message, m.message_size);
  PJRT_Error_Destroy_Args d{};
  d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  d.error = e;
  api->PJRT_Error_Destroy(&d);
  return msg;
}

// One dlopen + GetPjrtApi + PJRT_Plugin_Initialize per plugin path per process (plugins are
// never unloaded: XLA's static state does not survive dlclose).
const PJRT_Api* load_api(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, const PJRT_Api*> loaded;
  std::lock_guard lock(mu);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;
  // XLA logs INFO lines to stderr (e.g. "cpu_device_count set via create_options"); keep its
  // warnings and errors only, unless the user chose a level.
  ::setenv("TF_CPP_MIN_LOG_LEVEL", "1", 0);
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) fail("xla", "cannot load PJRT plugin {}: {}", path, ::dlerror());
  using GetApi = const PJRT_Api* (*)();
  auto get = reinterpret_cast<GetApi>(::dlsym(h, "GetPjrtApi"));
  if (!get) fail("xla", "{} is not a PJRT plugin (it exports no GetPjrtApi)", path);
  const PJRT_Api* api = get();
  if (!api) fail("xla", "{}: GetPjrtApi returned null", path);
  if (api->pjrt_api_version.major_version != PJRT_API_MAJOR)
    fail("xla", "{} implements PJRT C API {}.{} (expected major version {}, the header's)", path,
         api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version, PJRT_API_MAJOR);
  if (api->PJRT_Plugin_Initialize) {
    PJRT_Plugin_Initialize_Args a{};
    a.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
    if (PJRT_Error* e = api->PJRT_Plugin_Initialize(&a))
      fail("xla", "plugin initialize: {}", take_error(api, e));
  }
  loaded.emplace(path, api);
  return api;
}

}  // namespace

std::string find_plugin(const std::string& flag) {
  std::error_code ec;
  if (!flag.empty()) {
    if (!fs::is_regular_file(flag, ec)) fail("xla", "--pjrt-plugin {}: no such file", flag);
    return flag;
  }
  if (const char* v = std::getenv("NETSPEC_PJRT_PLUGIN"); v && *v) {
    if (!fs::is_regular_file(v, ec)) fail("xla", "NETSPEC_PJRT_PLUGIN={}: no such file", v);
    return v;
  }
  std::vector<fs::path> tried{fs::path(NETSPEC_ENGINES_DIR) / "pjrt" / "pjrt_c_api_cpu_plugin.so"};
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) tried.push_back(self.parent_path() / "engines" / "pjrt" / "pjrt_c_api_cpu_plugin.so");
  std::string where;
  for (const fs::path& p : tried) {
    if (fs::is_regular_file(p, ec)) return p.string();
    where += (where.empty() ? "" : ", ") + p.string();
  }
  fail("xla",
       "no PJRT plugin found (looked at --pjrt-plugin, $NETSPEC_PJRT_PLUGIN, {}); run "
       "scripts/install-engines.sh or pass --pjrt-plugin PATH",
       where);
}

std::string compile_options_proto(int replicas, const std::vector<int64_t>& device_ids) {
  if (replicas < 1) fail("xla", "replica count must be >= 1 (got {})", replicas);
  if (!device_ids.empty() && device_ids.size() != static_cast<size_t>(replicas))
    fail("xla", "device assignment has {} devices (expected one per replica, {})",
         device_ids.size(), replicas);
  std::string build;
  put_int(build, 4, replicas);  // num_replicas
  put_int(build, 5, 1);         // num_partitions
  if (!device_ids.empty()) {
    std::string computation, assignment;
    for (int64_t id : device_ids) put_int(computation, 1, id);  // replica_device_ids
    put_int(assignment, 1, replicas);                           // replica_count
    put_int(assignment, 2, 1);                                  // computation_count
    put_message(assignment, 3, computation);                    // computation_devices
    put_message(build, 9, assignment);                          // device_assignment
  }
  std::string options;
  put_message(options, 3, build);  // executable_build_options
  return options;
}

void BufferDeleter::operator()(PJRT_Buffer* b) const {
  PJRT_Buffer_Destroy_Args a{};
  a.struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE;
  a.buffer = b;
  if (PJRT_Error* e = api->PJRT_Buffer_Destroy(&a)) take_error(api, e);  // a destructor: ignored
}

void Client::check(PJRT_Error* err, const char* what) const {
  if (err) fail("xla", "{}: {}", what, take_error(api_, err));
}

Client::Client(const std::string& plugin_path, int cpu_devices, const Distributed& dist)
    : api_(load_api(plugin_path)) {
  std::vector<PJRT_NamedValue> opts;
  auto add_int = [&](const char* name, int64_t v) {
    PJRT_NamedValue o{};
    o.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    o.name = name;
    o.name_size = std::strlen(name);
    o.type = PJRT_NamedValue_kInt64;
    o.int64_value = v;
    o.value_size = 1;
    opts.push_back(o);
  };
  if (cpu_devices > 0) add_int("cpu_device_count", cpu_devices);
  PJRT_Client_Create_Args a{};
  a.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  if (dist.num_nodes > 1) {
    if (!dist.kv || dist.node_id < 0 || dist.node_id >= dist.num_nodes)
      fail("xla", "multi-node client: node {} of {} needs a key-value store", dist.node_id,
           dist.num_nodes);
    add_int("node_id", dist.node_id);
    add_int("num_nodes", dist.num_nodes);
    install_kv_callbacks(a, dist.kv);
  }
  a.create_options = opts.empty() ? nullptr : opts.data();
  a.num_options = opts.size();
  check(api_->PJRT_Client_Create(&a),
        dist.num_nodes > 1 ? "multi-node client create" : "client create");
  client_ = a.client;

  PJRT_Client_PlatformName_Args pn{};
  pn.struct_size = PJRT_Client_PlatformName_Args_STRUCT_SIZE;
  pn.client = client_;
  check(api_->PJRT_Client_PlatformName(&pn), "platform name");
  platform_.assign(pn.platform_name, pn.platform_name_size);

  PJRT_Client_PlatformVersion_Args pv{};
  pv.struct_size = PJRT_Client_PlatformVersion_Args_STRUCT_SIZE;
  pv.client = client_;
  check(api_->PJRT_Client_PlatformVersion(&pv), "platform version");
  std::error_code ec;
  const auto size = fs::file_size(plugin_path, ec);
  const auto mtime = fs::last_write_time(plugin_path, ec).time_since_epoch().count();
  identity_ =
      fmt::format("{} {} {} api {}.{} {} {}", fs::absolute(plugin_path).string(), size, mtime,
                  api_->pjrt_api_version.major_version, api_->pjrt_api_version.minor_version,
                  platform_, std::string_view(pv.platform_version, pv.platform_version_size));

  PJRT_Client_AddressableDevices_Args ad{};
  ad.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  ad.client = client_;
  check(api_->PJRT_Client_AddressableDevices(&ad), "addressable devices");
  devices_.assign(ad.addressable_devices, ad.addressable_devices + ad.num_addressable_devices);
  if (devices_.empty()) fail("xla", "the {} client has no addressable devices", platform_);
  PJRT_Client_Devices_Args gd{};
  gd.struct_size = PJRT_Client_Devices_Args_STRUCT_SIZE;
  gd.client = client_;
  check(api_->PJRT_Client_Devices(&gd), "devices");
  global_.assign(gd.devices, gd.devices + gd.num_devices);
  std::sort(global_.begin(), global_.end(),
            [&](PJRT_Device* x, PJRT_Device* y) { return device_id(x) < device_id(y); });
  if (dist.num_nodes > 1 && global_.size() <= devices_.size())
    fail("xla",
         "multi-node client (node {} of {}): the {} plugin lists {} devices, {} of them this "
         "node's; it did not join the other nodes (a plugin without multi-node support)",
         dist.node_id, dist.num_nodes, platform_, global_.size(), devices_.size());
}

Client::~Client() {
  PJRT_Client_Destroy_Args a{};
  a.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE;
  a.client = client_;
  if (PJRT_Error* e = api_->PJRT_Client_Destroy(&a)) take_error(api_, e);  // a destructor
}

int Client::device_id(size_t index) const { return device_id(devices_.at(index)); }

int Client::device_id(PJRT_Device* d) const {
  PJRT_Device_GetDescription_Args g{};
  g.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE;
  g.device = d;
  check(api_->PJRT_Device_GetDescription(&g), "device description");
  PJRT_DeviceDescription_Id_Args i{};
  i.struct_size = PJRT_DeviceDescription_Id_Args_STRUCT_SIZE;
  i.device_description = g.device_description;
  check(api_->PJRT_DeviceDescription_Id(&i), "device id");
  return i.id;
}

void Client::await_and_destroy(PJRT_Event* ev, const char* what) const {
  if (!ev) return;
  PJRT_Event_Await_Args a{};
  a.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE;
  a.event = ev;
  PJRT_Error* err = api_->PJRT_Event_Await(&a);
  PJRT_Event_Destroy_Args d{};
  d.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  d.event = ev;
  api_->PJRT_Event_Destroy(&d);
  check(err, what);
}

PJRT_LoadedExecutable* Client::compile(const std::string& mlir_text, const std::string& options) {
  PJRT_Program p{};
  p.struct_size = PJRT_Program_STRUCT_SIZE;
  p.code = const_cast<char*>(mlir_text.data());
  p.code_size = mlir_text.size();
  p.format = "mlir";
  p.format_size = 4;
  PJRT_Client_Compile_Args a{};
  a.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  a.client = client_;
  a.program = &p;
  a.compile_options = options.data();
  a.compile_options_size = options.size();
  check(api_->PJRT_Client_Compile(&a), "compile");
  return a.executable;
}

// f(executable) on the PJRT_Executable view of e; the view is destroyed afterwards, then f's
// error (if any) is thrown as "[xla] what: ...".
namespace {
template <class F>
void with_executable(const PJRT_Api* api, const Client& c, PJRT_LoadedExecutable* e,
                     const char* what, F&& f) {
  PJRT_LoadedExecutable_GetExecutable_Args g{};
  g.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  g.loaded_executable = e;
  c.check(api->PJRT_LoadedExecutable_GetExecutable(&g), "get executable");
  PJRT_Error* err = f(g.executable);
  PJRT_Executable_Destroy_Args d{};
  d.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  d.executable = g.executable;
  if (PJRT_Error* x = api->PJRT_Executable_Destroy(&d)) take_error(api, x);  // a view: harmless
  c.check(err, what);
}
}  // namespace

std::string Client::serialize(PJRT_LoadedExecutable* e) const {
  std::string bytes;
  with_executable(api_, *this, e, "serialize executable", [&](PJRT_Executable* x) {
    PJRT_Executable_Serialize_Args a{};
    a.struct_size = PJRT_Executable_Serialize_Args_STRUCT_SIZE;
    a.executable = x;
    PJRT_Error* err = api_->PJRT_Executable_Serialize(&a);
    if (err) return err;
    bytes.assign(a.serialized_bytes, a.serialized_bytes_size);
    if (a.serialized_executable_deleter) a.serialized_executable_deleter(a.serialized_executable);
    return err;
  });
  return bytes;
}

PJRT_LoadedExecutable* Client::deserialize(const std::string& bytes) const {
  PJRT_Executable_DeserializeAndLoad_Args a{};
  a.struct_size = PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE;
  a.client = client_;
  a.serialized_executable = bytes.data();
  a.serialized_executable_size = bytes.size();
  check(api_->PJRT_Executable_DeserializeAndLoad(&a), "deserialize executable");
  return a.loaded_executable;
}

void Client::destroy(PJRT_LoadedExecutable* e) const {
  PJRT_LoadedExecutable_Destroy_Args a{};
  a.struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
  a.executable = e;
  check(api_->PJRT_LoadedExecutable_Destroy(&a), "executable destroy");
}

size_t Client::num_outputs(PJRT_LoadedExecutable* e) const {
  PJRT_Executable_NumOutputs_Args n{};
  n.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
  with_executable(api_, *this, e, "number of outputs", [&](PJRT_Executable* x) {
    n.executable = x;
    return api_->PJRT_Executable_NumOutputs(&n);
  });
  return n.num_outputs;
}

Buffer Client::to_device(const Tensor& t, size_t device) {
  const std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
  PJRT_Client_BufferFromHostBuffer_Args a{};
  a.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  a.client = client_;
  a.data = t.raw();
  a.type = buffer_type(t.dtype());
  a.dims = dims.data();
  a.num_dims = dims.size();
  a.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  a.device = devices_.at(device);
  check(api_->PJRT_Client_BufferFromHostBuffer(&a), "host-to-device transfer");
  Buffer b(a.buffer, BufferDeleter{api_});
  await_and_destroy(a.done_with_host_buffer, "host-to-device transfer");
  return b;
}

Tensor Client::to_host(PJRT_Buffer* b, DType dtype, const Shape& shape) const {
  Tensor t(dtype, shape);
  if (t.nbytes() == 0) return t;
  PJRT_Buffer_ToHostBuffer_Args a{};
  a.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  a.src = b;
  a.dst = t.raw();
  a.dst_size = t.nbytes();
  check(api_->PJRT_Buffer_ToHostBuffer(&a), "device-to-host transfer");
  await_and_destroy(a.event, "device-to-host transfer");
  return t;
}

std::vector<std::vector<Buffer>> Client::execute(PJRT_LoadedExecutable* e,
                                                 const std::vector<std::vector<PJRT_Buffer*>>& args,
                                                 size_t num_outputs,
                                                 const std::vector<int64_t>& non_donatable) {
  const size_t nd = args.size();
  std::vector<PJRT_Buffer* const*> arg_lists(nd);
  for (size_t d = 0; d < nd; ++d) arg_lists[d] = args[d].data();
  std::vector<std::vector<PJRT_Buffer*>> outs(nd, std::vector<PJRT_Buffer*>(num_outputs));
  std::vector<PJRT_Buffer**> out_lists(nd);
  for (size_t d = 0; d < nd; ++d) out_lists[d] = outs[d].data();
  std::vector<PJRT_Event*> done(nd, nullptr);
  PJRT_ExecuteOptions o{};
  o.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  o.non_donatable_input_indices = non_donatable.data();
  o.num_non_donatable_input_indices = non_donatable.size();
  PJRT_LoadedExecutable_Execute_Args a{};
  a.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  a.executable = e;
  a.options = &o;
  a.argument_lists = arg_lists.data();
  a.num_devices = nd;
  a.num_args = nd ? args[0].size() : 0;
  a.output_lists = out_lists.data();
  a.device_complete_events = done.data();
  check(api_->PJRT_LoadedExecutable_Execute(&a), "execute");
  std::vector<std::vector<Buffer>> result(nd);
  for (size_t d = 0; d < nd; ++d)
    for (PJRT_Buffer* b : outs[d]) result[d].emplace_back(b, BufferDeleter{api_});
  for (PJRT_Event* ev : done) await_and_destroy(ev, "execute");
  return result;
}

}  // namespace netspec::exec::pjrt
