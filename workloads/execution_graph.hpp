#pragma once
// ExecutionGraph: what each rank does in one training step, as ops on streams with dependencies.
//
// Ranks that do identical work on identical hardware form a RankClass and are stored (and replayed)
// once; their collectives still involve every member rank, so the traffic of all of them loads the
// network (docs/architecture.md, "Scale"). Ops are stored as a struct of arrays with CSR dependencies so that a
// graph of 10^7 ops fits in memory.
//
// Semantics the replay engine implements:
//  - an op starts when all its dependencies have finished and every earlier op on its stream has
//    started and finished (streams are in-order queues, like CUDA streams);
//  - a collective op on communicator c starts when every rank of its group has reached it (NCCL
//    semantics); the ops of one communicator are matched in issue order;
//  - a send op on communicator c with peer offset d sends from each of the class's ranks, at position i
//    of its group, to the rank at position (i + d) mod n of the same group; a recv op with peer offset
//    e receives from position (i + e) mod n. The k-th send of a (sender class, receiver class, c, d,
//    tag) channel is matched with the k-th recv of that channel; the transfer starts when both are reached
//    and both ops finish when it has arrived (NCCL send/recv). Eager pairs (P2POp::eager, Chakra's
//    semantics) transfer as soon as the send is reached: the send finishes when its message has
//    arrived, the recv when it is reached and its message has arrived;
//  - compute ops take the time the GPU model gives for their kernel description.
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/precision.hpp"
#include "workloads/kernel_class.hpp"

namespace clustersim {

using OpId = std::uint32_t;

enum class OpKind : std::uint8_t { compute, collective, send, recv };
enum class CollectiveKind : std::uint8_t { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce };

const char* to_string(OpKind k);
const char* to_string(CollectiveKind k);

// Streams by convention: 0 compute; communication streams from 1.
inline constexpr std::uint8_t kComputeStream = 0;

// A fused attention kernel's backward flops relative to its forward: FlashAttention-2's backward
// recomputes QK^T and the softmax and runs five matmuls to the forward's two (Dao 2023; flash-attention's
// benchmarks count it so).
inline constexpr double kAttentionBackwardFlopsFactor = 2.5;

struct ComputeOp {
  std::string_view name;
  KernelClass kernel = KernelClass::elementwise;
  Precision precision = Precision::bf16;
  double flops = 0.0;  // floating-point operations
  double bytes = 0.0;  // bytes moved to and from device memory (HBM)
  // GEMM shape, C[m x n] = A[m x k] * B[k x n], repeated `batch` times (gemm and attention kernels).
  std::uint32_t m = 0, n = 0, k = 0, batch = 1;
  // Attention kernels: the causal mask (query i sees the keys up to its own position, aligned to the
  // last query when n > m) and the backward pass (dQ, dK, dV). flops are the work the kernel does:
  // 4 m n k batch forward, half of it with the causal mask, 2.5x in the backward.
  bool causal = false;
  bool backward = false;
  // An fp8 GEMM with fine-grained (1x128 / 128x128 block) scales promoted to CUDA cores every 128
  // K-elements (training.fp8_recipe blockwise): timed at the GPU's gemm_fp8_blockwise_efficiency.
  bool fp8_blockwise = false;
  std::uint8_t stream = kComputeStream;
  // A measured duration (imported traces): > 0 is the op's time, used verbatim by the replay; 0 lets
  // the GPU model time the kernel from its description.
  double duration_s = 0.0;
};

struct CollectiveOp {
  std::string_view name;
  CollectiveKind collective = CollectiveKind::all_reduce;
  std::uint16_t communicator = 0;  // index into ExecutionGraph::communicators()
  double bytes = 0.0;              // the buffer size per rank, as nccl-tests counts it
  std::uint8_t stream = 1;
  // all_to_allv (all_to_all only): the bytes group position i sends to position j at [i * n + j], for
  // groups of n ranks (the diagonal stays on its rank); `bytes` is then the largest row sum. Empty:
  // an even all_to_all, S/n per pair.
  std::span<const double> pair_bytes = {};
};

// Point-to-point: a send or a recv between two positions of each group of a communicator.
struct P2POp {
  std::string_view name;
  OpKind kind = OpKind::send;      // send or recv
  std::uint16_t communicator = 0;  // index into ExecutionGraph::communicators()
  std::int32_t peer_offset = 1;    // the peer's position in the group relative to this rank's (mod n)
  std::uint32_t tag = 0;           // separates channels between the same ranks (activations, gradients)
  double bytes = 0.0;
  std::uint8_t stream = 1;
  // Eager (Chakra / ASTRA-sim semantics): a send transfers and finishes without waiting for its recv
  // to be issued; the recv finishes once the message has arrived. Otherwise (NCCL) the transfer
  // starts when both are issued. The send and the recv of a pair say the same.
  bool eager = false;
};

// The ops of one rank class, struct of arrays.
class OpTable {
 public:
  OpId add_compute(const ComputeOp& op, std::span<const OpId> deps = {});
  OpId add_collective(const CollectiveOp& op, std::span<const OpId> deps = {});
  OpId add_p2p(const P2POp& op, std::span<const OpId> deps = {});

