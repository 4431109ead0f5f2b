// The entry point of libclustersim_flow.so, the flow backend loaded by the clustersim executable
// (flow_backend_loader.cpp).
#include "sim/network/flow_backend_module.hpp"

#include "sim/network/flow_backend.hpp"

extern "C" __attribute__((visibility("default"))) clustersim::NetworkBackend* clustersim_make_flow_backend(
    const clustersim::Cluster& cluster, const clustersim::NetworkProfile& profile) {
  return clustersim::make_flow_backend(cluster, profile).release();
}
