#pragma once
// --set key.path=value (the CLI) and dotted override keys (Python): which spec each belongs to.
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct SplitOverrides {
  Overrides cluster;
  WorkloadOverrides workload;
};

// A top-level key of the cluster spec: gpu, nodes, or a section of its schema (node, fabric, power, cost,
// reliability, storage). One rule for every front end and every pairing of the cluster with another spec.
bool is_cluster_key(std::string_view key);

// "cluster.nodes=4" and "workload.training.micro_batch=2" go where their prefix says. Without a
// prefix, the first key decides when it belongs to one spec only ("nodes", "fabric" -> cluster;
// "model", "parallelism" -> workload, the sections of workload_schema()); "name" is ambiguous. Throws SpecError("--set
// ...") otherwise.
SplitOverrides split_overrides(const std::vector<std::string>& settings);

// The rule of every such split, between the cluster spec and one other spec (`other`: "workload",
// "serving"): "cluster.K" and "<other>.K" by their prefix; without one, is_cluster_key, then
// `is_other_key`, of the first key. `example` is a setting of the other spec for the message of one
// without '=' (e.g. "traffic.rate_rps=20").
struct ClusterAndOtherOverrides {
  Overrides cluster;
  Overrides other;
};
ClusterAndOtherOverrides split_cluster_and(const std::vector<std::string>& settings, std::string_view other,
                                           std::string_view example, bool (*is_other_key)(std::string_view));

}  // namespace clustersim
