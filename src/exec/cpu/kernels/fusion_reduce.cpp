// Fused groups with folded reductions (kernels.h): a channel-blocked group whose outputs' only
// readers are sums over (N?, H, W) (BatchNorm's statistics and their VJPs), and a plain group
// whose outputs are reduced over whole rows (LayerNorm, softmax). The group's program
// (fusion_program.h) runs tile by tile as in fusion.cpp and each reduction folds the tile's
// values in the order the unfused reduce kernel would, so results equal the unfused steps bit for
// bit while the reduced values never make a round trip through memory.
#pragma GCC target("prefer-vector-width=512")
#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"
#include "exec/cpu/kernels/fusion_program.h"

namespace netspec::exec::cpu {
namespace {

using namespace fused;

// A channel-blocked group with some outputs folded into the sums that are their only readers:
// for reduced output k, out[n?, c] = init[k] + the group's values over (n?, h, w), per lane in
// row-major (n, hw) order, exactly as make_reduce_blocked (layout.cpp) folds a materialised
// output, so results equal the unfused steps bit for bit; reduced outputs never go to memory.
// args.out: the written outputs in group order, then the sums in group order.
template <int B>
void run_program_reduced(const Program& p, const RunArgs& args,
                         const std::vector<std::optional<float>>& init, int64_t N, int64_t C,
                         int64_t HW, bool over_n) {
  const std::vector<const float*> in_f = f32_inputs(p, args);
  const int64_t CB = C / B, tasks = over_n ? CB : N * CB, seg = HW * B;
  std::vector<std::pair<int, float*>> written, summed;  // (slot, destination)
  std::vector<float> inits;
  for (size_t k = 0; k < p.outs.size(); ++k)
    if (!init[k]) written.push_back({p.outs[k].first, nullptr});
  for (size_t k = 0; k < p.outs.size(); ++k)
    if (init[k]) {
      summed.push_back({p.outs[k].first, nullptr});
      inits.push_back(*init[k]);
    }
  for (size_t k = 0; k < written.size(); ++k) written[k].second = args.out[k]->data<float>();
  for (size_t k = 0; k < summed.size(); ++k)
    summed[k].second = args.out[written.size() + k]->data<float>();
  parallel_for(tasks, 1, [&](int64_t tb, int64_t te) {
    std::vector<float> buf = tile_buffer(p);
    const std::vector<float*> slot_ptr = slot_pointers(p, buf);
    std::vector<float> acc(summed.size() * B);
    bool pinned_done = false;
    for (int64_t t = tb; t < te; ++t) {
      for (size_t k = 0; k < summed.size(); ++k)
        std::fill(acc.begin() + static_cast<int64_t>(k) * B,
                  acc.begin() + static_cast<int64_t>(k + 1) * B, inits[k]);
      const int64_t n0 = over_n ? 0 : t / CB, n1 = over_n ? N : n0 + 1, cb = t % CB;
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t j0 = 0; j0 < seg; j0 += kTile) {
          const int64_t len = std::min(kTile, seg - j0), off = (n * CB + cb) * seg + j0;
          run_tile(p, args, in_f, slot_ptr.data(), off, len, pinned_done);
          for (const auto& [slot, dst] : written)
            std::memcpy(dst + off, slot_ptr[static_cast<size_t>(slot)],
                        static_cast<size_t>(len) * sizeof(float));
          for (size_t k = 0; k < summed.size(); ++k) {
            const float* s = slot_ptr[static_cast<size_t>(summed[k].first)];
            float a[B];  // a local array stays in registers (acc may alias s for the compiler)
            std::copy_n(acc.data() + static_cast<int64_t>(k) * B, B, a);
            for (int64_t j = 0; j < len; j += B)
              for (int l = 0; l < B; ++l) a[l] = Scalar<OpKind::kAdd>::apply(a[l], s[j + l]);
            std::copy_n(a, B, acc.data() + static_cast<int64_t>(k) * B);
          }
        }
      for (size_t k = 0; k < summed.size(); ++k)
        std::copy_n(acc.data() + static_cast<int64_t>(k) * B, B,
                    summed[k].second + (over_n ? cb * B : (n0 * CB + cb) * B));
    }
  });
}

// A plain group with outputs reduced over rows of `row` elements (kernels.h compile_fused_rows):
// each tile holds whole rows, and every row of a folded output is folded by fold_f32_rows, the
// fast reduce's own loop, from the tile slot. args.out: written outputs, then the reductions.
void run_program_rows(const Program& p, const RunArgs& args,
                      const std::vector<std::optional<RowFold>>& folds, int64_t row) {
  const std::vector<const float*> in_f = f32_inputs(p, args);
  struct Written {
    int slot;
    bool is_i1;
    void* dst;
  };
  struct Folded {
    int slot;
    RowFold f;
    float* dst;
  };
  std::vector<Written> written;
  std::vector<Folded> folded;
  std::vector<Tensor*> out_of(p.outs.size(), nullptr);  // per group output: its tensor if written
  for (size_t k = 0; k < p.outs.size(); ++k)
    if (!folds[k] || folds[k]->written) {
      out_of[k] = args.out[written.size()];
      written.push_back({p.outs[k].first, p.outs[k].second, out_of[k]->raw()});
    }
  for (size_t k = 0; k < p.outs.size(); ++k)
    if (folds[k])
      folded.push_back({p.outs[k].first, *folds[k],
                        args.out[written.size() + folded.size()]->data<float>()});
  // Written outputs computed straight in their buffers where run_program would (no copy).
  const std::vector<bool> direct = direct_outputs(p, args, out_of.data());
  std::vector<std::pair<int, float*>> direct_slots;  // (slot, output data)
  for (size_t k = 0, w = 0; k < p.outs.size(); ++k) {
    if (!out_of[k]) continue;
    if (direct[k]) {
      direct_slots.push_back({p.outs[k].first, out_of[k]->data<float>()});
      written.erase(written.begin() + static_cast<int64_t>(w));
    } else {
      ++w;
    }
  }
  const std::vector<const float*> full = prefetched_inputs(p, args, in_f);
  const int64_t rows = p.n / row, per_tile = kTile / row;
  const int64_t n_tiles = (rows + per_tile - 1) / per_tile;
  parallel_for(n_tiles, 8, [&](int64_t tb, int64_t te) {
    std::vector<float> buf = tile_buffer(p);
    std::vector<float*> slot_ptr = slot_pointers(p, buf);
    bool pinned_done = false;
    for (int64_t t = tb; t < te; ++t) {
      const int64_t r0 = t * per_tile, nr = std::min(per_tile, rows - r0);
      const int64_t off = r0 * row, len = nr * row;
      for (const auto& [slot, data] : direct_slots) slot_ptr[static_cast<size_t>(slot)] = data + off;
      TilePrefetch pf;
      if (!full.empty() && t + 2 < te) pf = {&full, off + 2 * len, len};
      run_tile(p, args, in_f, slot_ptr.data(), off, len, pinned_done, pf);
      for (const Written& w : written) {
        const float* s = slot_ptr[static_cast<size_t>(w.slot)];
        if (w.is_i1) {
          bool* o = static_cast<bool*>(w.dst) + off;
          for (int64_t j = 0; j < len; ++j) o[j] = s[j] != 0.f;
        } else {
          std::memcpy(static_cast<float*>(w.dst) + off, s, static_cast<size_t>(len) * sizeof(float));
        }
      }
      for (const Folded& f : folded) {
        const float* s = slot_ptr[static_cast<size_t>(f.slot)];
        fold_f32_rows(f.f.kind, f.f.init, s, row, nr, f.dst + r0);
      }
    }
  });
}

}  // namespace

