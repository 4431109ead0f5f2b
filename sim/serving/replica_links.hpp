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
  // SpecError when the cluster has fewer GPUs.
  ReplicaLinks(const ClusterSpec& cluster, int tp, int pp);
  ~ReplicaLinks();
  ReplicaLinks(const ReplicaLinks&) = delete;
  ReplicaLinks& operator=(const ReplicaLinks&) = delete;

  // All-reduce of `bytes` per GPU over stage 0's tp GPUs (0 when tp = 1).
  double all_reduce_s(double bytes) const;
  // All-gather of `bytes` per GPU (each GPU's share) over the last stage's tp GPUs (0 when tp = 1).
  double all_gather_s(double bytes) const;
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
