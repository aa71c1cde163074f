// PyTorch files without Python: the zip reader (archives built here: stored, deflated, zip64),
// the pickle machine (opcodes hand-assembled here) and, where Debian's python3 has torch,
// torch.save'd files against the values torch itself wrote beside them as .npy.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/npy.h"
#include "core/pickle.h"
#include "core/torch_pickle.h"
#include "core/zip_reader.h"
#include "tests/core/zip_fixture.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using test::le;
using test::make_zip;
using test::ZipFile;

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string p = (fs::temp_directory_path() / (name + std::to_string(getpid()))).string();
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

void expect_error(const std::function<void()>& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "expected an error mentioning '" << what << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ZipReader, ReadsStoredDeflatedAndZip64Entries) {
  std::string big(5000, 'x');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 7);
  for (bool zip64 : {false, true}) {
    const std::string p = write_temp(
        "netspec_zip",
        make_zip({{"a/data.pkl", "hello"}, {"a/data/0", big, true}, {"a/version", "3\n"}}, zip64));
    EXPECT_TRUE(ZipReader::is_zip(p));
    ZipReader z(p);
    ASSERT_EQ(z.entries().size(), 3u);
    EXPECT_EQ(z.entries()[1].method, 8);
    EXPECT_LT(z.entries()[1].compressed, big.size());
    EXPECT_EQ(z.read("a/data.pkl"), "hello");
    EXPECT_EQ(z.read("a/data/0"), big);
    EXPECT_EQ(z.read("a/version"), "3\n");
    expect_error([&] { z.read("a/missing"); }, "has no entry 'a/missing'");
    fs::remove(p);
  }
}

TEST(ZipReader, RefusesCorruptArchives) {
  std::string zip = make_zip({{"a/x", "payload!"}});
  std::string bad_crc = zip;
  bad_crc[30 + 3] = 'Q';  // a byte of the stored data ("a/x" is 3 bytes after the 30-byte header)
  const std::string p = write_temp("netspec_zipcrc", bad_crc);
  ZipReader z(p);
  expect_error([&] { z.read("a/x"); }, "CRC-32 mismatch");
  const std::string q = write_temp("netspec_zipcut", zip.substr(0, zip.size() - 30));
  expect_error([&] { ZipReader r(q); }, "not a zip archive");
  EXPECT_FALSE(ZipReader::is_zip(q + ".absent"));
  fs::remove(p);
  fs::remove(q);
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}
std::string binunicode(const std::string& s) { return "X" + le(s.size(), 4) + s; }

