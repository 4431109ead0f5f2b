#pragma once
// How context parallelism moves K and V between the ranks of a cp group (parallelism.cp_comm), one
// registry entry each, with the bytes of the eager kernels around the exchange per element (bf16
// activations; fp32 where the source accumulates in fp32). Sources and the kernel-by-kernel count in
// context_parallel_comm.cpp; the generator (transformer_generator.cpp, attention_core) builds the ops.
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct ContextParallelComm {
  std::string_view name;
  // true: K and V all-gathered once per layer forward and again in the backward (PyTorch
  // context_parallel, rotate method "allgather"); false: Megatron-Core / TE ring (a block per step).
  bool all_gather_kv = false;
  // All-gather only (0 for the ring, whose kernels are not modelled beyond the attention):
  // forward, per attention step after the first, per element of the rank's attention output
  // (b x s/cp x heads x head_dim): the fp32 merge of the partial output with the running one.
  double merge_bytes_per_output_element = 0.0;
  // forward, once per layer, per output element: the casts of the first step's output to fp32 and
  // of the merged result back to bf16.
  double output_cast_bytes_per_output_element = 0.0;
  // per element of the rank's local K and V (b x s/cp x 2 x kv width), per step but the last (forward
  // and backward): the torch.cat of K and V into the send buffer.
  double pack_bytes_per_kv_element = 0.0;
  // backward, the gradient of K and V travels the ring in fp32 (one p2p block per step, cp steps):
  // bytes per local K/V element sent per step.
  double grad_kv_p2p_bytes_per_kv_element = 0.0;
  // backward, per step, per local K/V element: the fp32 accumulation of the step's dK/dV and its
  // repacking; per query element: dQ's accumulation.
  double grad_kv_accumulate_bytes_per_kv_element = 0.0;
  double grad_q_accumulate_bytes_per_q_element = 0.0;
  // backward, once per layer: the fp32 zero-filled accumulators and the final casts to bf16, per
  // element of Q and of the local K and V.
  double grad_init_cast_bytes_per_element = 0.0;
  std::string_view source;
};

const std::vector<ContextParallelComm>& context_parallel_comms();
std::vector<std::string> context_parallel_comm_names();
// The named method; the name must be one of context_parallel_comm_names() (the parser checks it).
const ContextParallelComm& find_context_parallel_comm(std::string_view name);

}  // namespace clustersim
