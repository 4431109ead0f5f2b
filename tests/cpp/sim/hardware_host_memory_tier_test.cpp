// The host memory tier (sim/hardware/host_memory_tier.hpp) against its closed form, per GPU and
// direction: t = bytes / min(host link, host memory's share).
#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/host_memory_tier.hpp"

namespace clustersim {
namespace {

// GB200: the Grace CPU's LPDDR5X over NVLink-C2C. 480 GB and 512 GB/s per Grace (GB200 NVL72
// datasheet: 17 TB, 18.4 TB/s for 36 Grace CPUs), 900 GB/s C2C both directions per Grace; two GPUs per
// Grace: 240 GB, 256 GB/s of memory, 225 GB/s of link per direction each. The link is the slower:
// 100 GB (an 8B model's fp32 Adam state is 96 GB) take 100e9 / 225e9 = 0.444 s.
// A GPU that shares a Grace CPU with one other: half of the Grace's 480 GB of LPDDR5X at
// `bandwidth_Bps`, set by the memory's share when `memory_limited`, else by the C2C link; 100 GB take
// 100e9 / bandwidth_Bps.
void expect_grace_tier(const GpuSpec& g, double bandwidth_Bps, bool memory_limited) {
  SCOPED_TRACE(g.name);
  const HostMemoryTier t = host_memory_tier(g);
  EXPECT_DOUBLE_EQ(t.capacity_bytes, 240e9);
  EXPECT_DOUBLE_EQ(t.bandwidth_Bps, bandwidth_Bps);
  EXPECT_EQ(t.memory_limited, memory_limited);
  EXPECT_NEAR(host_transfer_s(g, 100e9), 100e9 / bandwidth_Bps, 1e-12);
}

TEST(HostMemoryTier, Gb200ReachesGraceLpddrOverNvlinkC2c) {
  const GpuSpec g = find_gpu("gb200", "t", "");
  expect_grace_tier(g, 225e9, false);
  for (const char* key : {"host_memory_GB", "host_memory_bandwidth_GBps"})
    EXPECT_NE(g.sources.at(key).find("GB200 NVL72 datasheet"), std::string::npos) << key;
}

// GB300: 14 TB/s of LPDDR5X for 36 Grace CPUs (GB300 NVL72 datasheet) = 388.9 GB/s per Grace,
// 194.4 GB/s per GPU: below the 225 GB/s C2C share, so the memory sets the rate:
// 100 GB in 100e9 / 194.4e9 = 0.514 s.
TEST(HostMemoryTier, Gb300IsLimitedByItsShareOfTheLpddrBandwidth) {
  expect_grace_tier(find_gpu("gb300", "t", ""), 194.4e9, true);
}

// Elsewhere the host link is PCIe Gen5 x16, 64 GB/s per direction (B200, H100 SXM, MI355X entries):
// 100 GB in 1.5625 s, 3.5 x GB200's over C2C; the host DRAM's size is the server's, not in the entry.
TEST(HostMemoryTier, PcieGpusUseTheirPcieLink) {
  for (const char* id : {"b200", "h100-sxm5-80gb", "mi355x"}) {
    const GpuSpec g = find_gpu(id, "t", "");
    const HostMemoryTier t = host_memory_tier(g);
    EXPECT_DOUBLE_EQ(t.bandwidth_Bps, 64e9) << id;
    EXPECT_DOUBLE_EQ(t.capacity_bytes, 0.0) << id;
    EXPECT_NEAR(host_transfer_s(g, 100e9), 1.5625, 1e-12) << id;
  }
  EXPECT_NEAR(
      host_transfer_s(find_gpu("h100-sxm5-80gb", "t", ""), 100e9) / host_transfer_s(find_gpu("gb200", "t", ""), 100e9),
      225.0 / 64.0, 1e-12);
}

TEST(HostMemoryTier, BadInputIsAnError) {
  GpuSpec g = find_gpu("gb200", "t", "");
  EXPECT_THROW(host_transfer_s(g, -1.0), SimulationError);
  g.pcie_bandwidth_Bps = 0.0;
  g.host_memory_bandwidth_Bps = 0.0;
  EXPECT_THROW(host_transfer_s(g, 1.0), SimulationError);
}

}  // namespace
}  // namespace clustersim
