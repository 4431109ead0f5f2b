// Rings across nodes run one channel per NIC, each entering and leaving a node at the GPU next to its
// NIC: with fewer NICs than GPUs (DGX A100-style 4 x HDR for 8 GPUs) every NIC carries one channel.
#include <gtest/gtest.h>

#include "sim_test_support.hpp"

namespace clustersim {
namespace {

TEST(RingRails, EveryNicCarriesOneChannelWhenGpusShareNics) {
  const ClusterSpec spec = testing::fat_tree_spec(2, 8, 4, 200.0);
  testing::CollectiveRun run;
  run.groups = {testing::iota_ranks(16)};
  run.bytes = 256e6;
  run.algorithm = "ring";
  const auto r = testing::run_collective(spec, run);
  const Cluster cluster = Cluster::build(spec);
  const auto links = cluster.links();
  const auto devices = cluster.devices();
  int nic_uplinks = 0;
  const double n = 16, nic_Bps = 25e9;
  // Each of the 4 channels crosses each node boundary once per direction: (2(N-1)/N * S) / 4 bytes.
  const double expected_bytes = 2 * (n - 1) / n * run.bytes / 4;
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (links[i].technology != LinkTechnology::infiniband) continue;
    if (devices[static_cast<std::size_t>(links[i].src)].kind != DeviceKind::nic) continue;
    ++nic_uplinks;
    EXPECT_NEAR(r.at(1 + i), expected_bytes, expected_bytes * 1e-9)
        << devices[static_cast<std::size_t>(links[i].src)].name;
  }
  EXPECT_EQ(nic_uplinks, 8);
  // The four NICs in parallel: the ring moves at 4 x 25 GB/s per node (latency terms are microseconds).
  EXPECT_NEAR(r[0], expected_bytes / nic_Bps, expected_bytes / nic_Bps * 0.01);
}

}  // namespace
}  // namespace clustersim
