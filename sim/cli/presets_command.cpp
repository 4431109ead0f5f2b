#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim::cli {

int run_presets(const std::vector<std::string>& args) {
  const Arguments a(args, {}, {"json"});
  const auto clusters = cluster_preset_names();
  const auto workloads = workload_preset_names();
  const auto gpus = gpu_catalogue_ids();
  if (a.flag("json")) {
    nlohmann::ordered_json j{{"clusters", clusters}, {"workloads", workloads}, {"gpus", gpus}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  auto list = [](const char* title, const std::vector<std::string>& names) {
    std::cout << title << "\n";
    for (const auto& n : names) std::cout << "  " << n << "\n";
  };
  list("cluster presets (topologies/presets):", clusters);
  list("workload presets (workloads/presets):", workloads);
  list("GPU catalogue (sim/hardware/catalogue):", gpus);
  return 0;
}

}  // namespace clustersim::cli
