#include <algorithm>
#include <string_view>

#include "sim/network/analytical_backend.hpp"
#include "sim/network/flow_backend.hpp"
#include "sim/network/network_backend.hpp"

namespace clustersim {

std::span<const NetworkBackendEntry> network_backends() {
  static constexpr NetworkBackendEntry kBackends[] = {
      {"flow", "SimGrid flow-level model (CM02 max-min sharing over every link of every route)", &make_flow_backend},
      {"analytical", "own event queue, each transfer's bottleneck share fixed when it starts",
       &make_analytical_backend},
  };
  return kBackends;
}

const NetworkBackendEntry* find_network_backend(std::string_view fidelity) {
  for (const auto& e : network_backends()) {
    if (fidelity == e.fidelity) return &e;
  }
  return nullptr;
}

}  // namespace clustersim
