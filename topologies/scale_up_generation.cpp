// Scale-up generations. Bandwidths are per GPU per direction, from the vendors' figures (NVIDIA quotes
// NVLink bandwidth bidirectional: 900 GB/s for NVLink 4 = 18 links x 25 GB/s per direction x 2).
// Latencies are assumed (no vendor publishes a GPU-to-GPU figure): 0.7 us through NVLink, 1.0 us
// through PCIe switches.
// NVLS (in-switch reduction, "NVLink SHARP") comes with NVSwitch generation 3 (NVLink 4: H100, H200) and
// stays in generation 4 (NVLink 5: B200, GB200): NVIDIA H100 Tensor Core GPU Architecture whitepaper
// (2022), third-generation NVSwitch with "NVIDIA SHARP in-network reductions"; NCCL enables its NVLS
// algorithm where the driver reports NVLink multicast (src/transport/nvls.cc, ncclNvlsInit,
// CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: Hopper and later).
// A100's NVSwitch generation 2 has none. GPU ids per generation: the catalogue's datasheet figures.
// AMD Infinity Fabric (xGMI, technology "xgmi"): no switch; 8 GPUs joined point to point, 7 links per GPU
// (node.scale_up.type xgmi_mesh). Per-GPU bandwidth is the 7 links together; a link carries 1/7 of it.
// The 1.0 us GPU-to-GPU latency is assumed like NVLink's (the 8-byte rccl-tests all-reduce of an 8 x MI300X
// node takes 16 us, mostly launch and synchronisation: ROCm blog "Understanding RCCL Bandwidth and xGMI
// Performance on AMD Instinct MI300X", 2025-03-02).
#include "topologies/scale_up_generation.hpp"

#include "sim/core/named_table.hpp"

namespace clustersim {
namespace {

constexpr ScaleUpGeneration k_generations[] = {
    {"nvlink2", "nvlink", "V100", 150.0, 0.7, 16, 12.0 / 16.0, false, "v100-sxm2-32gb",
     "NVLink 2: 6 links x 25 GB/s = 150 GB/s per direction (300 GB/s bidirectional, NVIDIA V100 datasheet); "
     "NVSwitch gen 1: 16 GPUs and 12 NVSwitch chips per DGX-2 (DGX-2 datasheet)"},
    {"nvlink3", "nvlink", "A100", 300.0, 0.7, 16, 6.0 / 8.0, false, "a100-sxm4-40gb,a100-sxm4-80gb",
     "NVLink 3: 12 links x 25 GB/s = 300 GB/s per direction (600 GB/s bidirectional, NVIDIA A100 datasheet); "
     "NVSwitch gen 2: 6 chips per 8 GPUs (DGX A100 datasheet), at most 16 GPUs (HGX A100 16-GPU)"},
    {"nvlink4", "nvlink", "H100, H200", 450.0, 0.7, 256, 4.0 / 8.0, true, "h100-sxm5-80gb,h200-sxm-141gb",
     "NVLink 4: 18 links x 25 GB/s = 450 GB/s per direction (900 GB/s bidirectional, NVIDIA H100 datasheet); "
     "NVSwitch gen 3: 4 chips per 8 GPUs (DGX H100 datasheet), up to 256 GPUs with the NVLink Switch System"},
    {"nvlink5", "nvlink", "B200, GB200, B300, GB300", 900.0, 0.7, 576, 18.0 / 72.0, true, "b200,gb200,b300,gb300",
     "NVLink 5: 18 links x 50 GB/s = 900 GB/s per direction (1.8 TB/s bidirectional, NVIDIA Blackwell "
     "datasheet; B300: HGX B300 specifications; GB200 and GB300 NVL72 datasheets); NVSwitch gen 4: 18 chips per 72 "
     "GPUs (GB200 NVL72 datasheet), domains up to 576 GPUs"},
    {"xgmi3", "xgmi", "MI300X, MI325X", 448.0, 1.0, 0, 0.0, false, "mi300x,mi325x",
     "AMD Infinity Fabric (CDNA 3): 7 xGMI links x 64 GB/s = 448 GB/s per direction (896 GB/s aggregate, AMD "
     "Instinct MI300X and MI325X data sheets; 64 GB/s per link per direction: AMD CDNA 3 white paper and ROCm blog "
     "'Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X'), a fully connected 8-GPU mesh "
     "without a switch"},
    {"xgmi4", "xgmi", "MI355X", 537.6, 1.0, 0, 0.0, false, "mi355x",
     "AMD Infinity Fabric (CDNA 4): 7 xGMI links x 76.8 GB/s = 537.6 GB/s per direction (1,075.2 GB/s aggregate, "
     "AMD Instinct MI355X data sheet), a fully connected 8-GPU mesh without a switch"},
    {"pcie3", "pcie", "V100 PCIe, T4", 16.0, 1.0, 0, 0.0, false, "",
     "PCIe Gen3 x16: 8 GT/s x 16 lanes, 128b/130b = 15.75 GB/s per direction (PCI-SIG), rounded to 16"},
    {"pcie4", "pcie", "A100 PCIe, L4, L40S", 32.0, 1.0, 0, 0.0, false, "l4",
     "PCIe Gen4 x16: 16 GT/s x 16 lanes, 128b/130b = 31.5 GB/s per direction (PCI-SIG), rounded to 32"},
    {"pcie5", "pcie", "H100 PCIe, H100 NVL", 64.0, 1.0, 0, 0.0, false, "h100-pcie-80gb",
     "PCIe Gen5 x16: 32 GT/s x 16 lanes, 128b/130b = 63 GB/s per direction (PCI-SIG), rounded to 64"},
};

}  // namespace

const ScaleUpGeneration* find_scale_up_generation(std::string_view id) {
  return find_by_key<ScaleUpGeneration>(k_generations, id, &ScaleUpGeneration::id);
}

std::vector<std::string> scale_up_generation_ids() {
  return keys_of<ScaleUpGeneration>(k_generations, &ScaleUpGeneration::id);
}

std::string_view scale_up_technology_of_type(std::string_view type) {
  if (type == "pcie") return "pcie";
  if (type == "xgmi_mesh") return "xgmi";
  return "nvlink";
}

const ScaleUpGeneration* scale_up_generation_of_gpu(std::string_view gpu_id, std::string_view technology) {
  if (gpu_id.empty()) return nullptr;
  for (const auto& g : k_generations) {
    if (g.technology != technology) continue;
    std::string_view ids = g.gpu_ids;
    while (!ids.empty()) {
      const std::size_t comma = ids.find(',');
      if (ids.substr(0, comma) == gpu_id) return &g;
      ids = comma == std::string_view::npos ? std::string_view{} : ids.substr(comma + 1);
    }
  }
  return nullptr;
}

}  // namespace clustersim
