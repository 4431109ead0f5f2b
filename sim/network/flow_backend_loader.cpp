// make_flow_backend for the clustersim executable. Loading SimGrid (and the ns-3 libraries Debian's
// build of it depends on) costs about 26 ms at process start, more than a whole analytical run of a
// small cluster, so the executable does not link it: the flow backend is the module
// libclustersim_flow.so beside the executable, opened when a flow simulation starts (in the child
// process that runs it). The Python module and the tests link the backend itself (clustersim_flow).
#include <climits>
#include <string>

#include <dlfcn.h>
#include <unistd.h>

#include "sim/core/error.hpp"
#include "sim/network/flow_backend.hpp"
#include "sim/network/flow_backend_module.hpp"

namespace clustersim {
namespace {

std::string module_path() {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw SimulationError("cannot find the clustersim executable (/proc/self/exe) to load the flow backend");
  std::string dir(exe, static_cast<std::size_t>(n));
  dir.resize(dir.find_last_of('/') + 1);
  return dir + k_flow_backend_module;
}

}  // namespace

std::unique_ptr<NetworkBackend> make_flow_backend(const Cluster& cluster, const NetworkProfile& profile) {
  const std::string path = module_path();
  // Never closed: SimGrid's engine lives until the process ends.
  void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr)
    throw SimulationError("cannot load the flow backend " + path + ": " + std::string(::dlerror()) +
                          " (it is built with the clustersim executable)");
  const auto factory = reinterpret_cast<FlowBackendFactory>(::dlsym(module, k_flow_backend_factory));
  if (factory == nullptr) throw SimulationError(path + " has no " + std::string(k_flow_backend_factory));
  return std::unique_ptr<NetworkBackend>(factory(cluster, profile));
}

}  // namespace clustersim
