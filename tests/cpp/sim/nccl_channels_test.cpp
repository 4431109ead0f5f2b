// NCCL's channels by size, its per-channel caps and the ring's pipeline fill (nccl_channels.hpp)
// against their closed forms and NCCL's own rules (NCCL 2.27.7; RCCL develop at 0cbce2a).
#include "sim/collectives/nccl_channels.hpp"

#include <gtest/gtest.h>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/network/nccl_tests.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

using testing::iota_ranks;

constexpr double kMiB = 1024.0 * 1024.0;

// A pipeline of k stages and C chunks of c bytes at rate r: (C + k - 1) c / r. A ring of N = 8 ranks with
// C = 16 chunks of 1 MiB at 100 GB/s: (16 + 7) x 1 MiB / 100 GB/s = 241.17 us, of which the fill is
// 7 x 1 MiB / 100 GB/s = 73.40 us.
TEST(NcclChannels, PipelineFillOfARingHasItsClosedForm) {
  EXPECT_NEAR(pipeline_time_s(8, 16, kMiB, 100e9), 23 * kMiB / 100e9, 1e-15);
  EXPECT_NEAR(pipeline_time_s(8, 16, kMiB, 100e9) - 16 * kMiB / 100e9, 7 * kMiB / 100e9, 1e-15);
  EXPECT_NEAR(7 * kMiB / 100e9, 73.40e-6, 0.01e-6);
  // One stage: no fill.
  EXPECT_NEAR(pipeline_time_s(1, 16, kMiB, 100e9), 16 * kMiB / 100e9, 1e-15);
  // RCCL's ring fill takes the chunk of one step, min(chunkSize, S/N): Simple's chunk is 2 MiB (4 MiB buffer /
  // 8 steps x 4 chunk steps). 64 MiB over 8 ranks: S/N = 8 MiB > 2 MiB -> 7 x 2 MiB / r.
  const NcclLibraryConstants& rccl = nccl_library(NcclLibrary::rccl);
  EXPECT_NEAR(ring_pipeline_fill_s(rccl, NcclProtocol::simple, CollectiveKind::all_reduce, 8, 64 * kMiB, 100e9),
              7 * 2 * kMiB / 100e9, 1e-15);
  // 4 MiB: S/N = 512 KiB -> 7 x 512 KiB / r.
  EXPECT_NEAR(ring_pipeline_fill_s(rccl, NcclProtocol::simple, CollectiveKind::all_reduce, 8, 4 * kMiB, 100e9),
              7 * 0.5 * kMiB / 100e9, 1e-15);
  // LL's chunk: 32 KiB steps / 2 = 16 KiB (256 threads); LL128's: 57,344 B steps x 7/8 = 50,176 B.
  EXPECT_NEAR(ring_pipeline_fill_s(rccl, NcclProtocol::ll, CollectiveKind::all_reduce, 8, 64 * kMiB, 100e9),
              7 * 16384.0 / 100e9, 1e-15);
  EXPECT_NEAR(ring_pipeline_fill_s(rccl, NcclProtocol::ll128, CollectiveKind::all_reduce, 8, 64 * kMiB, 100e9),
              7 * 50176.0 / 100e9, 1e-15);
  // A chain (broadcast) moves its whole buffer per hop, in Simple chunks of one step (512 KiB).
  EXPECT_NEAR(ring_pipeline_fill_s(rccl, NcclProtocol::simple, CollectiveKind::broadcast, 8, 64 * kMiB, 100e9),
              7 * 0.5 * kMiB / 100e9, 1e-15);
  EXPECT_EQ(ring_pipeline_fill_s(rccl, NcclProtocol::simple, CollectiveKind::all_reduce, 1, 64 * kMiB, 100e9), 0.0);
  // NCCL's rings take no fill (nccl_channels.cpp: its published single-node tables contradict it), though
  // its chunks are known: Simple 2 MiB, LL128 576,000 B, LL 32 KiB.
  const NcclLibraryConstants& nccl = nccl_library(NcclLibrary::nccl);
  EXPECT_EQ(ring_pipeline_fill_s(nccl, NcclProtocol::simple, CollectiveKind::all_reduce, 8, 64 * kMiB, 100e9), 0.0);
  EXPECT_DOUBLE_EQ(nccl.ring_chunk_bytes[static_cast<int>(NcclProtocol::ll128)], 576000.0);
  EXPECT_DOUBLE_EQ(nccl.ring_chunk_bytes[static_cast<int>(NcclProtocol::ll)], 32768.0);
}