  std::size_t size() const { return kind_.size(); }
  OpKind kind(OpId i) const { return kind_[i]; }
  std::uint8_t stream(OpId i) const { return stream_[i]; }
  std::string_view name(OpId i) const { return names_[name_[i]]; }
  KernelClass kernel(OpId i) const { return kernel_[i]; }
  Precision precision(OpId i) const { return precision_[i]; }
  double flops(OpId i) const { return flops_[i]; }
  double bytes(OpId i) const { return bytes_[i]; }
  std::uint32_t m(OpId i) const { return m_[i]; }
  std::uint32_t n(OpId i) const { return n_[i]; }
  std::uint32_t k(OpId i) const { return k_[i]; }
  std::uint32_t batch(OpId i) const { return batch_[i]; }
  bool causal(OpId i) const { return (attention_[i] & kCausal) != 0; }
  bool backward(OpId i) const { return (attention_[i] & kBackward) != 0; }
  bool fp8_blockwise(OpId i) const { return (attention_[i] & kFp8Blockwise) != 0; }
  // Compute ops: the measured duration (ComputeOp::duration_s), 0 when the GPU model times the op.
  double duration_s(OpId i) const { return i < duration_s_.size() ? duration_s_[i] : 0.0; }
  // Collective ops: the all_to_allv's per-pair bytes (CollectiveOp::pair_bytes); null for any other.
  const std::vector<double>* pair_bytes(OpId i) const {
    return i < pair_bytes_slot_.size() && pair_bytes_slot_[i] != 0 ? &pair_bytes_[pair_bytes_slot_[i] - 1] : nullptr;
  }
  CollectiveKind collective(OpId i) const { return collective_[i]; }
  std::uint16_t communicator(OpId i) const { return communicator_[i]; }                // collective, send, recv
  std::int32_t peer_offset(OpId i) const { return static_cast<std::int32_t>(m_[i]); }  // send, recv
  std::uint32_t tag(OpId i) const { return n_[i]; }                                    // send, recv
  bool eager(OpId i) const { return k_[i] != 0; }                                      // send, recv
  std::span<const OpId> deps(OpId i) const { return {deps_.data() + dep_begin_[i], deps_.data() + dep_begin_[i + 1]}; }
  ComputeOp compute_op(OpId i) const;  // the compute op's description (name view into this table)

  std::size_t memory_bytes() const;  // approximate heap footprint

 private:
  OpId push(OpKind kind, std::uint8_t stream, std::string_view name, std::span<const OpId> deps);
  std::uint32_t intern(std::string_view name);

