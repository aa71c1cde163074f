// Emitting ResNet-50's train step (batch 32, 1000 classes, the spec's default training
// settings): median wall time of a few emits (build + verify-free print), the parameter count
// (25,557,032 for torchvision's ResNet-50) and the op count. Target: < 1 s per emit.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "emit/emit.h"
#include "hlo/text/printer.h"
#include "spec/param_table.h"
#include "spec/zoo.h"

using namespace netspec;

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "resnet50";
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 32;
  const int reps = argc > 3 ? std::stoi(argv[3]) : 5;
  SpecFile spec = resolve_net(name);
  set_num_classes(spec.net, 1000);
  TrainConfig tc = spec.train.value_or(TrainConfig{});
  emit::EmitOptions o = emit::EmitOptions::from_train(tc, batch);
  ParamTable table = build_param_table(spec.net);
  int64_t params = 0;
  for (const auto& p : table.params) {
    int64_t k = 1;
    for (int64_t d : p.shape) k *= d;
    params += k;
  }
  std::vector<double> emit_s, print_s;
  size_t ops = 0, chars = 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    emit::Emitted e = emit::emit_module(spec.net, ModuleKind::train_step, o);
    auto t1 = std::chrono::steady_clock::now();
    std::string text = hlo::print_module(*e.module);
    auto t2 = std::chrono::steady_clock::now();
    emit_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    print_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    ops = 0;
    for (const auto& f : e.module->funcs) hlo::walk(*f->body, [&](const hlo::Op&) { ++ops; });
    chars = text.size();
  }
  std::sort(emit_s.begin(), emit_s.end());
  std::sort(print_s.begin(), print_s.end());
  double em = emit_s[emit_s.size() / 2], pr = print_s[print_s.size() / 2];
  std::printf("net %s, train_step, batch %lld, optimizer %s, loss %s\n", name.c_str(),
              static_cast<long long>(batch), std::string(enum_name(tc.optimizer)).c_str(),
              std::string(enum_name(tc.lossKind)).c_str());
  std::printf("parameters: %lld (%zu tensors, %zu BN layers)\n", static_cast<long long>(params),
              table.params.size(), table.bns.size());
  std::printf("ops: %zu (all functions, regions included); text %.1f MB\n", ops, chars / 1e6);
  std::printf("emit (build module): median %.3f s of %d (min %.3f, max %.3f)\n", em, reps,
              emit_s.front(), emit_s.back());
  std::printf("print (StableHLO text): median %.3f s\n", pr);
  std::printf("emit + print: %.3f s; target < 1 s: %s\n", em + pr, em + pr < 1 ? "met" : "MISSED");
  return 0;
}
