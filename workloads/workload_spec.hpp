#pragma once
// The workload spec of docs/architecture.md (stable keys), parsed and validated.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/precision.hpp"  // Precision: the dtypes (training.precision)
#include "workloads/software_stack.hpp"

namespace clustersim {

// How fp8 training scales its tensors (Transformer Engine's recipes and torchao's Float8Linear
// tensorwise; workloads/fp8_recipe.hpp).
enum class Fp8Recipe : std::uint8_t { delayed, current, mxfp8, nvfp4, tensorwise, blockwise };

struct MoeSpec {
  int experts = 0;  // 0: dense model
  int top_k = 0;
  int expert_ffn_hidden = 0;  // 0: same as ffn_hidden
  // With token_dropping, each expert-parallel rank takes at most capacity_factor x its mean routed
  // tokens (T x top_k); the rest skip the experts (Megatron-Core's --moe-expert-capacity-factor).
  double capacity_factor = 1.0;
  bool token_dropping = false;
  // Tokens of the busiest expert-parallel rank over the mean (>= 1): the all-to-alls and the expert
  // GEMMs of every rank wait for the busiest one. With load_distribution "multinomial", the expected
  // busiest of ep ranks under uniform random routing, times this factor (workloads/moe_routing.hpp).
  double load_imbalance = 1.0;
  std::string load_distribution = "factor";
  // Experts every token passes through besides its top_k routed ones (DeepSeek's shared experts), each
  // of expert_ffn_hidden; Megatron-Core runs them as one MLP of shared_experts x expert_ffn_hidden.
  int shared_experts = 0;
  // The first layers are dense MLPs of ffn_hidden (DeepSeek-V3's first_k_dense_replace = 3).
  int first_dense_layers = 0;
  // Node-limited routing (DeepSeek-V3's M): each token's experts on at most this many nodes; 0:
  // unlimited. Sets what DeepEP's deduplicated dispatch sends over RDMA (workloads/expert_routing.hpp).
  int max_nodes_per_token = 0;

  friend bool operator==(const MoeSpec&, const MoeSpec&) = default;
};

// Multi-head latent attention (DeepSeek-V2/V3, model.attention_type "mla"): queries through a rank
// q_lora_rank bottleneck (0: projected from the hidden state directly), keys and values from one
// compressed latent of kv_lora_rank plus a shared rotary key of qk_rope_head_dim; per head, query and
// key have qk_nope_head_dim + qk_rope_head_dim elements, the value v_head_dim. Formulas in
// transformer_math.cpp.
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  friend bool operator==(const MlaSpec&, const MlaSpec&) = default;
};

struct ModelSpec {
  std::string type = "transformer";
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // 0: same as heads (MHA); fewer: GQA
  int head_dim = 0;  // 0: hidden / heads
  int ffn_hidden = 0;
  int seq_len = 0;
  int vocab = 0;
  std::string activation = "gelu";  // gelu | swiglu | squared_relu
  bool tied_embeddings = false;
  // model.attention_type. mha: multi-head attention (grouped-query with kv_heads < heads); mla: multi-head latent
  // attention
  // (`mla` below; kv_heads and head_dim do not apply).
  std::string attention_type = "mha";
  MlaSpec mla;
  MoeSpec moe;
  // Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 sec. 2.2): this many sequential modules after
  // the last layer on the last pipeline stage, each two RMSNorms (the previous depth's hidden state and
  // the embedding of the token k ahead, the embedding shared), a projection 2h -> h, one transformer
  // layer shaped like the model's last, a final norm and the shared output head with a loss of its own.
  // 0: none. Parameters in transformer_math.cpp, ops in transformer_generator.cpp.
  int mtp_depth = 0;

  int effective_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  int effective_head_dim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  bool latent_attention() const { return attention_type == "mla"; }
  // Layer `layer` (0-based) has experts: a MoE model past its first_dense_layers.
  bool moe_layer(int layer) const { return moe.experts > 0 && layer >= moe.first_dense_layers; }

  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

struct TrainingSpec {
  // The software stack that runs the step (workloads/stacks/<id>.json, software_stack.hpp); empty:
  // not given, the default stack (kDefaultStack). Its profile fills in the keys below that it sets
  // (attention, dropout, host_op_us, the overlaps, zero_stage) unless the workload gives them.
  std::string stack;
  std::int64_t global_batch = 0;  // sequences per step
  int micro_batch = 1;            // sequences per micro-batch per data-parallel rank
  Precision precision = Precision::bf16;
  // precision fp8 only: the scaling recipe, and whether the fp8 copies of the weights are cast once
  // per step and reused by every micro-batch (Transformer Engine's is_first_microbatch caching).
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  bool fp8_weight_cache = true;
  std::string recompute = "none";  // none | selective | full
  std::string optimizer = "adam";  // adam | sgd
  // Where the optimizer state lives (workloads/optimizer_offload.hpp): none (HBM) | cpu (host memory:
  // fp32 master weights and moments; gradients copied out, weights copied back, the update on the CPU).
  std::string optimizer_offload = "none";
  // flash: one fused kernel per attention (FlashAttention-2); triton: the Triton FlashAttention kernel
  // (llm-foundry's attn_impl "triton"), fused, slower (workloads/attention_implementation.hpp);
  // unfused: Megatron-LM's original path, a batched GEMM for the scores, a fused scale-mask-softmax
  // over the s x s scores in memory, a batched GEMM for the weighted sum (what Megatron-DeepSpeed ran
  // before flash attention).
  std::string attention = "flash";
  // Dropout probability of the attention probabilities and the hidden states (0: off, as in current
  // LLM recipes; Megatron-LM's GPT default is 0.1). Costs memory traffic, not flops.
  double dropout = 0.0;
  // CPU time the framework spends issuing one GPU operation (kernel or communication call), in
  // microseconds. The host issues a rank's operations in program order, one every host_op_us; none
  // starts on the GPU before it is issued. 0: the host is never the bottleneck (CUDA graphs, or
  // kernels long enough to hide it). PyTorch eager with Megatron-style wrappers: tens of us.
  double host_op_us = 0.0;
  // The model runs under a graph compiler (torch.compile): it fuses the elementwise ops a stack runs
  // eagerly otherwise (the profile's fused.rmsnorm / fused.rope false no longer apply).
  bool torch_compile = false;
  // How the framework allocates what lives part of the step (workloads/memory_recipe.hpp): the fp32
  // main gradients (persistent | per_step) and the loss over the vocabulary (vocab_parallel | eager).
  std::string grad_buffer = "persistent";
  // recompute "selective" only: what is kept of a layer (memory_recipe.hpp): attention_core
  // (Megatron-LM) | matmul_outputs (torchtitan's op-level selective checkpointing). Memory only.
  std::string selective_recompute = "attention_core";
  std::string cross_entropy = "vocab_parallel";

