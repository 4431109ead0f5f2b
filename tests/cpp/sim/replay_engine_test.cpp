// Replay semantics: streams, dependencies, overlap of communication with compute, deadlocks.
#include "sim/replay/replay_engine.hpp"

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "expect_same_class_times.hpp"
#include "expect_simulation_error.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/network/flow_backend.hpp"
#include "sim_test_support.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

ComputeOp elementwise(const char* name, double bytes) {
  ComputeOp op;
  op.name = name;
  op.kernel = KernelClass::elementwise;
  op.bytes = bytes;
  return op;
}

// Runs `graph` on a fresh flow backend in a child; returns {step, compute, exposed, idle, host wait}
// of class 0.
std::vector<double> run_graph(const ClusterSpec& spec, const std::function<ExecutionGraph(int)>& make,
                              double host_op_s = 0.0, const std::string& algorithm = "ring") {
  return testing::in_child([&] {
    const Cluster cluster = Cluster::build(spec);
    const ExecutionGraph graph = make(cluster.gpu_count());
    auto backend = make_flow_backend(cluster, ideal_network_profile());
    const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
    ReplayOptions options;
    options.collective_algorithm = algorithm;
    options.host_op_s = host_op_s;
    const ReplayResult r = replay(graph, cluster, gpu, *backend, options);
    const ClassTimes& t = r.classes.at(0);
    return std::vector<double>{r.step_time_s, t.compute_s, t.exposed_communication_s, t.idle_s, t.host_wait_s};
  });
}

// The replay of the graph `make` builds for two GPUs (two nodes of one), by run_graph with `algorithm`,
// must fail with a SimulationError naming each of `fragments`.
void expect_two_gpu_replay_error(const std::function<ExecutionGraph(int)>& make,
                                 std::initializer_list<std::string_view> fragments,
                                 const std::string& algorithm = "ring") {
  testing::expect_simulation_error([&] { run_graph(testing::fat_tree_spec(2, 1, 1), make, 0.0, algorithm); },
                                   fragments);
}

std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = i;
  return v;
}

TEST(ReplayEngine, ComputeOpsOnOneStreamRunBackToBack) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  const double t1 = kernel_time(gpu, elementwise("a", 1e9)).time_s;
  const double t2 = kernel_time(gpu, elementwise("b", 2e9)).time_s;
  const auto r = run_graph(testing::fat_tree_spec(1, 2, 2), [](int world) {
    ExecutionGraph g(world);
    auto& rc = g.add_class("all", iota(world));
    rc.ops.add_compute(elementwise("a", 1e9));
    rc.ops.add_compute(elementwise("b", 2e9));  // no dependency: the stream orders them
    return g;
  });
  EXPECT_NEAR(r[0], t1 + t2, 1e-12);
  EXPECT_NEAR(r[1], t1 + t2, 1e-12);
  EXPECT_DOUBLE_EQ(r[2], 0.0);
}

// A measured stack's kernel-class factors multiply the model's kernel times, and its fixed per-step
// cost delays the first op: gemm t_g and elementwise t_e on one stream take f + 0.8 t_g + 1.6 t_e,
// the first f waiting for the host.
TEST(ReplayEngine, KernelClassScalesAndTheFixedStepCostAreAppliedExactly) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  const double tg = kernel_time(gpu, testing::gemm(4096, 4096, 4096)).time_s;
  const double te = kernel_time(gpu, elementwise("e", 1e9)).time_s;
  const std::vector<double> r = testing::in_child([&] {
    const Cluster cluster = Cluster::build(testing::fat_tree_spec(1, 1, 1));
    ExecutionGraph g(cluster.gpu_count());
    auto& rc = g.add_class("all", iota(cluster.gpu_count()));
    rc.ops.add_compute(testing::gemm(4096, 4096, 4096));
    rc.ops.add_compute(elementwise("e", 1e9));
    auto backend = make_flow_backend(cluster, ideal_network_profile());
    ReplayOptions options;
    options.kernel_time_scale[static_cast<std::size_t>(KernelClass::gemm)] = 0.8;
    options.kernel_time_scale[static_cast<std::size_t>(KernelClass::elementwise)] = 1.6;
    options.step_fixed_s = 0.002;
    const ReplayResult result = replay(g, cluster, gpu, *backend, options);
    return std::vector<double>{result.step_time_s, result.classes.at(0).compute_s, result.classes.at(0).host_wait_s};
  });
  EXPECT_NEAR(r[0], 0.002 + 0.8 * tg + 1.6 * te, 1e-12);
  EXPECT_NEAR(r[1], 0.8 * tg + 1.6 * te, 1e-12);
  EXPECT_NEAR(r[2], 0.002, 1e-12);
}

