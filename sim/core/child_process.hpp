#pragma once
// Runs a function in a forked child process and returns its result.
//
// SimGrid's engine is a process-wide singleton that cannot be restarted, so every simulation that
// touches it runs in a child (docs/architecture.md, "Child processes"). This also keeps the caller (a Jupyter kernel, a
// sweep driver) alive when a simulation crashes: a SpecError or SimulationError thrown in the child is rethrown in the
// parent with the same message; a child killed by a signal becomes a SimulationError naming the signal.
// The child is killed (SIGKILL) when its parent dies: nothing keeps simulating and writing after it.
#include <functional>
#include <string>

namespace clustersim {

// `work` runs in the child; the string it returns is sent back through a pipe.
std::string run_in_child_process(const std::function<std::string()>& work);

}  // namespace clustersim
