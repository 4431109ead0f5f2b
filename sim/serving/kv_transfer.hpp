#pragma once
// Disaggregated serving's KV-cache transfer (DistServe, OSDI 2024; Splitwise, ISCA 2024): when a request's
// prompt has run on a prefill replica, its KV cache moves to a decode replica over the cluster's links.
// The bytes are the closed form of the whole model (every layer and KV head once):
//   bytes = tokens x layers x kv_cache_elements_per_token_layer (workloads/transformer_math.hpp: 2 x kv_heads x
//   head_dim, or MLA's kv_lora_rank + qk_rope_head_dim) x bytes per element of the KV dtype.
// The time is that of the transfer on an idle fabric (the collective model's idle_fabric_time_s): the
// busiest link's bytes over its effective bandwidth under the GPU's network profile, plus the route's
// per-step latency and the profile's per-call latency. The routes are the cluster's: NVLink / the
// scale-up domain when both replicas' GPUs share it, else the GPUs' NICs and the scale-out fabric.
#include <cstdint>
#include <memory>

#include "sim/serving/iteration_model.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// K and V of one token over every layer and KV head of `model` (MLA is not in the workload spec: a
// model is MHA or GQA).
double kv_cache_bytes_per_token(const ModelSpec& model, ServingDtype kv_dtype, int group_size);

// How long moving `bytes` of KV cache from prefill replica `p` to decode replica `d` takes.
class KvTransfer {
 public:
  virtual ~KvTransfer() = default;
  virtual double transfer_s(int prefill_replica, int decode_replica, double bytes) const = 0;
};

// A pool of identical replicas of tp x pp GPUs each.
struct ReplicaPool {
  int replicas = 0;
  int tp = 1;
  int pp = 1;
  std::int64_t gpus_per_replica() const { return std::int64_t{tp} * pp; }
  std::int64_t gpus() const { return gpus_per_replica() * replicas; }
};

// The transfer over `cluster`'s fabric. The prefill pool holds the cluster's first GPUs (replica p: GPUs
// p n_p .. (p + 1) n_p - 1, n_p = tp x pp), the decode pool the next ones. Each GPU holds an equal share
// of the KV cache on both sides (tp splits the heads, pp the layers), so every prefill GPU sends 1 / n_p
// of the bytes, spread evenly over the n_d decode GPUs: n_p x n_d concurrent flows of bytes / (n_p n_d),
// one phase, one step. The time is affine in the bytes (routes do not depend on them): it is planned once
// per pair of replicas (at 1 GiB) and scaled. Throws SpecError when the cluster has too few GPUs.
std::unique_ptr<KvTransfer> make_fabric_kv_transfer(const ClusterSpec& cluster, const ReplicaPool& prefill,
                                                    const ReplicaPool& decode);

}  // namespace clustersim