// The fill in a planned ring. RCCL's: 8 x MI300X (one amd-mi300x-roce node: 7 xGMI rings) with the ideal
// profile and RCCL's protocols. Every latency of the plan but the fill is the same at every size, so the
// latency part at 64 MiB less that at 1 MiB is the fill's difference: (N-1) (min(8 MiB, 2 MiB) -
// min(128 KiB, 2 MiB)) / r, with r the rate a rank sends at (2(N-1)/N S over the bandwidth part).
// NCCL's rings do not take it (NCCL's published single-node tables contradict it, nccl_channels.cpp): on
// an H100-like node the same difference is 0.
TEST(NcclChannels, RingPlanPaysItsPipelineFillOnRccl) {
  NetworkProfile profile = ideal_network_profile();
  profile.nccl_protocols = true;
  const auto ranks = iota_ranks(8);
  const auto parts = [&](const Cluster& c, double bytes) {
    const CollectiveContext ctx{c, profile};
    return idle_fabric_time_parts(ctx,
                                  plan_collective("ring", "Simple", ctx, {CollectiveKind::all_reduce, &ranks, bytes}));
  };
  const Cluster mi300x = Cluster::build(load_cluster_spec("amd-mi300x-roce", {{"nodes", "1"}}));
  const IdleFabricTime small = parts(mi300x, kMiB), large = parts(mi300x, 64 * kMiB);
  const double rate_Bps = 2 * 7.0 / 8 * 64 * kMiB / large.bandwidth_s;
  EXPECT_NEAR(rate_Bps, 2 * 7.0 / 8 * kMiB / small.bandwidth_s, 1e-9 * rate_Bps);  // the same rate
  const double fill_difference_s = 7 * (2 * kMiB - kMiB / 8) / rate_Bps;
  EXPECT_NEAR(large.latency_s - small.latency_s, fill_difference_s, 1e-9 * fill_difference_s);
  EXPECT_GT(fill_difference_s, 10e-6);  // 7 x 1.875 MiB at 7 links x 64 GB/s = 30.7 us
  ClusterSpec spec = testing::fat_tree_spec(1, 8, 8, 400.0, 200.0);
  spec.node.scale_up.generation = "nvlink4";
  const Cluster h100 = Cluster::build(spec);
  EXPECT_NEAR(parts(h100, 64 * kMiB).latency_s, parts(h100, kMiB).latency_s, 1e-15);
}

// NCCL's channel count by size (enqueue.cc topoGetAlgoInfo: while nBytes < nc x nThreads x threshold,
// nc--): Simple 512 threads x 64 = 32 KiB per channel, LL128 640 x 8 = 5,120 B, the ring's LL 512 x 8 x
// nRanks (8 ranks: 32 KiB); at most MAXCHANNELS (64). RCCL: 256 threads for every protocol (Simple:
// 16 KiB per channel), at most 128.
TEST(NcclChannels, ChannelCountBySizeFollowsNcclsRule) {
  const NcclLibraryConstants& nccl = nccl_library(NcclLibrary::nccl);
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::simple, 8, 8, 32), 1);
  // 100,000 B: 3 x 32,768 = 98,304 <= 100,000 < 4 x 32,768.
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::simple, 100000, 8, 32), 3);
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::simple, 1 * kMiB, 8, 32), 32);
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::simple, 512 * 1024, 8, 32), 16);
  // LL128: 16 KiB / 5,120 B -> 3.
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::ll128, 16384, 8, 32), 3);
  // The ring's LL threshold grows with the ranks: 16 ranks -> 512 x 8 x 16 = 64 KiB per channel.
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::ll, 256 * 1024, 8, 32), 8);
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::ll, 256 * 1024, 16, 32), 4);
  // The tree's LL does not: 4 KiB per channel.
  EXPECT_EQ(nccl_channels_for_size(nccl, false, NcclProtocol::ll, 256 * 1024, 16, 32), 32);
  // Never above MAXCHANNELS.
  EXPECT_EQ(nccl_channels_for_size(nccl, true, NcclProtocol::simple, 1e12, 8, 1000), 64);
  const NcclLibraryConstants& rccl = nccl_library(NcclLibrary::rccl);
  EXPECT_EQ(nccl_channels_for_size(rccl, true, NcclProtocol::simple, 100000, 8, 128), 6);  // 6 x 16,384 <= 100,000
  EXPECT_EQ(nccl_channels_for_size(rccl, true, NcclProtocol::simple, 1e12, 8, 1000), 128);
}

