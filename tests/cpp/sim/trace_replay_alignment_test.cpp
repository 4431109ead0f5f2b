// Ranks of a real trace captured at different times are aligned by their collectives: the replay
// uses each rank's measured kernel times and dependencies, never its clock, so every rank starts at 0
// and a collective starts when the last of its ranks arrives. PARAM's DLRM world (8 ranks, each
// captured on its own: their ProfilerStep#10 begin up to 7.5 ms apart, their first all_to_all kernel
// 3.07 to 3.91 ms into the step).
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/replay/replay_engine.hpp"
#include "sim_test_support.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim {
namespace {

TEST(TraceReplayAlignment, RanksCapturedAtDifferentTimesMeetAtTheirFirstCollective) {
  const ExecutionGraph graph =
      read_pytorch_trace(std::string(CLUSTERSIM_SOURCE_DIR) + "/workloads/traces/corpus/param_dlrm_8r");
  ASSERT_EQ(graph.classes().size(), 8u);
  // Per rank: {first op start, first collective start, its latest predecessor's end (its arrival)}.
  const std::vector<double> v = testing::in_child([&] {
    const Cluster cluster = Cluster::build(testing::fat_tree_spec(1, 8, 8));
    auto backend = find_network_backend("analytical")->make(cluster, ideal_network_profile());
    ReplayOptions options;
    options.timeline_classes = 8;
    const ReplayResult r = replay(graph, cluster, find_gpu("h100-sxm5-80gb", "test", "/gpu"), *backend, options);
    std::vector<double> out;
    for (std::size_t c = 0; c < graph.classes().size(); ++c) {
      const OpTable& ops = graph.classes()[c].ops;
      std::map<OpId, const TimelineSlice*> slice;
      for (const auto& s : r.timeline)
        if (s.rank_class == c) slice[s.op] = &s;
      OpId first = 0;
      while (first < ops.size() && ops.kind(first) != OpKind::collective)
        ++first;
      double first_start = std::numeric_limits<double>::infinity();
      for (const auto& [op, s] : slice)
        first_start = std::min(first_start, s->start_s);
      // The collective's arrival: its dependencies and its stream's previous op have ended.
      double arrival = 0.0;
      for (OpId d : ops.deps(first))
        arrival = std::max(arrival, slice.at(d)->end_s);
      for (OpId i = first; i-- > 0;)
        if (ops.stream(i) == ops.stream(first)) {
          arrival = std::max(arrival, slice.at(i)->end_s);
          break;
        }
      out.insert(out.end(), {first_start, slice.at(first)->start_s, arrival});
    }
    return out;
  });
  ASSERT_EQ(v.size(), 24u);
  double latest_arrival = 0.0, earliest_arrival = std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < 8; ++c) {
    SCOPED_TRACE("rank " + std::to_string(c));
    EXPECT_EQ(v[3 * c], 0.0);       // no rank waits for its capture's clock
    EXPECT_EQ(v[3 * c + 1], v[1]);  // the first all_to_all starts together on every rank
    EXPECT_GT(v[3 * c + 2], 0.0);   // after some work of the rank's own
    latest_arrival = std::max(latest_arrival, v[3 * c + 2]);
    earliest_arrival = std::min(earliest_arrival, v[3 * c + 2]);
  }
  // It starts when the last rank arrives; the others waited for it.
  EXPECT_DOUBLE_EQ(v[1], latest_arrival);
  EXPECT_LT(earliest_arrival, latest_arrival);
}

}  // namespace
}  // namespace clustersim