// The host issues op k at (k + 1) d. Kernels shorter than d wait for the host: N of them take N d + t
// (the last one runs after its issue), the GPU idle in between. Kernels longer than d hide the host
// after the first: d + N t.
TEST(ReplayEngine, TheHostIssuesOneOpEveryHostOpTime) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  const double t = kernel_time(gpu, elementwise("k", 1e6)).time_s;
  const auto chain = [](int world) {
    ExecutionGraph g(world);
    auto& rc = g.add_class("all", iota(world));
    for (int k = 0; k < 10; ++k)
      rc.ops.add_compute(elementwise("k", 1e6));
    return g;
  };
  const ClusterSpec spec = testing::fat_tree_spec(1, 1, 1);
  const double slow_host = 4.0 * t, fast_host = 0.25 * t;
  const auto host_bound = run_graph(spec, chain, slow_host);
  EXPECT_NEAR(host_bound[0], 10 * slow_host + t, 1e-12);
  EXPECT_NEAR(host_bound[1], 10 * t, 1e-12);                       // the GPU computes 10 t ...
  EXPECT_NEAR(host_bound[4], 10 * slow_host + t - 10 * t, 1e-12);  // ... and waits for the host
  EXPECT_NEAR(host_bound[3], 0.0, 1e-12);                          // (not a bubble)
  const auto gpu_bound = run_graph(spec, chain, fast_host);
  EXPECT_NEAR(gpu_bound[0], fast_host + 10 * t, 1e-12);
  EXPECT_NEAR(gpu_bound[4], fast_host, 1e-12);  // only before the first op
  EXPECT_NEAR(run_graph(spec, chain)[0], 10 * t, 1e-12);
}

// A pipeline send costs the host pipeline_instruction_s more (the stack's pipeline_instruction_us): on
// stage 0, kernels k0..k4 (ops 0-4), a send to stage 1 on its own stream (op 5), kernels k6..k10 (ops
// 6-10), each kernel t, the host issuing op j at (j + 1) d + n_j P (n_j = 1 from the send on).
// Host-bound (d = 4 t, P = 3 t): the last kernel is issued at 11 d + P = 47 t and ends at 48 t; the same
// send on another communicator ("cp") is no pipeline instruction: 11 d + t = 45 t. GPU-bound (d = t / 4,
// P = 2 t): op 6 is issued at 7 d + P = 3.75 t, before the GPU is free of k0..k4 (d + 5 t = 5.25 t), so
// the instruction is hidden: d + 10 t, as without it.
TEST(ReplayEngine, PipelineInstructionsCostTheHostAndHideBehindTheGpu) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  const double t = kernel_time(gpu, elementwise("k", 1e9)).time_s;
  const auto run = [&](double d, double p, const char* communicator) {
    return testing::in_child([&] {
      const Cluster cluster = Cluster::build(testing::fat_tree_spec(1, 2, 1));
      ExecutionGraph g(2);
      const auto comm = g.add_communicator({communicator, {{0, 1}}});
      RankClass& a = g.add_class("stage 0", {0});
      RankClass& b = g.add_class("stage 1", {1});
      for (int k = 0; k < 5; ++k)
        a.ops.add_compute(elementwise("k", 1e9));
      a.ops.add_p2p(P2POp{"send", OpKind::send, comm, +1, 0, 1e3, 3, false});
      for (int k = 0; k < 5; ++k)
        a.ops.add_compute(elementwise("k", 1e9));
      b.ops.add_p2p(P2POp{"recv", OpKind::recv, comm, -1, 0, 1e3, 5, false});
      auto backend = make_flow_backend(cluster, ideal_network_profile());
      ReplayOptions options;
      options.host_op_s = d;
      options.pipeline_instruction_s = p;
      const ReplayResult r = replay(g, cluster, gpu, *backend, options);
      return std::vector<double>{r.step_time_s, r.classes.at(0).compute_s, r.classes.at(0).host_wait_s};
    });
  };
  const auto host_bound = run(4.0 * t, 3.0 * t, "pp");
  EXPECT_NEAR(host_bound[0], 48.0 * t, 1e-9 * t);
  EXPECT_NEAR(host_bound[1], 10.0 * t, 1e-9 * t);
  EXPECT_NEAR(host_bound[2], 38.0 * t, 0.01 * t);  // 48 t - 10 t of kernels (less the send, ~1 us)
  EXPECT_NEAR(run(4.0 * t, 3.0 * t, "cp")[0], 45.0 * t, 1e-9 * t);
  EXPECT_NEAR(run(4.0 * t, 0.0, "pp")[0], 45.0 * t, 1e-9 * t);
  const auto gpu_bound = run(0.25 * t, 2.0 * t, "pp");
  EXPECT_NEAR(gpu_bound[0], 10.25 * t, 1e-9 * t);
  EXPECT_NEAR(gpu_bound[2], 0.25 * t, 1e-9 * t);  // only before the first kernel
}

