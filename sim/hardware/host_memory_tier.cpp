// The host memory tier. Per GPU, per direction:
//   bandwidth = min(pcie_bandwidth_Bps, host_memory_bandwidth_Bps)   (the second when given)
//   t(bytes)  = bytes / bandwidth
// pcie_bandwidth_Bps is the GPU's host link: PCIe (Gen5 x16, 64 GB/s per direction) on HGX / DGX and
// AMD platforms; NVLink-C2C on GB200 / GB300 (900 GB/s both directions per Grace CPU shared by its two
// GPUs: 225 GB/s per direction each). host_memory_bandwidth_Bps is the GPU's share of its CPU's memory
// bandwidth where the catalogue gives it (Grace LPDDR5X: GB200 512 GB/s per Grace, 256 per GPU; GB300
// 14 TB/s per 36 Grace CPUs, 194 per GPU: sources in the catalogue entries). A PCIe host's DRAM is
// not in the GPU's entry (it depends on the server): assumed not to be slower than the GPU's share of
// it, so the link alone sets the rate there. Nothing is overlapped here: the caller decides.
#include "sim/hardware/host_memory_tier.hpp"

#include <algorithm>
#include <string>

#include "sim/core/error.hpp"

namespace clustersim {

HostMemoryTier host_memory_tier(const GpuSpec& gpu) {
  HostMemoryTier t;
  t.capacity_bytes = gpu.host_memory_bytes;
  t.bandwidth_Bps = gpu.pcie_bandwidth_Bps;
  if (gpu.host_memory_bandwidth_Bps > 0.0 && gpu.host_memory_bandwidth_Bps < t.bandwidth_Bps) {
    t.bandwidth_Bps = gpu.host_memory_bandwidth_Bps;
    t.memory_limited = true;
  }
  return t;
}

double host_transfer_s(const GpuSpec& gpu, double bytes) {
  if (!(bytes >= 0.0))
    throw SimulationError("host transfer of GPU '" + gpu.id + "': bytes must be >= 0, got " + std::to_string(bytes));
  const HostMemoryTier t = host_memory_tier(gpu);
  if (!(t.bandwidth_Bps > 0.0))
    throw SimulationError("GPU '" + gpu.id + "' has no host link (pcie_bandwidth_GBps is 0): no host memory tier");
  return bytes / t.bandwidth_Bps;
}

}  // namespace clustersim
