#pragma once
// The flow backend as a loadable module (libclustersim_flow.so): its file name and its one entry
// point, shared by the module (flow_backend_module.cpp) and the executable's loader
// (flow_backend_loader.cpp).
#include "sim/network/network_backend.hpp"

namespace clustersim {

inline constexpr const char* k_flow_backend_module = "libclustersim_flow.so";
inline constexpr const char* k_flow_backend_factory = "clustersim_make_flow_backend";
// make_flow_backend, released: the caller owns the backend.
using FlowBackendFactory = NetworkBackend* (*)(const Cluster&, const NetworkProfile&);

}  // namespace clustersim
