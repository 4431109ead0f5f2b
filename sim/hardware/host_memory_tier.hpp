#pragma once
// The memory tier beside a GPU's HBM that offloaded data (optimizer state, activations, KV cache)
// would live in: host memory, reached over the GPU's host link. On a Grace-Blackwell superchip
// (GB200, GB300) the Grace CPU's LPDDR5X over NVLink-C2C; elsewhere the host's DRAM over PCIe.
// Equations in host_memory_tier.cpp.
#include "sim/hardware/gpu_spec.hpp"

namespace clustersim {

struct HostMemoryTier {
  double capacity_bytes = 0.0;  // per GPU; 0: not known from the GPU (a PCIe server's DRAM)
  double bandwidth_Bps = 0.0;   // per GPU and direction: the slower of the host link and the memory
  bool memory_limited = false;  // true: the host memory's share, not the link, sets the bandwidth
};

HostMemoryTier host_memory_tier(const GpuSpec& gpu);

// Seconds to move `bytes` between HBM and the host memory tier in one direction (an offload or a
// reload of the same bytes), at the tier's bandwidth. Throws SimulationError for a GPU without a
// host link (pcie_bandwidth_GBps 0) or negative bytes.
double host_transfer_s(const GpuSpec& gpu, double bytes);

// The host memory's bandwidth per GPU for work the CPU does on data in host memory (an offloaded
// optimizer step): the catalogue's host_memory_bandwidth where it gives one (Grace), else the
// stated PCIe-server figure of host_memory_tier.cpp.
double host_update_bandwidth_Bps(const GpuSpec& gpu);
// Seconds the CPU takes to stream `bytes` through host memory (read + written): bytes /
// host_update_bandwidth_Bps. Throws SimulationError for negative bytes.
double host_update_s(const GpuSpec& gpu, double bytes);

}  // namespace clustersim
