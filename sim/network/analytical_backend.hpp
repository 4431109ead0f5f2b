#pragma once
// The analytical network backend (see analytical_backend.cpp).
#include <memory>

#include "sim/network/network_backend.hpp"

namespace clustersim {

std::unique_ptr<NetworkBackend> make_analytical_backend(const Cluster& cluster, const NetworkProfile& profile);

}  // namespace clustersim