// NCCL's per-channel caps (tuning.cc, GB/s): ring LL128 36.7 on Hopper (73.4 on Blackwell, 20 before);
// tree all-reduce 38.7 / 41.4 / 36.0 on Hopper for 1 / 2 / 4+ nodes; tree LL128 the lower of that and
// 36.7 / 36.7 / 29.0; none for ring Simple and LL.
TEST(NcclChannels, PerChannelCapsAreNccls) {
  struct Cap {
    const char* algorithm;
    NcclProtocol protocol;
    CollectiveKind kind;
    const char* generation;
    int nodes;
    double cap_Bps;
  };
  const Cap caps[] = {
      {"ring", NcclProtocol::ll128, CollectiveKind::all_reduce, "nvlink4", 2, 36.7e9},
      {"ring", NcclProtocol::ll128, CollectiveKind::all_gather, "nvlink5", 1, 73.4e9},
      {"ring", NcclProtocol::ll128, CollectiveKind::all_reduce, "nvlink3", 1, 20e9},
      {"ring", NcclProtocol::simple, CollectiveKind::all_reduce, "nvlink4", 2, 0.0},
      {"ring", NcclProtocol::ll, CollectiveKind::all_reduce, "nvlink4", 2, 0.0},
      {"tree", NcclProtocol::simple, CollectiveKind::all_reduce, "nvlink4", 2, 41.4e9},
      {"tree", NcclProtocol::simple, CollectiveKind::all_reduce, "nvlink4", 8, 36.0e9},
      {"tree", NcclProtocol::ll128, CollectiveKind::all_reduce, "nvlink4", 8, 29.0e9},
  };
  for (const Cap& c : caps)
    EXPECT_DOUBLE_EQ(nccl_per_channel_cap_Bps(c.algorithm, c.protocol, c.kind, c.generation, c.nodes), c.cap_Bps)
        << c.algorithm << " " << c.generation << " " << c.nodes << " nodes";
}

// Two nodes of 8 H100 with 8 x 400 Gb/s NICs each: a 16 KiB ring all-reduce under LL128 runs on 3
// channels (16,384 / 5,120), so its bus bandwidth is capped at 3 x 36.7 = 110.1 GB/s, where the NICs
// (and NVLink) would give the Simple plan far more (the plan's bus bandwidth, checked > 300 GB/s; LL128
// alone would be 0.92 of it).
TEST(NcclChannels, PerChannelCapBindsWhereTheNicsAllowMore) {
  ClusterSpec spec = testing::fat_tree_spec(2, 8, 8);
  spec.node.scale_up.generation = "nvlink4";
  const Cluster cluster = Cluster::build(spec);
  NetworkProfile profile = ideal_network_profile();
  profile.nccl_protocols = true;
  const auto ranks = iota_ranks(16);
  const CollectiveContext ctx{cluster, profile};
  const double bytes = 16384;
  const CollectiveRequest request{CollectiveKind::all_reduce, &ranks, bytes};
  const double bus_bytes = bus_factor(CollectiveKind::all_reduce, 16) * bytes;  // 2 x 15/16 x S
  const double simple_bw_s = idle_fabric_time_parts(ctx, plan_collective("ring", "Simple", ctx, request)).bandwidth_s;
  EXPECT_GT(bus_bytes / simple_bw_s, 300e9);
  const double ll128_bw_s = idle_fabric_time_parts(ctx, plan_collective("ring", "LL128", ctx, request)).bandwidth_s;
  EXPECT_NEAR(bus_bytes / ll128_bw_s, 3 * 36.7e9, 1e-6 * 3 * 36.7e9);
  // 1 MiB runs on 64 channels (capped at MAXCHANNELS): the cap (2.35 TB/s) does not bind, LL128 is 0.92 of Simple.
  const CollectiveRequest big{CollectiveKind::all_reduce, &ranks, kMiB};
  const double simple_big = idle_fabric_time_parts(ctx, plan_collective("ring", "Simple", ctx, big)).bandwidth_s;
  const double ll128_big = idle_fabric_time_parts(ctx, plan_collective("ring", "LL128", ctx, big)).bandwidth_s;
  EXPECT_NEAR(ll128_big, simple_big / 0.92, 1e-9 * ll128_big);
}

}  // namespace
}  // namespace clustersim
