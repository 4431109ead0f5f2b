// Collectives inside a GB200 NVL72 rack (one NVLink 5 domain of 72 GPUs over 18 trays of 4): NCCL treats
// the GPUs of a multi-node NVLink domain as one node (MNNVL), so a group inside the rack runs over NVLink
// only, and NVLS reduces in the rack's switches. Against NVIDIA's published peak bus bandwidths (GTC25
// session S72583, calibration/data/published/collectives.json): the nccl-b200 profile's efficiencies are
// derived from the 8 x B200 node (coll-0031: 700 GB/s ring, coll-0032: 850 GB/s NVLS) and checked on the
// GB200 NVL72 figures (coll-0037: 680 GB/s, coll-0038: 850 GB/s with NVLS, 32 GPUs), within 15 %.
#include <algorithm>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analytical_collective_run.hpp"
#include "sim/network/network_profile.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

double published_busbw_GBps(const std::string& id) {
  std::ifstream in(std::string(CLUSTERSIM_DATA_DIR) + "/published/collectives.json");
  EXPECT_TRUE(in) << "calibration/data/published/collectives.json";
  const nlohmann::json records = nlohmann::json::parse(in);
  const auto it = std::find_if(records.begin(), records.end(), [&](const nlohmann::json& r) { return r["id"] == id; });
  EXPECT_NE(it, records.end()) << id;
  return (*it)["rows"][0]["busbw_GBps"].get<double>();
}

// nccl-tests' all-reduce bus bandwidth of an 8 GiB all-reduce over `ranks` GPUs, simulated.
double all_reduce_busbw_GBps(const ClusterSpec& spec, int ranks, const std::string& algorithm,
                             const NetworkProfile& profile) {
  testing::CollectiveRun run = testing::analytical_run(ranks, 8.0 * (1 << 30), algorithm);
  run.profile = profile;
  const auto r = testing::run_collective(spec, run);
  return 2.0 * (ranks - 1) / ranks * run.bytes / r[0] / 1e9;
}

TEST(Nvl72Collectives, ARingInsideTheRackRunsOverNvlinkOnly) {
  // 32 GPUs = trays 0-7 of rack 0, ideal profile: one NVLink ring at 900 GB/s per direction, no NIC used:
  // t = 2 x 31/32 x S / 900 GB/s + 62 x 0.7 us (GPU -> NVSwitch -> GPU: 2 x 0.35 us).
  const ClusterSpec spec = load_cluster_spec("gb200-nvl72");
  testing::CollectiveRun run = testing::analytical_run(32, 1 << 30, "ring");
  const auto r = testing::run_collective(spec, run);
  const double expected = 2.0 * 31 / 32 * run.bytes / 900e9 + 62 * 0.7e-6;
  EXPECT_NEAR(r[0], expected, 0.005 * expected);
  const Cluster cluster = Cluster::build(spec);
  for (std::size_t i = 0; i < cluster.links().size(); ++i)
    if (cluster.links()[i].technology == LinkTechnology::infiniband) {
      EXPECT_EQ(r.at(1 + i), 0.0) << "link " << i;
    }
}

TEST(Nvl72Collectives, NvlsReducesAcrossTheTraysOfOneRack) {
  testing::CollectiveRun run = testing::analytical_run(72, 1 << 30, "nvls");
  EXPECT_GT(testing::run_collective(load_cluster_spec("gb200-nvl72"), run)[0], 0.0);
}

TEST(Nvl72Collectives, BlackwellProfileMatchesNvidiasPublishedBusBandwidths) {
  const NetworkProfile b200 = load_network_profile("nccl-b200");
  for (const char* gpu : {"b200", "gb200", "b300", "gb300"})
    EXPECT_EQ(network_profile_for_gpu(gpu), "nccl-b200") << gpu;
  // Derived from (so equal to, within the latency share at 8 GiB): one 8 x B200 node.
  const ClusterSpec node = load_cluster_spec("dgx-b200-superpod", {{"nodes", "1"}});
  EXPECT_NEAR(all_reduce_busbw_GBps(node, 8, "ring", b200), published_busbw_GBps("coll-0031"), 0.01 * 700);
  EXPECT_NEAR(all_reduce_busbw_GBps(node, 8, "nvls", b200), published_busbw_GBps("coll-0032"), 0.01 * 850);
  // Held out: 32 GPUs of a GB200 NVL72 rack (simulated 698 and 938 GB/s: +2.6 % and +10.4 %).
  const ClusterSpec nvl72 = load_cluster_spec("gb200-nvl72");
  const double ring = published_busbw_GBps("coll-0037"), nvls = published_busbw_GBps("coll-0038");
  EXPECT_DOUBLE_EQ(ring, 680.0);
  EXPECT_DOUBLE_EQ(nvls, 850.0);
  EXPECT_NEAR(all_reduce_busbw_GBps(nvl72, 32, "ring", b200), ring, 0.15 * ring);
  EXPECT_NEAR(all_reduce_busbw_GBps(nvl72, 32, "nvls", b200), nvls, 0.15 * nvls);
  EXPECT_EQ(all_reduce_busbw_GBps(nvl72, 32, "auto", b200), all_reduce_busbw_GBps(nvl72, 32, "nvls", b200));
}

}  // namespace
}  // namespace clustersim
