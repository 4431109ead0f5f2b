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
//
// Work the CPU does in host memory (the offloaded optimizer step, training.optimizer_offload cpu):
//   t_update(bytes) = bytes / B_host,  B_host = host_memory_bandwidth_Bps (Grace: 256 / 194.4 GB/s
//   per GPU), else kPcieServerHostMemoryBps = 76.8 GB/s per GPU: a DGX H100 / HGX server's two Xeon
//   Platinum 8480C, 8 channels of DDR5-4800 each (Intel ark: 8 channels, DDR5-4800; 8 x 4800 MT/s x
//   8 bytes = 307.2 GB/s per socket, 614.4 GB/s for two) shared by its 8 GPUs (NVIDIA DGX H100 User
//   Guide, "Hardware Overview": 2x Intel Xeon Platinum 8480C, 2 TB DDR5). A peak: the CPU's Adam
//   (DeepSpeed CPU-Adam, torch AdamW) is memory-bound at 30 bytes per parameter, so the peak is a
//   lower bound on its time.
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

double host_update_bandwidth_Bps(const GpuSpec& gpu) {
  constexpr double kPcieServerHostMemoryBps = 2.0 * 8.0 * 4800e6 * 8.0 / 8.0;  // 614.4 GB/s over 8 GPUs
  return gpu.host_memory_bandwidth_Bps > 0.0 ? gpu.host_memory_bandwidth_Bps : kPcieServerHostMemoryBps;
}

double host_update_s(const GpuSpec& gpu, double bytes) {
  if (!(bytes >= 0.0))
    throw SimulationError("host update of GPU '" + gpu.id + "': bytes must be >= 0, got " + std::to_string(bytes));
  return bytes / host_update_bandwidth_Bps(gpu);
}

}  // namespace clustersim
