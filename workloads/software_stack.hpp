#pragma once
// Software stacks (training.stack): the framework that runs the training step and what it does,
// read from workloads/stacks/<id>.json (compiled into the library). A profile sets the defaults of
// workload keys (an explicit key of the workload still wins) and how the generator builds the step:
// which kernels are fused, how the optimizer and the pipeline sends are issued, the fixed costs of
// a step. Every value carries its source. Format: workloads/stacks/README.md.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workloads/kernel_class.hpp"
#include "workloads/stack_memory_passes.hpp"

namespace clustersim {

// The pipeline's point-to-point transfers: overlapped (sent on their own streams while the compute
// stream goes on: batched isend/irecv overlapped with compute) or blocking (the compute stream waits
// until the send has completed, as with torch.distributed send / isend + wait).
enum class PipelineP2P : std::uint8_t { overlapped, blocking };
// The optimizer step: one multi-tensor kernel over the rank's parameters (apex / Transformer Engine
// FusedAdam, PyTorch foreach/fused Adam, an XLA fusion) or one launch per parameter tensor.
enum class OptimizerKernels : std::uint8_t { multi_tensor, per_tensor };

struct StackFusions {
  bool bias_activation = true;   // bias add fused into the activation (Megatron's bias-gelu fusion)
  bool bias_dropout_add = true;  // bias, dropout and residual add in one kernel
  bool masked_softmax = true;    // unfused attention: scale, mask and softmax in one kernel
  // Llama-style models only (RMSNorm, rotary positions); optional in a profile, default fused.
  bool rmsnorm = true;  // RMSNorm as one kernel; false: PyTorch eager ops (6 kernels forward)
  bool rope = true;     // rotary embedding fused into the QKV path; false: eager complex multiply
  // Grouped-query attention (kv_heads < heads); optional, default fused: the attention kernel reads the
  // kv_heads K/V as they are; false: K and V repeated to every query head in memory first (torchtitan's
  // eager repeat_kv), and the attention (and context parallelism) moves the repeated tensors.
  bool gqa = true;
  // SwiGLU models only; optional, default fused: silu(gate) * up as one kernel; false: PyTorch's eager
  // F.silu then the multiply (torchtitan's FeedForward), two kernels forward and three backward.
  bool swiglu = true;

  friend bool operator==(const StackFusions&, const StackFusions&) = default;
};

// Where the framework's host waits for its GPU (a device synchronisation: a blocking copy between host
// and device, .item(), .tolist(), torch.cuda.synchronize()): the host issues nothing more until the GPU
// has finished every op issued before (sim/replay/replay_engine.hpp). Optional in a profile, default
// none; the generator places them (workloads/transformer_generator.cpp).
struct StackHostSyncs {
  // Before each micro-batch's forward, on the ranks that load it (every rank without a pipeline; the
  // first and last stage with one, the last after it has received the activations): the batch is
  // copied to the GPU and its sizes broadcast and copied back (Megatron's broadcast_data).
  bool micro_batch_load = false;
  // With tensor and pipeline parallelism, around each transfer of a partitioned activation or
  // gradient: the receiver reads the partition's metadata to the host after the receive, the sender
  // copies it to the GPU before the send (DeepSpeed's PartitionedTensor from_meta / to_meta).
  bool partitioned_pipeline_transfer = false;

  friend bool operator==(const StackHostSyncs&, const StackHostSyncs&) = default;
};

struct StackProfile {
  std::string id;           // file stem: "megatron-core"
  std::string name;         // "Megatron-Core with Transformer Engine"
  std::string description;  // one line: what the stack is, which versions
  // Workload keys the stack sets unless the workload gives them, as (dotted path, JSON text).
  std::vector<std::pair<std::string, std::string>> defaults;
  StackFusions fused;
  OptimizerKernels optimizer_kernels = OptimizerKernels::multi_tensor;
  PipelineP2P pipeline_p2p = PipelineP2P::overlapped;
  // Host time per pipeline transfer instruction, microseconds (optional, default 0): what the framework's
  // pipeline schedule costs the CPU for each send or recv of activations or gradients beyond its ops'
  // host_op_us (DeepSpeed's PipelineEngine interprets one instruction per transfer in Python). Charged
  // on the host clock of each stage (sim/replay/replay_engine.hpp, ReplayOptions::pipeline_instruction_s).
  double pipeline_instruction_us = 0.0;
  StackHostSyncs host_syncs;
  // Fixed per-step costs: the global gradient norm for clipping (one pass over the rank's fp32
  // gradients before the optimizer), and the loss averaged over the data-parallel group after every
  // micro-batch's forward (an all-reduce of one fp32, on the compute stream).
  bool grad_norm = true;
  bool loss_all_reduce_per_micro_batch = false;
  // Measured stacks (clustersim calibrate --from-trace; absent from the built-in profiles: 1 and 0):
  // the kernel model's time of every kernel of a class is multiplied by its class's factor, indexed by
  // KernelClass (gemm, attention, elementwise, normalization, optimizer, embedding, loss); and a
  // fixed host cost before a step's first op (data loading, the optimizer's host work, seconds).
  std::array<double, kKernelClassCount> kernel_time_scale = {1, 1, 1, 1, 1, 1, 1};
  double step_fixed_s = 0.0;
  // The memory-bound passes the framework runs besides the model's kernels (FSDP2's all-gather copy-out
  // and reduce-scatter copy-in, foreach AdamW; optional in a profile, default none): part of the profile,
  // so a profile written back (calibrate --from-trace) keeps the passes its fit was simulated with.
  StackMemoryPasses memory_passes;
  std::map<std::string, std::string> sources;  // value path ("fused.bias_activation") -> source

  friend bool operator==(const StackProfile&, const StackProfile&) = default;
};

// The factor the replay multiplies the kernel model's time of each kernel class by
// (ReplayOptions::kernel_time_scale): the stack's measured ones, the attention class's also times the
// workload's attention implementation's time over FlashAttention-2's (training.attention,
// workloads/attention_implementation.hpp). The one place that rule is written: simulate() replays with
// it and calibrate --from-trace fits relative to it.
std::array<double, kKernelClassCount> kernel_time_scales(const StackProfile& stack, std::string_view attention);

// The stack a workload runs when it names none: the one users most likely mean.
inline constexpr std::string_view kDefaultStack = "megatron-core";

std::vector<std::string> software_stack_ids();
// A training.stack value names a profile file rather than a built-in id when it ends with ".json".
bool is_stack_file(std::string_view reference);
// training.stack as the spec `file` gives it: a built-in id as it is; a file path resolved relative to
// the directory of `file` and made absolute. Throws SpecError(file, json_path, ...) for an
// unknown id.
std::string resolve_stack_reference(const std::string& reference, const std::string& file,
                                    const std::string& json_path);
// The profile `id`: a built-in id, or (is_stack_file) the path of a profile file in the same format
// (as resolve_stack_reference returns it). Throws SpecError(file, json_path, "unknown software stack
// ...; expected one of ...") naming the spec that asked for it, or SpecError(profile file, JSON path,
// ...) for a bad profile file.
StackProfile find_software_stack(std::string_view id, const std::string& file = "", const std::string& json_path = "");
// The profile as canonical JSON text (the format of workloads/stacks/*.json; deterministic bytes),
// which find_software_stack reads back equal.
std::string software_stack_to_json(const StackProfile& stack);
// The workload keys a profile's "defaults" may set (dotted paths).
std::vector<std::string> stack_default_keys();

}  // namespace clustersim
