#pragma once
// The nccl-tests tables that ship with the repository (calibration/network/datasets.json, their rows
// under calibration/data), as the network calibration tests select them.
#include <string>
#include <vector>

#include "sim/network/collective_tables.hpp"

namespace clustersim::testing {

inline NetworkDatasets shipped_network_datasets() {
  return load_network_datasets(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/network/datasets.json",
                               CLUSTERSIM_DATA_DIR);
}

// The shipped tables that `keep` selects, in the datasets' order.
template <class Keep>
std::vector<CollectiveTable> shipped_tables(Keep keep) {
  std::vector<CollectiveTable> tables;
  for (const auto& t : shipped_network_datasets().tables)
    if (keep(t)) tables.push_back(t);
  return tables;
}

}  // namespace clustersim::testing
