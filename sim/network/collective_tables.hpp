#pragma once
// nccl-tests measurements as the network calibration reads them.
//
// A dataset file (calibration/network/datasets.json) lists tables of measured collective times, each
// with the cluster it was measured on (a preset and overrides), the ranks, the collective, the
// algorithm NCCL ran (from the source) and its role: `fit` or `validate`, and the network profiles
// the tables feed. Fitting a profile to them needs the simulator, so it lives in the application
// layer (sim/api/network_calibration.hpp); reading them needs only the network profile.
#include <string>
#include <vector>

#include "sim/network/network_profile.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

struct CollectiveTable {
  std::string id;
  std::string profile;  // the profile it feeds (fits or validates)
  std::string role;     // fit | validate
  std::string source;
  std::string cluster;                 // preset or file
  std::vector<std::string> overrides;  // key=value, applied to the cluster spec
  std::string ranks;                   // "0-7"
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::string algorithm = "auto";
  std::string system;          // the machine measured ("aws-p5"): errors are also reported per system
  std::vector<double> bytes;   // per-rank buffer sizes
  std::vector<double> time_s;  // measured times
};

struct NetworkDatasets {
  std::vector<NetworkProfile> profiles;  // name, description, gpus of each profile to fit
  std::vector<CollectiveTable> tables;
};

// Reads the dataset file and every table it names from `data_dir`. Throws SpecError naming the file
// and JSON path (or row) of a malformed entry.
NetworkDatasets load_network_datasets(const std::string& datasets_path, const std::string& data_dir);

}  // namespace clustersim