// The host waits for its GPU (RankClass::host_syncs): a two-stage pipeline, kernels of t each, the host
// issuing one op every d. Stage 0: kernels k0..k4 (ops 0-4), then a blocking send to stage 1 (op 5,
// after k4). Stage 1: the receive (op 0), then kernels k1..k5 (ops 1-5) after it; with a host wait at op
// 1 (the host reads the received message, as DeepSpeed's PartitionedTensor.from_meta does).
// Host-bound (d = 4 t): the send leaves at 6 d = 24 t (k4 ended at 5 d + t = 21 t) and arrives e later.
// Without the wait stage 1's host issued k1..k5 at 2 d..6 d, before the message: they run back to back,
// step 6 d + e + 5 t = 29 t + e. With it the host issues k1 at 6 d + e + d and k5 at 6 d + e + 5 d, which
// ends at 11 d + e + t = 45 t + e: 16 t more (5 d - 4 t). GPU-bound (d = t / 4): without the wait, d + 10 t
// + e; with it k1 is issued d after the message (then the GPU is the bound again): 2 d + 10 t + e, d more.
// A wait at op 0 has nothing before it: no change.
TEST(ReplayEngine, AHostSynchronisationWaitsForTheGpuBeforeIssuingMore) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  const double t = kernel_time(gpu, elementwise("k", 1e9)).time_s;
  const auto run = [&](double d, std::vector<OpId> syncs) {
    return testing::in_child([&] {
      const Cluster cluster = Cluster::build(testing::fat_tree_spec(1, 2, 1));
      ExecutionGraph g(2);
      const auto comm = g.add_communicator({"pp", {{0, 1}}});
      RankClass& a = g.add_class("stage 0", {0});
      RankClass& b = g.add_class("stage 1", {1});
      OpId last = 0;
      for (int k = 0; k < 5; ++k) {
        const std::vector<OpId> deps = k > 0 ? std::vector<OpId>{last} : std::vector<OpId>{};
        last = a.ops.add_compute(elementwise("k", 1e9), deps);
      }
      a.ops.add_p2p(P2POp{"send", OpKind::send, comm, +1, 0, 1e3, 3, false}, std::vector<OpId>{last});
      last = b.ops.add_p2p(P2POp{"recv", OpKind::recv, comm, -1, 0, 1e3, 5, false});
      for (int k = 0; k < 5; ++k)
        last = b.ops.add_compute(elementwise("k", 1e9), std::vector<OpId>{last});
      b.host_syncs = std::move(syncs);
      auto backend = make_flow_backend(cluster, ideal_network_profile());
      ReplayOptions options;
      options.host_op_s = d;
      const ReplayResult r = replay(g, cluster, gpu, *backend, options);
      return std::vector<double>{r.step_time_s, r.classes.at(1).compute_s};
    });
  };
  const auto free_host = run(4.0 * t, {});
  const double e = free_host[0] - 29.0 * t;  // the message's time on the wire
  EXPECT_GT(e, 0.0);
  EXPECT_LT(e, 0.1 * t);
  const auto waiting = run(4.0 * t, {1});
  EXPECT_NEAR(waiting[0], 45.0 * t + e, 1e-9 * t);
  EXPECT_NEAR(waiting[1], 5.0 * t, 1e-9 * t);  // the same kernels
  EXPECT_NEAR(run(4.0 * t, {0})[0], free_host[0], 1e-9 * t);
  const double d = 0.25 * t;
  const auto gpu_free = run(d, {});
  EXPECT_NEAR(gpu_free[0], d + 10.0 * t + e, 1e-9 * t);
  EXPECT_NEAR(run(d, {1})[0], 2.0 * d + 10.0 * t + e, 1e-9 * t);
}

