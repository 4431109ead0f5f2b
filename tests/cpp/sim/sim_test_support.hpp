#pragma once
// Helpers for tests that run SimGrid: each simulation runs in a child process (the engine cannot be
// restarted), and results come back as text.
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/child_process.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/network/network_profile.hpp"
#include "sim/replay/replay_engine.hpp"
#include "topologies/cluster.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim::testing {

// The catalogue H100 SXM5 at its sustained clock (no tensor boost over the power cap): kernel-model
// tests that check closed forms at one fixed clock.
inline GpuSpec h100_at_sustained_clock() {
  GpuSpec g = find_gpu("h100-sxm5-80gb", "test", "");
  g.tensor_boost_w = 0.0;
  return g;
}

// A bf16 GEMM C[m x n] = A[m x k] B[k x n]: its flops and the bytes of A, B and C.
inline ComputeOp gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  ComputeOp op;
  op.kernel = KernelClass::gemm;
  op.precision = Precision::bf16;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = 2.0 * m * n * k;
  op.bytes = (double(m) * k + double(k) * n + double(m) * n) * 2.0;
  return op;
}

// Runs `f` in a child process and returns the doubles it produced.
inline std::vector<double> in_child(const std::function<std::vector<double>()>& f) {
  const std::string out = run_in_child_process([&] {
    std::ostringstream o;
    o.precision(17);
    for (double v : f())
      o << v << ' ';
    return o.str();
  });
  std::istringstream in(out);
  std::vector<double> values;
  double v = 0;
  while (in >> v)
    values.push_back(v);
  return values;
}

// A fat-tree of `nodes` nodes with `gpus` GPUs each and `nics` NICs of `nic_Gbps`, 0.6 us per
// fabric link, NVSwitch of `nvlink_GBps` at 0.7 us.
inline ClusterSpec fat_tree_spec(int nodes, int gpus, int nics, double nic_Gbps = 400.0, double nvlink_GBps = 450.0,
                                 double oversubscription = 1.0, int radix = 64) {
  ClusterSpec s;
  s.name = "test";
  s.gpu_id = "h100-sxm5-80gb";
  s.nodes = nodes;
  s.node.gpus = gpus;
  s.node.nics = nics;
  s.node.nic_bandwidth_Gbps = nic_Gbps;
  s.node.pcie_bandwidth_GBps = 64.0;
  s.node.scale_up.type = "nvswitch";
  s.node.scale_up.bandwidth_GBps = nvlink_GBps;
  s.node.scale_up.latency_us = 0.7;
  s.fabric.type = nodes == 1 ? "single_node" : "fat_tree";
  s.fabric.tiers = 2;
  s.fabric.switch_radix = radix;
  s.fabric.oversubscription = oversubscription;
  s.fabric.link_latency_us = 0.6;
  s.source_file = "test";
  return s;
}

// AMD MI300X platforms: `nodes` of 8 GPUs fully connected by xGMI links (xgmi3: 448 GB/s per GPU over
// 7 links, 64 GB/s per direction, 1 us a hop), `nics` NICs per node on fat_tree_spec's fabric.
inline ClusterSpec mi300x_mesh_spec(int nodes, int nics) {
  ClusterSpec s = fat_tree_spec(nodes, 8, nics);
  s.gpu_id = "mi300x";
  s.node.scale_up.type = "xgmi_mesh";
  s.node.scale_up.generation = "xgmi3";
  s.node.scale_up.bandwidth_GBps = 448.0;
  s.node.scale_up.latency_us = 1.0;
  return s;
}

struct CollectiveRun {
  std::vector<std::vector<int>> groups;  // one collective on each group, concurrently
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0.0;
  std::string algorithm = "ring";
  std::string fidelity = "flow";
  NetworkProfile profile = ideal_network_profile();
  std::vector<double> pair_bytes = {};  // an all_to_allv's matrix (CollectiveOp::pair_bytes)
};

// Replays one collective (on every group of one communicator at once) in a child process; returns
// {time from launch to completion, bytes of every cluster link...}.
inline std::vector<double> run_collective(const ClusterSpec& spec, const CollectiveRun& run) {
  return in_child([&] {
    const Cluster cluster = Cluster::build(spec);
    ExecutionGraph graph(cluster.gpu_count());
    std::vector<int> all(static_cast<std::size_t>(cluster.gpu_count()));
    for (int r = 0; r < cluster.gpu_count(); ++r)
      all[static_cast<std::size_t>(r)] = r;
    const auto comm = graph.add_communicator({"c", run.groups});
    RankClass& rc = graph.add_class("all ranks", all);
    rc.ops.add_collective({"collective", run.kind, comm, run.bytes, 1, run.pair_bytes});
    auto backend = find_network_backend(run.fidelity)->make(cluster, run.profile);
    ReplayOptions options;
    options.collective_algorithm = run.algorithm;
    options.network_profile = run.profile;
    const ReplayResult r = replay(graph, cluster, GpuSpec{}, *backend, options);
    std::vector<double> out{r.collectives.at(0).end_s - r.collectives.at(0).start_s};
    out.insert(out.end(), r.link_bytes.begin(), r.link_bytes.end());
    return out;
  });
}

inline std::vector<int> iota_ranks(int n, int first = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = first + i;
  return v;
}

}  // namespace clustersim::testing