  std::string effective_stack() const { return stack.empty() ? std::string(kDefaultStack) : stack; }

  friend bool operator==(const TrainingSpec&, const TrainingSpec&) = default;
};

struct ParallelismSpec {
  int tp = 1;
  int pp = 1;
  int dp = 0;  // 0 until resolved: GPUs / (tp * pp * cp)
  int cp = 1;
  // How context parallelism exchanges K and V (workloads/context_parallel_comm.hpp): "ring"
  // (Megatron-Core / Transformer Engine p2p ring) or "all_gather" (PyTorch context_parallel).
  std::string cp_comm = "ring";
  int ep = 1;
  // Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size): the routed experts' tensor
  // parallelism, which may differ from the attention's tp; 0: tp (Megatron-Core's default). The expert
  // layers lay the same ranks out as etp x ep x edp x pp, edp = tp cp dp / (ep etp) (rank_layout.hpp).
  int etp = 0;
  bool sequence_parallel = false;
  std::string pipeline_schedule = "1f1b";  // gpipe | 1f1b | interleaved
  int virtual_stages = 1;
  int zero_stage = 0;  // 0..3
  bool overlap_grad_reduce = true;
  // ZeRO 1/2: the updated weights are all-gathered during the next step's forward (Megatron-LM's
  // --overlap-param-gather), bucket by bucket ahead of the layers that need them, instead of after
  // the optimizer step.
  bool overlap_param_gather = false;
  // Gradient bucket size in parameters; 0: Megatron's default max(40e6, 1e6 * dp).
  std::int64_t bucket_size_params = 0;
  // Tensor-parallel communication overlapped with the GEMMs that consume or produce it (Megatron's
  // --tp-comm-overlap, userbuffers; needs sequence_parallel): false runs it on the compute stream's
  // critical path.
  bool tp_comm_overlap = false;
  // Rank placement, innermost dimension first (Megatron's default "tp-cp-ep-dp-pp"; ep is carved out
  // of dp). Any permutation of tp, cp, dp, pp with ep next to dp.
  std::string order = "tp-cp-ep-dp-pp";

  int effective_etp() const { return etp > 0 ? etp : tp; }
  // The expert layers' data-parallel degree: tp cp dp / (ep etp) (dp resolved).
  int expert_dp() const { return tp * cp * dp / (ep * effective_etp()); }

  // bucket_size_params, or Megatron-LM's default max(40e6, 1e6 * dp) when it is 0.
  std::int64_t effective_bucket_size_params() const;

  friend bool operator==(const ParallelismSpec&, const ParallelismSpec&) = default;
};

// A recorded execution trace instead of a model description (workloads/trace_format.hpp).
struct TraceSpec {
  std::string format;  // a registered trace format: "clustersim", "chakra", "pytorch"
  std::string path;    // resolved against the directory of the workload file
  // The training step to keep (formats with step annotations: PyTorch's ProfilerStep#N): empty, the
  // whole trace; "last", each rank's last step; or a step number "N".
  std::string step;

  friend bool operator==(const TraceSpec&, const TraceSpec&) = default;
};

struct WorkloadSpec {
  std::string name;
  std::string description;  // optional: where the model shape comes from
  ModelSpec model;
  TrainingSpec training;
  ParallelismSpec parallelism;
  TraceSpec trace;  // format empty: the workload is generated from model/training/parallelism
  std::string source_file;

  bool is_trace() const { return !trace.format.empty(); }

  // Micro-batches per step per data-parallel rank: global_batch / (micro_batch * dp).
  std::int64_t micro_batches() const;

  friend bool operator==(const WorkloadSpec&, const WorkloadSpec&) = default;
};

using WorkloadOverrides = std::vector<std::pair<std::string, std::string>>;

// Loads from a JSON file path or a preset name (workloads/presets/NAME.json), applies overrides,
// validates everything that does not depend on the cluster. Throws SpecError (file + JSON path).
WorkloadSpec load_workload_spec(std::string_view source, const WorkloadOverrides& overrides = {});
WorkloadSpec parse_workload_spec(std::string_view json_text, const std::string& file);
std::string workload_spec_to_json(const WorkloadSpec& spec);

// Checks the parallel layout against the GPU count and fills in dp when omitted: tp * pp * cp * dp
// must equal `gpu_count`, the micro-batches must divide the global batch, tp must divide the heads.
// Throws SpecError with the path of the offending field of the workload file.
void resolve_parallelism(WorkloadSpec& spec, int gpu_count);

std::vector<std::string> workload_preset_names();

}  // namespace clustersim
