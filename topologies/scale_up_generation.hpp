#pragma once
// The scale-up interconnect generations (NVLink 2 to 5, PCIe Gen3 to Gen5): per-GPU bandwidth, the
// largest NVSwitch domain of the generation and the NVSwitch chips it takes, each with its source.
// `node.scale_up.generation` names a row; its figures become the defaults of the scale-up keys.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct ScaleUpGeneration {
  std::string_view id;            // "nvlink4"
  std::string_view technology;    // "nvlink" | "pcie"
  std::string_view gpus;          // the GPUs that carry it, for messages
  double bandwidth_GBps;          // per GPU per direction
  double latency_us;              // GPU to GPU through the domain (assumed: vendors publish none)
  int max_domain_gpus;            // largest NVSwitch domain (0: no NVSwitch for this generation)
  double nvswitch_chips_per_gpu;  // NVSwitch chips per GPU of a domain (0: none)
  std::string_view source;
};

std::span<const ScaleUpGeneration> scale_up_generations();
// The row named `id`, or nullptr.
const ScaleUpGeneration* find_scale_up_generation(std::string_view id);
std::vector<std::string> scale_up_generation_ids();

}  // namespace clustersim
