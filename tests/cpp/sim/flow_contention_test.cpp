// Contention comes from SimGrid's max-min sharing: flows that share a link share its bandwidth.
#include <gtest/gtest.h>

#include "sim/network/flow_backend.hpp"
#include "sim/network/network_profile.hpp"
#include "sim_test_support.hpp"

namespace clustersim {
namespace {

// Starts `transfers` at time 0 on a fresh flow backend; returns {completion time, link bytes...}.
std::vector<double> run_transfers(const ClusterSpec& spec, std::vector<Transfer> transfers) {
  return testing::in_child([&] {
    const Cluster cluster = Cluster::build(spec);
    auto backend = make_flow_backend(cluster, ideal_network_profile());
    double done_at = -1.0;
    backend->schedule(0.0, [&] { backend->start_transfers(transfers, 0, [&] { done_at = backend->now_s(); }); });
    backend->run();
    std::vector<double> out{done_at};
    for (double b : backend->link_bytes())
      out.push_back(b);
    return out;
  });
}

// Two nodes of two GPUs sharing one 400 Gb/s NIC (50 GB/s): GPU0 -> GPU2 and GPU1 -> GPU3 both
// cross node 0's NIC uplink.
ClusterSpec shared_nic_spec() {
  return testing::fat_tree_spec(2, 2, 1);
}

TEST(FlowContention, OneFlowGetsTheWholeLink) {
  const double bytes = 1e9;
  const auto r = run_transfers(shared_nic_spec(), {{0, 2, bytes}});
  EXPECT_NEAR(r[0], bytes / 50e9, 1e-9);
}

TEST(FlowContention, TwoFlowsThroughOneLinkEachGetHalf) {
  const double bytes = 1e9;
  const auto r = run_transfers(shared_nic_spec(), {{0, 2, bytes}, {1, 3, bytes}});
  // Each flow moves at 25 GB/s: both finish at 2 x bytes / 50 GB/s.
  EXPECT_NEAR(r[0], 2 * bytes / 50e9, 1e-9);
}

TEST(FlowContention, FlowsOnDisjointLinksDoNotInterfere) {
  const double bytes = 1e9;
  // Inside node 0 over NVSwitch (450 GB/s) and inside node 1: no shared link.
  const auto r = run_transfers(shared_nic_spec(), {{0, 1, bytes}, {2, 3, bytes}});
  EXPECT_NEAR(r[0], bytes / 450e9, 1e-12);
}

TEST(FlowContention, EveryLinkOfTheRouteCarriesTheBytes) {
  const double bytes = 1e9;
  const ClusterSpec spec = shared_nic_spec();
  const auto r = run_transfers(spec, {{0, 2, bytes}});
  const Cluster cluster = Cluster::build(spec);
  std::vector<int> route;
  cluster.route(0, 2, 0, route);
  double total = 0;
  for (std::size_t i = 1; i < r.size(); ++i)
    total += r[i];
  for (int l : route)
    EXPECT_DOUBLE_EQ(r[static_cast<std::size_t>(l) + 1], bytes);
  // Conservation: no link carries bytes that are not on the route.
  EXPECT_DOUBLE_EQ(total, bytes * static_cast<double>(route.size()));
}

TEST(FlowContention, ZeroByteAndSelfTransfersFinishAtOnce) {
  const auto r = run_transfers(shared_nic_spec(), {{0, 0, 1e9}, {1, 2, 0.0}});
  EXPECT_DOUBLE_EQ(r[0], 0.0);
}

}  // namespace
}  // namespace clustersim
