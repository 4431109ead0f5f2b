// A served replica's communication (replica_links.hpp), timed as sim/collectives times a collective
// alone on the fabric: plan_collective("auto") picks NCCL's (algorithm, protocol) for the group and the
// size, idle_fabric_time_s gives its time (busiest link's bytes over its effective bandwidth under the
// network profile, plus the algorithm's and NCCL's latencies). A stage-to-stage send is one phase of
// tp concurrent transfers with the per-step latency of its route (max_hop_latency_s), as the replay
// times a point-to-point channel.
// vLLM's own custom all-reduce (one-shot / two-shot over NVLink peer memory, used instead of NCCL under
// 8 MiB for 2, 4, 6 or 8 GPUs of one NVSwitch node) is timed by its fitted physics where it applies
// (custom_all_reduce.hpp): as fitted up to the measured 1 MiB, above it the shorter of the fitted
// line and NCCL's plan (the line is the eager test's bandwidth extrapolated); elsewhere NCCL's plan.
// Only the replica's GPUs matter: the cluster is built with as many nodes as they need (falling back
// to the whole cluster when its fabric cannot be built that small), which keeps the build cheap for a
// large cluster and leaves the routes between those GPUs as they are.
#include "sim/serving/replica_links.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/core/error.hpp"
#include "sim/network/network_profile.hpp"
#include "sim/serving/custom_all_reduce.hpp"
#include "sim/serving/deployment_cluster.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

constexpr double kChannelProbeBytes = 1 << 30;  // a size at which NCCL opens all its channels

}  // namespace

struct ReplicaLinks::State {
  Cluster cluster;
  NetworkProfile profile;
  std::string profile_name;
  std::vector<int> first_stage, last_stage, replica_stage;
  int tp = 1, pp = 1;
  bool custom_all_reduce = false;  // whether the all-reduce group may take vLLM's custom all-reduce
  ClusterSpec spec;

  CollectiveContext context() const { return CollectiveContext{cluster, profile}; }
  double collective_s(CollectiveKind kind, const std::vector<int>& ranks, double bytes) const {
    if (ranks.size() < 2 || bytes <= 0.0) return 0.0;
    const CollectiveContext ctx = context();
    CollectiveRequest request;
    request.kind = kind;
    request.ranks = &ranks;
    request.bytes = bytes;
    return idle_fabric_time_s(ctx, plan_collective(kAutoAlgorithm, ctx, request));
  }
};

ReplicaLinks::ReplicaLinks(const ClusterSpec& spec, int tp, int pp, int attention_tp, bool custom_all_reduce) {
  const int gpus = tp * pp;
  if (gpus > spec.gpu_count())
    throw SpecError(spec.source_file.empty() ? "cluster" : spec.source_file, "/nodes",
                    "a replica of tp " + std::to_string(tp) + " x pp " + std::to_string(pp) + " = " +
                        std::to_string(gpus) + " GPUs does not fit a cluster of " + std::to_string(spec.gpu_count()) +
                        " GPUs");
  const std::string name = network_profile_for_gpu(spec.gpu_id);
  s_ = std::make_unique<State>(
      State{build_deployment_cluster(spec, gpus), load_network_profile(name), name, {}, {}, {}, tp, pp, false, spec});
  const int group = attention_tp > 0 ? std::min(attention_tp, tp) : tp;
  s_->custom_all_reduce = custom_all_reduce;
  s_->first_stage.resize(static_cast<std::size_t>(group));
  std::iota(s_->first_stage.begin(), s_->first_stage.end(), 0);
  s_->last_stage.resize(static_cast<std::size_t>(group));
  std::iota(s_->last_stage.begin(), s_->last_stage.end(), (pp - 1) * tp);
  s_->replica_stage.resize(static_cast<std::size_t>(tp));
  std::iota(s_->replica_stage.begin(), s_->replica_stage.end(), 0);
}

ReplicaLinks::~ReplicaLinks() = default;

double ReplicaLinks::all_reduce_s(double bytes) const {
  const int n = static_cast<int>(s_->first_stage.size());
  const double nccl_s = s_->collective_s(CollectiveKind::all_reduce, s_->first_stage, bytes);
  if (!s_->custom_all_reduce || n < 2 || !custom_all_reduce_applies(s_->spec, n, bytes)) return nccl_s;
  const double custom_s = custom_all_reduce_s(n, bytes);
  return bytes <= kCustomAllReduceMeasuredBytes ? custom_s : std::min(custom_s, nccl_s);
}

double ReplicaLinks::all_gather_s(double bytes) const {
  return s_->collective_s(CollectiveKind::all_gather, s_->last_stage, bytes);
}

double ReplicaLinks::all_to_all_s(double bytes) const {
  return s_->collective_s(CollectiveKind::all_to_all, s_->replica_stage, bytes);
}

double ReplicaLinks::stage_send_s(double bytes) const {
  if (s_->pp < 2 || bytes <= 0.0) return 0.0;
  CollectivePhase phase;
  phase.name = "stage send";
  for (int i = 0; i < s_->tp; ++i)
    phase.transfers.push_back(Transfer{i, s_->tp + i, bytes});
  const CollectiveContext ctx = s_->context();
  phase.steps = 1;
  phase.latency_s = max_hop_latency_s(ctx, phase.transfers);
  CollectivePlan plan;
  plan.algorithm = "p2p";
  plan.phases.push_back(std::move(phase));
  return idle_fabric_time_s(ctx, plan);
}

int ReplicaLinks::tensor_parallel_channels() const {
  if (s_->first_stage.size() < 2) return 0;
  const CollectiveContext ctx = s_->context();
  CollectiveRequest request;
  request.kind = CollectiveKind::all_reduce;
  request.ranks = &s_->first_stage;
  request.bytes = kChannelProbeBytes;
  return plan_collective(kAutoAlgorithm, ctx, request).channels;
}

const std::string& ReplicaLinks::network_profile() const {
  return s_->profile_name;
}

}  // namespace clustersim
