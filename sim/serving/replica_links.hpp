#pragma once
// The communication of a served replica over the cluster's links, timed by the project's collective
// model (sim/collectives: the algorithm NCCL's tuner would pick, its plan on an idle fabric under the
// GPU's fitted network profile): the tensor-parallel all-reduce and all-gather of one stage's GPUs, and
// the send of activations from one pipeline stage to the next. Each call plans (allocates): the
// iteration model tabulates them once (token_grid.hpp).
#include <memory>

#include "topologies/cluster_spec.hpp"

namespace clustersim {

class ReplicaLinks {
 public:
  // The replica's GPUs are the cluster's first tp x pp (stage s: GPUs s tp .. (s + 1) tp - 1). Throws
  // SpecError when the cluster has fewer GPUs. `attention_tp` (data-parallel attention, pp 1): the
  // all-reduces and all-gathers run over the first attention rank's GPUs, the first attention_tp
  // (0: all tp). `custom_all_reduce`: all-reduces that vLLM's custom all-reduce takes are timed by it
  // (custom_all_reduce.hpp), the others by NCCL's plan.
  ReplicaLinks(const ClusterSpec& cluster, int tp, int pp, int attention_tp = 0, bool custom_all_reduce = true);
  ~ReplicaLinks();
  ReplicaLinks(const ReplicaLinks&) = delete;
  ReplicaLinks& operator=(const ReplicaLinks&) = delete;

  // All-reduce of `bytes` per GPU over stage 0's tp GPUs (attention_tp of them) (0 when one): vLLM's
  // custom all-reduce where it applies, else NCCL's.
  double all_reduce_s(double bytes) const;
  // All-gather of `bytes` per GPU (each GPU's share) over the last stage's tp GPUs (attention_tp of
  // them) (0 when one).
  double all_gather_s(double bytes) const;
  // An even all-to-all of `bytes` per GPU (nccl-tests' convention: bytes / tp to each peer) over stage
  // 0's tp GPUs (0 when tp = 1): MoE dispatch and combine under data-parallel attention.
  double all_to_all_s(double bytes) const;
  // Every GPU of stage 0 sends `bytes` to its peer of stage 1 at once (0 when pp = 1).
  double stage_send_s(double bytes) const;
  // NCCL channels of a large all-reduce over the tp GPUs (its buffers: replica_memory.cpp); 0 when tp = 1.
  int tensor_parallel_channels() const;
  // The network profile's name, for provenance.
  const std::string& network_profile() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace clustersim
