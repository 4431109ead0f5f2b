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

// Routing decides whether flows meet. A 2-tier fat-tree of radix 8 (4 uplinks per leaf, 4 nodes of one
// GPU and one NIC each per leaf): GPU 3 -> GPU 4 and GPU 2 -> GPU 8 both leave leaf 0 and go to port 0
// of another leaf. D-mod-K sends both up the same uplink (digit 0): each gets half of it. Adaptive
// routing sees the first transfer on that uplink and takes another: both run at the NIC's full
// 50 GB/s. Both backends agree.
TEST(FlowContention, AdaptiveRoutingAvoidsTheUplinkDestinationRoutingShares) {
  const double bytes = 1e9;
  for (const char* fidelity : {"flow", "analytical"}) {
    for (const char* routing : {"d_mod_k", "adaptive"}) {
      ClusterSpec spec = testing::fat_tree_spec(12, 1, 1, 400.0, 450.0, 1.0, 8);
      spec.fabric.routing = routing;
      const double done_s = testing::in_child([&] {
        const Cluster cluster = Cluster::build(spec);
        auto backend = find_network_backend(fidelity)->make(cluster, ideal_network_profile());
        double done_at = -1.0;
        const std::vector<Transfer> t{{3, 4, bytes}, {2, 8, bytes}};
        backend->schedule(0.0, [&] { backend->start_transfers(t, 0, [&] { done_at = backend->now_s(); }); });
        backend->run();
        return std::vector<double>{done_at};
      })[0];
      const double expected_s = (std::string(routing) == "adaptive" ? 1.0 : 2.0) * bytes / 50e9;
      EXPECT_NEAR(done_s, expected_s, 1e-6 * expected_s) << fidelity << " " << routing;
    }
  }
}

// Busy time: a link is busy while a transfer is on it. One 1 GB transfer at 50 GB/s keeps every link
// of its route busy for 20 ms, whichever backend; two labels are kept apart.
TEST(FlowContention, LinksAreBusyWhileTheirTransfersRun) {
  for (const char* fidelity : {"flow", "analytical"}) {
    const auto r = testing::in_child([&] {
      const Cluster cluster = Cluster::build(shared_nic_spec());
      auto backend = find_network_backend(fidelity)->make(cluster, ideal_network_profile());
      backend->schedule(0.0, [&] {
        backend->set_traffic_label(3);
        const std::vector<Transfer> t{{0, 2, 1e9}};
        backend->start_transfers(t, 0, [] {});
      });
      backend->run();
      std::vector<int> route;
      cluster.route(0, 2, 0, route);
      std::vector<double> out;
      for (int l : route) {
        out.push_back(backend->link_usage().busy_s()[static_cast<std::size_t>(l)]);
        out.push_back(backend->link_usage().bytes_by_label().at(3).at(static_cast<std::size_t>(l)));
      }
      return out;
    });
    ASSERT_FALSE(r.empty());
    for (std::size_t i = 0; i < r.size(); i += 2) {
      EXPECT_NEAR(r[i], 1e9 / 50e9, 1e-12) << fidelity;
      EXPECT_DOUBLE_EQ(r[i + 1], 1e9) << fidelity;
    }
  }
}

// Pipelined transfers (Transfer::pipelined, NCCL's tree) of equal size move together at the pace of
// the most contended member. GPU 0 -> 2 shares node 0's NIC uplink with the ordinary 1 -> 3: 25 GB/s
// each, done at 2 S / 50 GB/s. GPU 1 -> 0 crosses only the NVSwitch (450 GB/s) but is pipelined with
// 0 -> 2, so its links stay busy until then too; not pipelined, it is done after S / 450 GB/s. Bytes
// are conserved per member either way.
TEST(FlowContention, PipelinedTransfersMoveAtTheirSlowestMembersPace) {
  const double bytes = 1e9;
  for (const bool pipelined : {true, false}) {
    const auto r = testing::in_child([&] {
      const Cluster cluster = Cluster::build(shared_nic_spec());
      auto backend = make_flow_backend(cluster, ideal_network_profile());
      double done_at = -1.0;
      std::vector<Transfer> t{{0, 2, bytes, pipelined}, {1, 0, bytes, pipelined}, {1, 3, bytes, false}};
      backend->schedule(0.0, [&] { backend->start_transfers(t, 0, [&] { done_at = backend->now_s(); }); });
      backend->run();
      std::vector<int> nvlink;
      cluster.route(1, 0, 0, nvlink);
      double total_bytes = 0.0;
      for (double b : backend->link_bytes())
        total_bytes += b;
      std::vector<int> routes[3];
      double expected_bytes = 0.0;
      for (int i = 0; i < 3; ++i) {
        cluster.route(t[static_cast<std::size_t>(i)].src_gpu, t[static_cast<std::size_t>(i)].dst_gpu, 0, routes[i]);
        expected_bytes += bytes * static_cast<double>(routes[i].size());
      }
      return std::vector<double>{done_at, backend->link_usage().busy_s()[static_cast<std::size_t>(nvlink[0])],
                                 backend->link_bytes()[static_cast<std::size_t>(nvlink[0])], total_bytes,
                                 expected_bytes};
    });
    EXPECT_NEAR(r[0], 2 * bytes / 50e9, 1e-9) << pipelined;
    EXPECT_NEAR(r[1], pipelined ? 2 * bytes / 50e9 : bytes / 450e9, 1e-9) << pipelined;
    EXPECT_DOUBLE_EQ(r[2], bytes);
    EXPECT_DOUBLE_EQ(r[3], r[4]);
  }
}

TEST(FlowContention, ZeroByteAndSelfTransfersFinishAtOnce) {
  const auto r = run_transfers(shared_nic_spec(), {{0, 0, 1e9}, {1, 2, 0.0}});
  EXPECT_DOUBLE_EQ(r[0], 0.0);
}

}  // namespace
}  // namespace clustersim