// A collective on the communication stream overlaps independent compute: the step is the longer of
// the two, and only the part of the collective that outlasts compute is exposed.
TEST(ReplayEngine, CommunicationOverlapsIndependentCompute) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  const double compute = kernel_time(gpu, elementwise("c", 1e9)).time_s;
  const ClusterSpec spec = testing::fat_tree_spec(2, 1, 1);
  // Ring all-reduce of 256 MB over 2 ranks: S/B + 2a (2(N-1)/N = 1).
  const double bytes = 256e6;
  const double comm = bytes / 50e9 + 2 * 1.2e-6;
  const auto r = run_graph(spec, [&](int world) {
    ExecutionGraph g(world);
    const auto dp = g.add_communicator({"dp", {iota(world)}});
    auto& rc = g.add_class("all", iota(world));
    rc.ops.add_collective({"ar", CollectiveKind::all_reduce, dp, bytes, 1});
    rc.ops.add_compute(elementwise("c", 1e9));
    return g;
  });
  EXPECT_NEAR(r[0], std::max(compute, comm), 1e-9);
  EXPECT_NEAR(r[2], std::max(0.0, comm - compute), 1e-9);
}

// A userbuffers communicator (Transformer Engine's tp-comm-overlap) runs the same plan as NCCL on the
// same ranks but pays no NCCL per-call latency. Hand-worked: ring all-reduce of 256 MB over 2 ranks
// on 50 GB/s NICs: S/B + 2 x 1.2 us per step; NCCL adds the profile's 30 us per call.
TEST(ReplayEngine, UserbuffersCollectivesPayNoNcclCallLatency) {
  const ClusterSpec spec = testing::fat_tree_spec(2, 1, 1);
  const double bytes = 256e6;
  const double wire_s = bytes / 50e9 + 2 * 1.2e-6;
  const double call_s = 30e-6;
  // One flow backend per process (SimGrid): each run in its own child. Returns {step, protocol ok}.
  const auto run = [&](bool userbuffers) {
    return testing::in_child([&] {
      const Cluster cluster = Cluster::build(spec);
      const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
      NetworkProfile profile = ideal_network_profile();
      profile.collective_latency_s.value = call_s;
      ExecutionGraph g(cluster.gpu_count());
      const auto tp = g.add_communicator({"tp", {iota(cluster.gpu_count())}, userbuffers});
      auto& rc = g.add_class("all", iota(cluster.gpu_count()));
      rc.ops.add_collective({"ar", CollectiveKind::all_reduce, tp, bytes, 1});
      auto backend = make_flow_backend(cluster, profile);
      ReplayOptions options;
      options.collective_algorithm = "ring";
      options.network_profile = profile;
      const ReplayResult res = replay(g, cluster, gpu, *backend, options);
      const bool protocol_ok = res.collectives.at(0).protocol == (userbuffers ? "userbuffers" : "Simple");
      return std::vector<double>{res.step_time_s, protocol_ok ? 1.0 : 0.0};
    });
  };
  const auto nccl = run(false);
  const auto ub = run(true);
  EXPECT_NEAR(nccl[0], wire_s + call_s, 1e-9);  // NCCL: the wire and the call
  EXPECT_NEAR(ub[0], wire_s, 1e-9);             // userbuffers: the wire only
  EXPECT_EQ(nccl[1], 1.0);                      // reported protocols: Simple, userbuffers
  EXPECT_EQ(ub[1], 1.0);
}

