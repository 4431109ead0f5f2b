#pragma once
// The flow-level backend on SimGrid 3.32 (see flow_backend.cpp).
#include <memory>

#include "sim/network/network_backend.hpp"

namespace clustersim {

// Creates SimGrid's engine and a platform mirroring `cluster`. Call at most once per process.
std::unique_ptr<NetworkBackend> make_flow_backend(const Cluster& cluster, const NetworkProfile& profile);

}  // namespace clustersim