  std::vector<OpKind> kind_;
  std::vector<std::uint8_t> stream_;
  std::vector<std::uint32_t> name_;
  std::vector<KernelClass> kernel_;
  std::vector<Precision> precision_;
  std::vector<double> flops_;
  std::vector<double> bytes_;
  std::vector<std::uint32_t> m_, n_, k_, batch_;
  static constexpr std::uint8_t kCausal = 1, kBackward = 2, kFp8Blockwise = 4;
  std::vector<std::uint8_t> attention_;  // compute ops: kCausal | kBackward | kFp8Blockwise (flags)
  std::vector<CollectiveKind> collective_;
  std::vector<std::uint16_t> communicator_;
  std::vector<std::uint32_t> dep_begin_{0};
  std::vector<OpId> deps_;
  std::vector<std::string> names_;  // interned op names (few distinct ones)
  std::vector<double> duration_s_;  // measured durations; empty while every one is 0 (generated graphs)
  // all_to_allv matrices: op i's is pair_bytes_[pair_bytes_slot_[i] - 1] (slot 0 or past the end: none).
  std::vector<std::uint32_t> pair_bytes_slot_;
  std::deque<std::vector<double>> pair_bytes_;
};

// A family of process groups of the same role: "dp" has one group per (tp, pp, cp) coordinate.
struct Communicator {
  std::string name;                      // "dp", "tp", "pp", ...
  std::vector<std::vector<int>> groups;  // global ranks of each group, in ring order
  // The group's collectives are copies into buffers the GPUs map from each other (Transformer Engine's
  // userbuffers, Megatron-LM --tp-comm-overlap), not NCCL kernels: they pay neither NCCL's per-call
  // launch latency nor its protocol latencies, only the plan's own per-step (link) latencies.
  bool userbuffers = false;
};

struct RankClass {
  std::string name;        // "all ranks", "stage 0", ...
  std::vector<int> ranks;  // global ranks that run exactly these ops
  OpTable ops;
  // Ops before which the host waits for its GPU: op j in it is not issued until every op before it
  // (program order) has finished, and the host's clock resumes from there (a device synchronisation
  // of the framework, StackHostSyncs; sim/replay/replay_engine.hpp). Ascending; empty: none.
  std::vector<OpId> host_syncs;
};

class ExecutionGraph {
 public:
  explicit ExecutionGraph(int world_size) : world_size_(world_size) {}

  int world_size() const { return world_size_; }
  std::uint16_t add_communicator(Communicator c);
  // The returned reference stays valid as more classes are added.
  RankClass& add_class(std::string name, std::vector<int> ranks);

  const std::vector<Communicator>& communicators() const { return communicators_; }
  const std::deque<RankClass>& classes() const { return classes_; }
  std::deque<RankClass>& classes() { return classes_; }
  std::size_t op_count() const;  // summed over classes (each class once)

  // What a recorded trace says about the run beyond its ops; unset when it says nothing (generated
  // graphs never set them: the model description gives these figures).
  //  - the largest device memory one GPU held (a PyTorch trace's allocator events, "Total Reserved");
  //  - the tokens one step processed.
  std::optional<double> peak_memory_bytes_per_gpu() const { return peak_memory_bytes_per_gpu_; }
  void set_peak_memory_bytes_per_gpu(std::optional<double> bytes) { peak_memory_bytes_per_gpu_ = bytes; }
  std::optional<double> tokens_per_step() const { return tokens_per_step_; }
  void set_tokens_per_step(std::optional<double> tokens) { tokens_per_step_ = tokens; }

  // Checks internal consistency (every rank in exactly one class, dependencies point backwards,
  // communicator indices valid, each group's ranks distinct and in range, an all_to_allv's matrix
  // n x n for the groups of n ranks of its communicator). Throws SimulationError.
  void validate() const;

 private:
  int world_size_;
  std::optional<double> peak_memory_bytes_per_gpu_, tokens_per_step_;
  std::vector<Communicator> communicators_;
  std::deque<RankClass> classes_;
};

}  // namespace clustersim
