#include <iostream>

#include <nlohmann/json.hpp>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/network/network_profile.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim::cli {

int run_presets(const std::vector<std::string>& args) {
  const Arguments a(args, {}, {"json"});
  const auto clusters = cluster_preset_names();
  const auto workloads = workload_preset_names();
  const auto gpus = gpu_catalogue_ids();
  const auto network_profiles = network_profile_names();
  if (a.flag("json")) {
    nlohmann::ordered_json j{
        {"clusters", clusters}, {"workloads", workloads}, {"gpus", gpus}, {"network_profiles", network_profiles}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  auto list = [](const char* title, const std::vector<std::string>& names) {
    std::cout << title << "\n";
    for (const auto& n : names)
      std::cout << "  " << n << "\n";
  };
  std::cout << "cluster presets (topologies/presets; each with its description and sources):\n";
  for (const auto& n : clusters) {
    const ClusterSpec spec = load_cluster_spec(n);
    const std::string first = spec.description.substr(0, spec.description.find(". "));
    std::cout << "  " << n << std::string(n.size() < 20 ? 20 - n.size() : 1, ' ') << first << "\n";
  }
  list("workload presets (workloads/presets):", workloads);
  list("GPU catalogue (sim/hardware/catalogue):", gpus);
  list("network profiles (sim/network/profiles; auto picks the one fitted on the cluster's GPU):", network_profiles);
  return 0;
}

}  // namespace clustersim::cli