// A dependency serializes: compute after the collective it depends on.
TEST(ReplayEngine, DependenciesAcrossStreamsSerialize) {
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  const double compute = kernel_time(gpu, elementwise("c", 1e9)).time_s;
  const double bytes = 256e6;
  const double comm = bytes / 50e9 + 2 * 1.2e-6;
  const auto r = run_graph(testing::fat_tree_spec(2, 1, 1), [&](int world) {
    ExecutionGraph g(world);
    const auto dp = g.add_communicator({"dp", {iota(world)}});
    auto& rc = g.add_class("all", iota(world));
    const OpId ar = rc.ops.add_collective({"ar", CollectiveKind::all_reduce, dp, bytes, 1});
    rc.ops.add_compute(elementwise("c", 1e9), std::vector<OpId>{ar});
    return g;
  });
  EXPECT_NEAR(r[0], comm + compute, 1e-9);
  EXPECT_NEAR(r[2], comm, 1e-9);
}

// Two rank classes that issue collectives on one communicator in different orders wait on each
// other forever: the replay reports which ranks wait on which op instead of hanging.
TEST(ReplayEngine, DeadlockIsReportedNotHung) {
  expect_two_gpu_replay_error(
      [](int world) {
        ExecutionGraph g(world);
        const auto a = g.add_communicator({"a", {iota(world)}});
        const auto b = g.add_communicator({"b", {iota(world)}});
        auto& r0 = g.add_class("rank 0", {0});
        auto& r1 = g.add_class("rank 1", {1});
        r0.ops.add_collective({"first a", CollectiveKind::all_reduce, a, 1e6, 1});
        r0.ops.add_collective({"then b", CollectiveKind::all_reduce, b, 1e6, 1});
        r1.ops.add_collective({"first b", CollectiveKind::all_reduce, b, 1e6, 1});
        r1.ops.add_collective({"then a", CollectiveKind::all_reduce, a, 1e6, 1});
        return g;
      },
      {"deadlock", "'first a'", "'first b'"});
}

TEST(ReplayEngine, MismatchedCollectivesAreReported) {
  expect_two_gpu_replay_error(
      [](int world) {
        ExecutionGraph g(world);
        const auto a = g.add_communicator({"dp", {iota(world)}});
        g.add_class("rank 0", {0}).ops.add_collective({"x", CollectiveKind::all_reduce, a, 1e6, 1});
        g.add_class("rank 1", {1}).ops.add_collective({"y", CollectiveKind::all_gather, a, 1e6, 1});
        return g;
      },
      {"mismatched collectives"});
}

// An all_to_allv's ranks must agree on its per-pair sizes, and the matrix must fit the group.
TEST(ReplayEngine, AllToAllvMatricesMustAgreeAndFitTheGroup) {
  const auto graph_with = [](std::vector<double> first, std::vector<double> second) {
    return [first, second](int world) {
      ExecutionGraph g(world);
      const auto ep = g.add_communicator({"ep", {iota(world)}});
      g.add_class("rank 0", {0}).ops.add_collective({"x", CollectiveKind::all_to_all, ep, 3.0, 1, first});
      g.add_class("rank 1", {1}).ops.add_collective({"x", CollectiveKind::all_to_all, ep, 3.0, 1, second});
      return g;
    };
  };
  EXPECT_NO_THROW(run_graph(testing::fat_tree_spec(2, 1, 1), graph_with({0, 3, 1, 0}, {0, 3, 1, 0}), 0.0, "auto"));
  expect_two_gpu_replay_error(graph_with({0, 3, 1, 0}, {0, 3, 2, 0}), {"different per-pair sizes"}, "auto");
  expect_two_gpu_replay_error(graph_with({0, 3, 1}, {0, 3, 1}),
                              {"3 per-pair sizes for a group of 2 ranks (4 expected)"}, "auto");
}