// {'a': [5, -2, 1.5, (True, None)], 'b': 'a', 'big': 2**40, 'neg': -300}, protocol 2 with memo.
TEST(Pickle, RunsTheDataOpcodes) {
  std::string d =
      bytes({0x80, 2, '}', 'q', 0, '('}) + binunicode("a") + bytes({'q', 1, ']', 'q', 2});
  d += bytes({'(', 'K', 5, 'J', 0xfe, 0xff, 0xff, 0xff});
  d += bytes({'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0});  // BINFLOAT 1.5 (big-endian)
  d += bytes({0x88, 'N', 0x86, 'q', 3, 'e'});       // NEWTRUE NONE TUPLE2 BINPUT APPENDS
  d += binunicode("b") + bytes({'h', 1});           // 'b' -> memo 1 (the string 'a')
  d += binunicode("big") + bytes({0x8a, 6, 0, 0, 0, 0, 0, 1});      // LONG1 2**40
  d += binunicode("neg") + bytes({0x8a, 2, 0xd4, 0xfe, 'u', '.'});  // LONG1 -300, SETITEMS
  PyRef v = unpickle(d, "test", {});
  ASSERT_EQ(v->kind, PyValue::Kind::dict);
  ASSERT_EQ(v->entries.size(), 4u);
  PyRef a = v->get("a");
  ASSERT_EQ(a->kind, PyValue::Kind::list);
  ASSERT_EQ(a->items.size(), 4u);
  EXPECT_EQ(a->items[0]->i, 5);
  EXPECT_EQ(a->items[1]->i, -2);
  EXPECT_EQ(a->items[2]->f, 1.5);
  EXPECT_EQ(a->items[3]->kind, PyValue::Kind::tuple);
  EXPECT_TRUE(a->items[3]->items[0]->b);
  EXPECT_EQ(a->items[3]->items[1]->kind, PyValue::Kind::none);
  EXPECT_EQ(v->get("b")->s, "a");
  EXPECT_EQ(v->get("big")->i, int64_t{1} << 40);
  EXPECT_EQ(v->get("neg")->i, -300);
}

TEST(Pickle, LeavesUnknownGlobalsOpaqueAndRefusesUnknownOpcodes) {
  // argparse.Namespace() with BUILD state: an object, nothing imported or called.
  std::string d = bytes({0x80, 2}) + "cargparse\nNamespace\n)" + bytes({0x81, '}'}) +
                  binunicode("lr") + bytes({'G', 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a}) +
                  "sb.";
  PyRef v = unpickle(d, "test", {});
  ASSERT_EQ(v->kind, PyValue::Kind::object);
  EXPECT_EQ(v->s, "argparse.Namespace");
  EXPECT_DOUBLE_EQ(v->state->get("lr")->f, 0.1);
  expect_error(
      [] {
        unpickle(bytes({0x80, 2, 0xff, '.'}), "t.pkl", {});
      },
      "unsupported opcode 0xff");
  expect_error([] { unpickle(bytes({0x80, 2, 'K'}), "t.pkl", {}); }, "truncated");
  expect_error(
      [] {
        unpickle(bytes({0x80, 2, 'h', 7, '.'}), "t.pkl", {});
      },
      "memo key 7 was never stored");
}

TEST(TorchFile, RefusesFilesThatAreNotTorchZips) {
  const std::string legacy = write_temp("netspec_legacy", bytes({0x80, 2, 0x8a, 0x0a, 0x6c, 0xfc}));
  expect_error([&] { read_weight_file(legacy); }, "legacy (pre-1.6, non-zip) torch.save format");
  const std::string text = write_temp("netspec_text", "hello, not weights");
  expect_error([&] { read_weight_file(text); }, "not a torch.save zip archive");
  const std::string script =
      write_temp("netspec_script", make_zip({{"m/constants.pkl", "x"}, {"m/code/x.py", "y"}}));
  expect_error([&] { read_weight_file(script); }, "a TorchScript archive");
  for (const auto& p : {legacy, text, script}) fs::remove(p);
}

// {"w": _rebuild_tensor_v2(storage '0' of 4 floats, offset, (n,), (stride,), False, ())}.
std::string torch_zip(int offset, int n, int stride) {
  std::string pkl = bytes({0x80, 2, '}'}) + binunicode("w") +
                    "ctorch._utils\n_rebuild_tensor_v2\n((" + binunicode("storage") +
                    "ctorch\nFloatStorage\n" + binunicode("0") + binunicode("cpu") +
                    bytes({'K', 4, 't', 'Q', 'K', offset, 'K', n, 0x85, 'K', stride, 0x85, 0x89,
                           ')', 't', 'R', 's', '.'});
  std::string data;
  for (float v : {1.f, 2.f, 3.f, 4.f}) data.append(reinterpret_cast<const char*>(&v), 4);
  return make_zip({{"a/data.pkl", pkl}, {"a/data/0", data}, {"a/byteorder", "little"}});
}

TEST(TorchFile, ReadsAHandAssembledStateDictAndRefusesViewsPastTheStorage) {
  const std::string ok = write_temp("netspec_tzip", torch_zip(1, 2, 2));
  TorchTensors t = read_weight_file(ok);
  ASSERT_EQ(t.tensors.size(), 1u);
  EXPECT_EQ(t.tensors[0].first, "w");
  EXPECT_EQ(t.tensors[0].second.shape(), Shape{2});
  EXPECT_EQ(t.tensors[0].second.data<float>()[0], 2.f);  // elements 1 and 3 of the storage
  EXPECT_EQ(t.tensors[0].second.data<float>()[1], 4.f);
  const std::string past = write_temp("netspec_tzip_past", torch_zip(1, 3, 2));
  expect_error([&] { read_weight_file(past); }, "tensor reads element 5 of a storage of 4");
  const std::string huge = write_temp("netspec_tzip_huge", torch_zip(0, 2, 127));
  expect_error([&] { read_weight_file(huge); }, "tensor reads element 127 of a storage of 4");
  for (const auto& p : {ok, past, huge}) fs::remove(p);
}

TEST(TorchFile, ToF32ConvertsHalfBfloatAndDouble) {
  Tensor h(DType::kF16, {4});
  const uint16_t hb[] = {0x3c00, 0xc000, 0x0001, 0x7c00};  // 1, -2, 2^-24, inf
  std::memcpy(h.raw(), hb, sizeof hb);
  Tensor f = to_f32(h, "h");
  EXPECT_EQ(f.data<float>()[0], 1.f);
  EXPECT_EQ(f.data<float>()[1], -2.f);
  EXPECT_EQ(f.data<float>()[2], std::ldexp(1.f, -24));
  EXPECT_TRUE(std::isinf(f.data<float>()[3]));
  Tensor b(DType::kBF16, {1});
  const uint16_t bb = 0x4049;  // bf16 of 3.140625
  std::memcpy(b.raw(), &bb, 2);
  EXPECT_EQ(to_f32(b, "b").data<float>()[0], 3.140625f);
  EXPECT_EQ(to_f32(Tensor::from<double>(DType::kF64, {1}, {0.1}), "d").data<float>()[0], 0.1f);
  expect_error([] { to_f32(Tensor(DType::kI64, {1}), "idx"); }, "idx: i64 tensor, not floating");
}

bool python_torch() {
  static const bool ok =
      std::system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") == 0;
  return ok;
}

// torch writes the file and, beside it, every tensor's values as f64 .npy (numpy, not netspec).
TEST(ReferenceTorchFile, ReadsDtypesViewsAndCheckpointContainers) {
  if (!python_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch: skipped";
  const fs::path dir = fs::temp_directory_path() / ("netspec_torchfile" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string script = R"(
import collections, sys, numpy as np, torch
d = sys.argv[1]
torch.manual_seed(0)
base = torch.randn(4, 6, dtype=torch.float64)
sd = collections.OrderedDict()
sd["t64"] = base.t()                                 # strided view (stride 1, 6)
sd["slice"] = torch.randn(10)[3:8]                   # storage offset 3
sd["half"] = torch.randn(2, 3).half()
sd["bf16"] = torch.randn(5).bfloat16()
sd["param"] = torch.nn.Parameter(torch.randn(3))     # _rebuild_parameter
sd["shared"] = sd["slice"][1:3]                      # shares a storage with "slice"
sd["count"] = torch.tensor(7)                        # int64 scalar
torch.save({"state_dict": sd, "epoch": 3, "args": {"lr": 0.1}}, d + "/ckpt.pth")
for k, v in sd.items():
    np.save(d + "/" + k + ".npy", np.ascontiguousarray(v.detach().double().numpy()))
torch.save(sd, d + "/legacy.pth", _use_new_zipfile_serialization=False)
torch.save(torch.nn.Linear(2, 3), d + "/module.pth")
torch.jit.save(torch.jit.script(torch.nn.Linear(2, 3)), d + "/script.pt")
)";
  std::ofstream(dir / "gen.py") << script;
  ASSERT_EQ(std::system(("/usr/bin/python3 " + (dir / "gen.py").string() + " " + dir.string() +
                         " >/dev/null 2>&1")
                            .c_str()),
            0);
  TorchTensors t = read_weight_file((dir / "ckpt.pth").string());
  EXPECT_EQ(t.format, "PyTorch zip");
  EXPECT_EQ(t.container, "state_dict");
  EXPECT_FALSE(t.library_order);
  const std::vector<std::string> names = {"t64",   "slice",  "half", "bf16",
                                          "param", "shared", "count"};
  const std::vector<DType> dtypes = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16,
                                     DType::kF32, DType::kF32, DType::kI64};
  ASSERT_EQ(t.tensors.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& [name, x] = t.tensors[i];
    EXPECT_EQ(name, names[i]);
    EXPECT_EQ(x.dtype(), dtypes[i]) << name;
    Tensor want = read_npy((dir / (name + ".npy")).string());
    // (netspec's npy reader reads numpy's 0-d array as [1])
    ASSERT_EQ(x.shape(), name == "count" ? Shape{} : want.shape()) << name;
    const Tensor got = x.dtype() == DType::kI64 ? x : to_f32(x, name);
    for (int64_t j = 0; j < want.numel(); ++j)
      EXPECT_EQ(static_cast<float>(got.as_double(j)), static_cast<float>(want.as_double(j)))
          << name << "[" << j << "]";
  }
  expect_error([&] { read_weight_file((dir / "legacy.pth").string()); }, "legacy (pre-1.6");
  expect_error([&] { read_weight_file((dir / "module.pth").string()); },
               "a pickled torch.nn.modules.linear.Linear, not a state dict");
  expect_error([&] { read_weight_file((dir / "script.pt").string()); }, "TorchScript archive");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace netspec
