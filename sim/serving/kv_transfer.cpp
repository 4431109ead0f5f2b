// The KV-cache transfer of disaggregated serving (kv_transfer.hpp): bytes from the closed form, time from
// the collective model's idle-fabric timing of one phase of point-to-point flows.
#include "sim/serving/kv_transfer.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/core/error.hpp"
#include "sim/network/network_profile.hpp"
#include "sim/serving/deployment_cluster.hpp"
#include "topologies/cluster.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {

double kv_cache_bytes_per_token(const ModelSpec& model, ServingDtype kv_dtype, int group_size) {
  return model.layers * kv_cache_elements_per_token_layer(model) * bytes_per_element(kv_dtype, group_size);
}

namespace {

constexpr double kProbeBytes = double(1 << 30);  // the size each pair's plan is timed at

class FabricKvTransfer final : public KvTransfer {
 public:
  FabricKvTransfer(const ClusterSpec& spec, const ReplicaPool& prefill, const ReplicaPool& decode)
      : prefill_(prefill),
        decode_(decode),
        cluster_(build_deployment_cluster(spec, prefill.gpus() + decode.gpus())),
        profile_(load_network_profile(network_profile_for_gpu(spec.gpu_id))) {}

  double transfer_s(int p, int d, double bytes) const override {
    if (bytes <= 0.0) return 0.0;
    const std::uint64_t key = (static_cast<std::uint64_t>(p) << 32) | static_cast<std::uint32_t>(d);
    auto it = pairs_.find(key);
    if (it == pairs_.end()) it = pairs_.emplace(key, plan_pair(p, d)).first;
    return it->second.latency_s + it->second.bandwidth_s_per_byte * bytes;
  }

 private:
  struct Affine {
    double latency_s = 0.0;
    double bandwidth_s_per_byte = 0.0;
  };

  Affine plan_pair(int p, int d) const {
    const std::int64_t np = prefill_.gpus_per_replica();
    const std::int64_t nd = decode_.gpus_per_replica();
    const std::int64_t first_p = p * np;
    const std::int64_t first_d = prefill_.gpus() + d * nd;
    CollectivePhase phase;
    phase.name = "KV cache transfer";
    const double share = kProbeBytes / static_cast<double>(np * nd);
    for (std::int64_t i = 0; i < np; ++i)
      for (std::int64_t j = 0; j < nd; ++j)
        phase.transfers.push_back(Transfer{static_cast<int>(first_p + i), static_cast<int>(first_d + j), share});
    stripe_over_nics(cluster_, phase.transfers);
    const CollectiveContext ctx{cluster_, profile_};
    phase.steps = 1;
    phase.latency_s = max_hop_latency_s(ctx, phase.transfers);
    CollectivePlan plan;
    plan.algorithm = "p2p";
    plan.phases.push_back(std::move(phase));
    const IdleFabricTime t = idle_fabric_time_parts(ctx, plan);
    return {t.latency_s, t.bandwidth_s / kProbeBytes};
  }

  ReplicaPool prefill_;
  ReplicaPool decode_;
  Cluster cluster_;
  NetworkProfile profile_;
  mutable std::unordered_map<std::uint64_t, Affine> pairs_;
};

}  // namespace

std::unique_ptr<KvTransfer> make_fabric_kv_transfer(const ClusterSpec& cluster, const ReplicaPool& prefill,
                                                    const ReplicaPool& decode) {
  const std::int64_t gpus = prefill.gpus() + decode.gpus();
  if (gpus > cluster.gpu_count())
    throw SpecError(cluster.source_file.empty() ? "cluster" : cluster.source_file, "/nodes",
                    "a prefill pool of " + std::to_string(prefill.gpus()) + " GPUs and a decode pool of " +
                        std::to_string(decode.gpus()) + " GPUs do not fit a cluster of " +
                        std::to_string(cluster.gpu_count()) + " GPUs");
  return std::make_unique<FabricKvTransfer>(cluster, prefill, decode);
}

}  // namespace clustersim