// The replays of one graph sharing a memo bound to it (simulate's: the clock solver's replays, then
// the flow one) build its per-op structure (successors, stream queues, kernel numbering) once and
// lend it to the next: each equals a replay without the memo to the last bit, at another clock too
// (each replay times its kernels afresh), with replays without the memo in between.
TEST(ReplayEngine, ReplaysOfOneGraphSharingItsMemoEqualFreshReplays) {
  // D-mod-K: the classes apply to every replay (under adaptive routing this step's checks fail at a
  // launch and every transfer is replayed: sim/replay/traffic_classes.hpp).
  ClusterSpec cluster_spec = testing::fat_tree_spec(16, 2, 2, 400.0, 450.0, 1.0, 8);
  cluster_spec.fabric.routing = "d_mod_k";
  const Cluster cluster = Cluster::build(cluster_spec);
  const WorkloadSpec spec = testing::small_tp2_pp2_workload("memo", 8, 32);
  const ExecutionGraph graph = generate_transformer_training(spec, cluster.gpu_count());
  const GpuSpec capped = find_gpu("h100-sxm5-80gb", "test", "/gpu");  // the clock solver's first run: the TDP
  GpuSpec boost = capped;
  boost.tensor_power_budget_w = boost.tensor_boost_w;  // a later run: the budget of a step with idle time
  auto run = [&](const GpuSpec& gpu, std::shared_ptr<ReplayMemo> memo, double nvlink_efficiency = 1.0) {
    auto backend = find_network_backend("analytical")->make(cluster, ideal_network_profile());
    ReplayOptions options;
    options.memo = std::move(memo);
    options.network_profile.of(LinkTechnology::nvlink).bandwidth_efficiency.value = nvlink_efficiency;
    return replay(graph, cluster, gpu, *backend, options);
  };
  const auto memo = make_replay_memo(&graph);
  for (const GpuSpec* gpu : std::initializer_list<const GpuSpec*>{&capped, &boost, &capped, &boost}) {
    const ReplayResult fresh = run(*gpu, nullptr);
    const ReplayResult lent = run(*gpu, memo);
    EXPECT_GT(fresh.step_time_s, 0.0);
    EXPECT_EQ(fresh.step_time_s, lent.step_time_s);
    ASSERT_NO_FATAL_FAILURE(testing::expect_same_class_times(
        fresh, lent,
        {&ClassTimes::finish_s, &ClassTimes::compute_s, &ClassTimes::tensor_s, &ClassTimes::exposed_communication_s}));
    ASSERT_EQ(fresh.collectives.size(), lent.collectives.size());
    for (std::size_t i = 0; i < fresh.collectives.size(); ++i) {
      EXPECT_EQ(fresh.collectives[i].start_s, lent.collectives[i].start_s) << i;
      EXPECT_EQ(fresh.collectives[i].end_s, lent.collectives[i].end_s) << i;
      EXPECT_EQ(fresh.collectives[i].algorithm, lent.collectives[i].algorithm) << i;
    }
    EXPECT_EQ(fresh.link_bytes, lent.link_bytes);
    // Both in traffic classes (D-mod-K routing); the lent runs on the first
    // one's plans and channels (ReplayMemo): the same transfers as fresh plans give.
    EXPECT_LT(2 * lent.transfers_simulated, lent.transfers);
    EXPECT_EQ(fresh.transfers_simulated, lent.transfers_simulated);
    EXPECT_EQ(fresh.link_bytes_by_communicator, lent.link_bytes_by_communicator);
  }
  // The clock matters (else the comparison at two clocks shows nothing): capped GEMMs are slower.
  EXPECT_LT(run(boost, memo).classes[0].tensor_s, run(capped, memo).classes[0].tensor_s);
  // The collective plans are lent too, only to a replay that plans alike: with another network profile
  // (NVLink at half its rate: the tensor-parallel collectives' closed-form times, fixed when planned)
  // the memo's plans are not used, and the replay equals a fresh one with that profile, which differs
  // from the first (else the check shows nothing).
  for (const double efficiency : {0.5, 1.0, 0.5}) {
    const ReplayResult fresh = run(capped, nullptr, efficiency);
    const ReplayResult lent = run(capped, memo, efficiency);
    EXPECT_EQ(fresh.step_time_s, lent.step_time_s) << efficiency;
    EXPECT_EQ(fresh.link_bytes, lent.link_bytes) << efficiency;
    EXPECT_EQ(fresh.link_busy_s, lent.link_busy_s) << efficiency;
  }
  EXPECT_GT(run(capped, memo, 0.5).step_time_s, run(capped, memo).step_time_s);
}

}  // namespace
}  // namespace clustersim