std::optional<Compiled> compile_fused_reduce(const FusedGroup& g, int block,
                                             const std::vector<std::optional<float>>& init,
                                             bool over_n) {
  if (init.size() != g.outs.size() || !fused_blockable(g, block) || (block != 8 && block != 16))
    return std::nullopt;
  for (size_t k = 0; k < init.size(); ++k)
    if (g.outs[k]->type.dtype() != DType::kF32) return std::nullopt;
  const hlo::Type& dom = g.ops.back()->result(0)->type;
  const int64_t N = dom.dim(0), C = dom.dim(1), HW = dom.dim(2) * dom.dim(3);
  const Program p = build_program(g, block);
  Compiled c;
  c.pointwise = true;  // written outputs may take a dying input's buffer, as in compile_fused
  c.chained_pairs = p.chained;
  c.folded_broadcasts = p.folded;
  c.generated_instructions = p.generated;
  broadcast_inputs_no_alias(p, c);
  if (block == 16)
    c.run = [=](const RunArgs& a) { run_program_reduced<16>(p, a, init, N, C, HW, over_n); };
  else
    c.run = [=](const RunArgs& a) { run_program_reduced<8>(p, a, init, N, C, HW, over_n); };
  return c;
}

std::optional<Compiled> compile_fused_rows(const FusedGroup& g,
                                           const std::vector<std::optional<RowFold>>& folds,
                                           int64_t row) {
  if (folds.size() != g.outs.size() || row < 1 || row > kTile) return std::nullopt;
  const int64_t n = g.ops.back()->result(0)->type.numel();
  if (n % row != 0) return std::nullopt;
  for (size_t k = 0; k < folds.size(); ++k)
    if (folds[k] && (g.outs[k]->type.dtype() != DType::kF32 ||
                     g.outs[k]->type.numel() != n))
      return std::nullopt;
  const Program p = build_program(g, 0);
  Compiled c;
  c.pointwise = true;  // written outputs may take a dying input's buffer, as in compile_fused
  c.chained_pairs = p.chained;
  c.folded_broadcasts = p.folded;
  c.generated_instructions = p.generated;
  broadcast_inputs_no_alias(p, c);
  c.run = [=](const RunArgs& a) { run_program_rows(p, a, folds, row); };
  return c;
}

}  // namespace netspec::exec::cpu
