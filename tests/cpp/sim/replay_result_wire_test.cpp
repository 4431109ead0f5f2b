// A replay's result sent from a child process as bytes (sim/replay/replay_result_wire.hpp): the parent
// gets every field back bit for bit, and bytes that end early or run on are refused.
#include "sim/replay/replay_result_wire.hpp"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/network/network_profile.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

// A generated step (tp 2, pp 2, dp 4 on 8 nodes of 2 GPUs) replayed with a timeline of two classes:
// every kind of field is filled (class times, collectives, point-to-point records, links per
// communicator, timeline slices with their algorithm names and flow ids).
ReplayResult replayed_step() {
  const Cluster cluster = Cluster::build(testing::fat_tree_spec(8, 2, 2, 400.0, 450.0, 1.0, 8));
  const WorkloadSpec spec = testing::small_tp2_pp2_workload("wire", 4, 16);
  const ExecutionGraph graph = generate_transformer_training(spec, cluster.gpu_count());
  auto backend = find_network_backend("analytical")->make(cluster, ideal_network_profile());
  ReplayOptions options;
  options.timeline_classes = 2;
  return replay(graph, cluster, find_gpu("h100-sxm5-80gb", "test", "/gpu"), *backend, options);
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(ReplayResultWire, ARoundTripKeepsEveryFieldBitForBit) {
  const ReplayResult r = replayed_step();
  ASSERT_FALSE(r.collectives.empty());
  ASSERT_FALSE(r.p2p.empty());
  ASSERT_FALSE(r.timeline.empty());
  ASSERT_EQ(r.timeline_classes.size(), 2U);
  const std::string bytes = encode_replay_result(r);
  const ReplayResult back = decode_replay_result(bytes);
  EXPECT_TRUE(same_bits(back.step_time_s, r.step_time_s));
  ASSERT_EQ(back.classes.size(), r.classes.size());
  EXPECT_EQ(std::memcmp(back.classes.data(), r.classes.data(), r.classes.size() * sizeof(ClassTimes)), 0);
  EXPECT_EQ(back.critical_class, r.critical_class);
  ASSERT_EQ(back.collectives.size(), r.collectives.size());
  for (std::size_t i = 0; i < r.collectives.size(); ++i) {
    const CollectiveRecord &a = back.collectives[i], &b = r.collectives[i];
    EXPECT_EQ(a.communicator, b.communicator);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.algorithm, b.algorithm);
    EXPECT_EQ(a.protocol, b.protocol);
    EXPECT_EQ(a.channels, b.channels);
    EXPECT_TRUE(same_bits(a.bytes, b.bytes) && same_bits(a.start_s, b.start_s) && same_bits(a.end_s, b.end_s) &&
                same_bits(a.exposed_s, b.exposed_s))
        << i;
  }
  EXPECT_EQ(back.link_bytes, r.link_bytes);
  EXPECT_EQ(back.link_busy_s, r.link_busy_s);
  EXPECT_EQ(back.link_bytes_by_communicator, r.link_bytes_by_communicator);
  EXPECT_EQ(back.transfers, r.transfers);
  EXPECT_EQ(back.transfers_simulated, r.transfers_simulated);
  EXPECT_TRUE(same_bits(back.p2p_bytes, r.p2p_bytes));
  ASSERT_EQ(back.p2p.size(), r.p2p.size());
  for (const auto& [comm, rec] : r.p2p) {
    ASSERT_EQ(back.p2p.count(comm), 1U);
    EXPECT_EQ(back.p2p.at(comm).count, rec.count);
    EXPECT_TRUE(same_bits(back.p2p.at(comm).bytes, rec.bytes) && same_bits(back.p2p.at(comm).time_s, rec.time_s));
  }
  ASSERT_EQ(back.timeline.size(), r.timeline.size());
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    const TimelineSlice &a = back.timeline[i], &b = r.timeline[i];
    EXPECT_TRUE(a.rank_class == b.rank_class && a.op == b.op && a.stream == b.stream && a.algorithm == b.algorithm &&
                a.flow == b.flow && same_bits(a.start_s, b.start_s) && same_bits(a.end_s, b.end_s))
        << i;
  }
  EXPECT_EQ(back.timeline_classes, r.timeline_classes);
  EXPECT_EQ(encode_replay_result(back), bytes);  // and the same bytes again
}

TEST(ReplayResultWire, BytesThatEndEarlyOrRunOnAreRefused) {
  const std::string bytes = encode_replay_result(replayed_step());
  EXPECT_THROW(decode_replay_result(std::string_view(bytes).substr(0, bytes.size() - 1)), SimulationError);
  EXPECT_THROW(decode_replay_result(std::string_view(bytes).substr(0, bytes.size() / 2)), SimulationError);
  EXPECT_THROW(decode_replay_result(bytes + '\0'), SimulationError);
  EXPECT_THROW(decode_replay_result(""), SimulationError);
}

}  // namespace
}  // namespace clustersim
