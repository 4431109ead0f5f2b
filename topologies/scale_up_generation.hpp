#pragma once
// The scale-up interconnect generations (NVLink 2 to 5, AMD Infinity Fabric xGMI 3 and 4, PCIe Gen3 to Gen5): per-GPU
// bandwidth, the largest NVSwitch domain of the generation and the NVSwitch chips it takes, each with its source.
// `node.scale_up.generation` names a row; its figures become the defaults of the scale-up keys. When the
// spec leaves the generation out, the GPU implies it (`gpu_ids`): the spec reader fills it in and lists
// it among the spec's derived defaults.
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct ScaleUpGeneration {
  std::string_view id;            // "nvlink4"
  std::string_view technology;    // "nvlink" | "xgmi" | "pcie"
  std::string_view gpus;          // the GPUs that carry it, for messages
  double bandwidth_GBps;          // per GPU per direction
  double latency_us;              // GPU to GPU through the domain (assumed: vendors publish none)
  int max_domain_gpus;            // largest NVSwitch domain (0: no NVSwitch for this generation)
  double nvswitch_chips_per_gpu;  // NVSwitch chips per GPU of a domain (0: none)
  bool nvls;                      // the NVSwitch of this generation reduces in the switch (NVLink SHARP)
  std::string_view gpu_ids;       // GPU catalogue ids that carry it, comma-separated
  std::string_view source;
};

// The row named `id`, or nullptr.
const ScaleUpGeneration* find_scale_up_generation(std::string_view id);
std::vector<std::string> scale_up_generation_ids();
// The scale-up technology a node.scale_up.type runs on: "pcie" for `pcie`, "xgmi" for `xgmi_mesh`,
// "nvlink" otherwise.
std::string_view scale_up_technology_of_type(std::string_view type);
// The generation a GPU catalogue id carries on the scale-up technology `technology` ("nvlink", "xgmi" or
// "pcie"), or nullptr when the catalogue id is not listed (an inline GPU of unknown make).
const ScaleUpGeneration* scale_up_generation_of_gpu(std::string_view gpu_id, std::string_view technology);

}  // namespace clustersim
