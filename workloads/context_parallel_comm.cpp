// parallelism.cp_comm: how the ranks of a context-parallel group exchange K and V.
//
// ring        Megatron-Core / Transformer Engine (AttnFuncWithCP, p2p): the K/V block of each rank
//             travels to the next rank while the current block is computed; backward, K, V and their
//             gradients (bf16) travel the ring. The generator's ring (transformer_generator.cpp).
// all_gather  PyTorch's context_parallel (torch/distributed/tensor/experimental/_attention.py, read at
//             pytorch/pytorch@0123248a484f; torchtitan's runs of Dec 2024 used torch 1963fc8 with
//             the same algorithm; torchtitan's --experimental.context_parallel_rotate_method defaults
//             to "allgather", torchtitan/config_manager.py @ 9dec370):
//   forward (_templated_ring_attention, _AllGatherRotater): at step 0 the rank's K and V are packed
//     (torch.cat of key.flatten() and value.flatten(): reads and writes 2 + 2 bytes per element) and
//     all-gathered once over the cp group; the pack runs again at every step i < cp - 1 (the cat is
//     outside the rotater, whose exchange_buffers does nothing after the first call): cp - 1 packs.
//     The partial outputs are merged by _SDPAMerger with convert_to_f32 = True: each step's output
//     is cast to fp32 (out.to(float32): reads 2, writes 4) and, from step 1 on, merged with the
//     running one by eager ops: t = out - block_out (reads 4 + 4, writes 4), t * sigmoid(...) (reads
//     4, writes 4; the sigmoid is over the [.., 1] log-sum-exp, not counted), out - t (reads 4 + 4,
//     writes 4): 6 + 32 = 38 bytes per output element per step. The last rank of the group (the one
//     the step waits for) merges its whole output at every step (i <= rank: no partial update), so
//     the whole output is counted. Step 0: the cast only (6); results(): out.to(bf16) (reads 4,
//     writes 2): 12 per output element once.
//   backward (_templated_ring_attention_backward): K and V are all-gathered again (kv_rotater, the
//     all-gather rotater, packed at every step i < cp - 1 as in the forward); dK and dV accumulate in
//     fp32 (accum_dtype float32) and travel the ring by all_to_all (dkv_rotater is always
//     _RotateMethod.ALL_TO_ALL: ft_c.permute_tensor to the next rank), one fp32 dK/dV block per step,
//     cp steps (every step sends, the last one's arrival ends the backward): 2 x 4 bytes per local
//     K/V element per step (the element count already counts K and V). Per step: grad_key += grad_key_
//     (reads 4 + 2, writes 4) and the torch.cat of dK, dV into the send buffer (reads 4, writes 4):
//     18 bytes per K/V element; grad_query += grad_query_ (reads 4 + 2, writes 4): 10 per Q element.
//     Once per layer: zeros_like for dQ, dK, dV in fp32 (writes 4) and the final casts to bf16 (reads
//     4, writes 2): 10 bytes per element of Q and of the local K and V.
#include "workloads/context_parallel_comm.hpp"

#include <algorithm>

#include "sim/core/named_table.hpp"

namespace clustersim {
namespace {

constexpr double kPack = 2.0 + 2.0;                       // torch.cat: read bf16, write bf16
constexpr double kToFp32 = 2.0 + 4.0;                     // bf16 -> fp32
constexpr double kMerge = kToFp32 + (12.0 + 8.0 + 12.0);  // cast, then three eager fp32 ops
constexpr double kOutputCasts = kToFp32 + (4.0 + 2.0);    // step 0's cast, results() back to bf16
constexpr double kGradP2P = 4.0;                          // fp32 per element of dK and dV
constexpr double kGradKvAccumulate = (4.0 + 2.0 + 4.0) + (4.0 + 4.0);
constexpr double kGradQAccumulate = 4.0 + 2.0 + 4.0;
constexpr double kGradInitCast = 4.0 + (4.0 + 2.0);  // zeros_like fp32, final cast to bf16

}  // namespace

const std::vector<ContextParallelComm>& context_parallel_comms() {
  static const std::vector<ContextParallelComm> kComms = {
      {"ring", false, 0, 0, 0, 0, 0, 0, 0,
       "Megatron-Core / Transformer Engine AttnFuncWithCP (p2p): K/V blocks around the ring, load-balanced"},
      {"all_gather", true, kMerge, kOutputCasts, kPack, kGradP2P, kGradKvAccumulate, kGradQAccumulate, kGradInitCast,
       "PyTorch context_parallel, rotate method allgather: torch/distributed/tensor/experimental/_attention.py "
       "@ 0123248a484f (_AllGatherRotater, _SDPAMerger, dK/dV by all_to_all)"},
  };
  return kComms;
}

std::vector<std::string> context_parallel_comm_names() {
  return names_of(std::span<const ContextParallelComm>(context_parallel_comms()));
}

const ContextParallelComm& find_context_parallel_comm(std::string_view name) {
  return find_named(std::span<const ContextParallelComm>(context_parallel_comms()), name, "context-parallel method");
}

}  // namespace clustersim
