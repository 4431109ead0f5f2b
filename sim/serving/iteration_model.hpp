#pragma once
// One serving iteration on one model replica: the contract between the request-level scheduler
// (sim/serving/serving_engine) and the GPU, memory and network models (sim/serving/iteration_model.cpp).
//
// An iteration is one forward pass over the tokens the scheduler batched: prompt chunks (prefill) and
// one token for each decoding request. Its time comes from the calibrated kernel model (GEMMs at
// M = batched tokens, attention over each request's context, memory-bound decode), the tensor-parallel
// all-reduces and pipeline sends over the replica's links, and a host overhead per iteration.
#include <cstdint>
#include <memory>
#include <span>

#include "sim/core/precision.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// Number formats of a served model's weights and KV cache. int8 and int4 store integers with one
// scale per group of `group_size` elements; the GEMMs dequantize them to the compute precision.
enum class ServingDtype : std::uint8_t { fp16, bf16, fp8, int8, int4 };
const char* to_string(ServingDtype d);
// Bytes per element, group scales included (int4, group 128, fp16 scales: 0.5 + 2 / 128).
double bytes_per_element(ServingDtype d, int group_size);

// One replica of the served model: its shape, layout over GPUs and number formats.
struct ReplicaConfig {
  ModelSpec model;  // the transformer (dense or MoE, GQA): workloads/workload_spec.hpp
  int tp = 1;       // tensor-parallel degree
  int pp = 1;       // pipeline stages
  int ep = 1;       // expert-parallel degree (MoE only)
  // Data-parallel attention (MoE only; SGLang's --enable-dp-attention, DeepSeek-V3's deployment): the
  // replica's tp GPUs form dp_attention ranks of tp / dp_attention GPUs, each running attention (and
  // holding the KV cache) of its own requests, while the experts stay spread over all tp GPUs, with an
  // all-to-all dispatch and combine between. 1: attention tensor-parallel over all tp GPUs.
  int dp_attention = 1;
  ServingDtype weight_dtype = ServingDtype::bf16;
  ServingDtype kv_dtype = ServingDtype::bf16;
  int group_size = 128;                           // int8 / int4 scales
  Precision compute_precision = Precision::bf16;  // the GEMMs' dtype
  double gpu_memory_utilization = 0.9;            // the fraction of HBM the engine may use (vLLM's)
  std::int64_t max_batch_tokens = 8192;           // most tokens in one iteration (sizes activations)
  double host_overhead_s = 0.0;                   // per iteration: scheduling, sampling, detokenization
  bool custom_all_reduce = true;  // vLLM's custom all-reduce where it applies (custom_all_reduce.hpp), else NCCL
  // fp8 weights with one fp32 scale per 128 x 128 block and activations with one per 1 x 128 (DeepSeek-V3 /
  // R1's checkpoints): their GEMMs run at the GPU's gemm_fp8_blockwise_efficiency (replica_kernels.cpp)
  bool fp8_block_scales = false;
};

// One request's share of an iteration: `new_tokens` are processed now (a prompt chunk, or 1 when
// decoding) after `context_tokens` already in the KV cache.
struct IterationEntry {
  std::int64_t new_tokens = 0;
  std::int64_t context_tokens = 0;
};

struct IterationTime {
  double time_s = 0.0;           // wall time of the iteration on the replica
  double compute_s = 0.0;        // kernels on the critical path
  double communication_s = 0.0;  // tensor-parallel all-reduces and pipeline sends not hidden
  double host_s = 0.0;           // host overhead
};

// Memory of one GPU of the replica, as a serving engine lays it out (per GPU unless named otherwise).
struct ReplicaMemory {
  double capacity_bytes = 0.0;          // HBM x gpu_memory_utilization
  double weights_bytes = 0.0;           // this GPU's shard of the weights
  double activation_bytes = 0.0;        // peak activations of an iteration of max_batch_tokens
  double workspace_bytes = 0.0;         // CUDA context, library workspaces, communication buffers
  double kv_cache_bytes = 0.0;          // what is left for the KV cache
  double kv_bytes_per_token = 0.0;      // one token's K and V over this GPU's layers and KV heads
  std::int64_t kv_capacity_tokens = 0;  // tokens the replica's KV cache holds (every rank's together)
  // Data-parallel attention: ranks of the replica, each with its own KV cache; a request's tokens
  // live on one rank, so none can hold more than kv_capacity_tokens_per_rank. 1 rank: the replica's.
  int attention_dp_ranks = 1;
  std::int64_t kv_capacity_tokens_per_rank = 0;
  // Speculative decoding: the draft model's weights on this GPU and one token's K and V of the draft,
  // taken from the KV cache (kv_bytes_per_token then counts both models'; speculative_decoding.hpp).
  double draft_weights_bytes = 0.0;
  double draft_kv_bytes_per_token = 0.0;
};

class IterationModel {
 public:
  virtual ~IterationModel() = default;
  virtual IterationTime iteration_time(std::span<const IterationEntry> batch) const = 0;
  virtual const ReplicaMemory& memory() const = 0;
};

// The model backed by the calibrated GPU kernel model and the cluster's links. Throws SpecError when
// the replica does not fit (naming the memory lines) or does not divide the model (tp over heads...).
std::unique_ptr<IterationModel> make_iteration_model(const ReplicaConfig& replica, const GpuSpec& gpu,
                                                     const ClusterSpec& cluster);

}  // namespace clustersim
