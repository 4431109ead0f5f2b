#pragma once
// LinkLoadScratch: the per-link arrays of idle_fabric_time_parts (bytes and transfers routed so far on
// each directed link), all zero between calls. Planning a collective rates it on an idle fabric; a
// caller that plans many collectives (the replay plans one per group of every communicator: 16,384
// tensor-parallel groups on 131,072 GPUs) lends one scratch so that each rating costs its routes, not
// an O(links) allocation and clearing (issue 21: that was O(groups x links), quadratic in the cluster).
#include <vector>

namespace clustersim {

struct LinkLoadScratch {
  std::vector<double> bytes;   // per link; zero outside a call
  std::vector<int> in_flight;  // per link; zero outside a call
};

}  // namespace clustersim
