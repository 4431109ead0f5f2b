#pragma once
// Runs functions in forked child processes and returns their results.
//
// SimGrid's engine is a process-wide singleton that cannot be restarted, so every simulation that
// touches it runs in a child (docs/architecture.md, "Child processes"). This also keeps the caller (a Jupyter kernel, a
// sweep driver) alive when a simulation crashes: a SpecError or SimulationError thrown in the child is rethrown in the
// parent with the same message; a child killed by a signal becomes a SimulationError naming the signal.
// The child is killed (SIGKILL) when its parent dies: nothing keeps simulating and writing after it.
#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace clustersim {

// What one child returned: its result text, or the error it raised.
struct ChildOutcome {
  std::string result;
  std::exception_ptr error;  // null when the child returned a result
  // The result, or the child's error rethrown.
  const std::string& get() const;
};

// `work` runs in the child; the string it returns is sent back through a pipe.
std::string run_in_child_process(const std::function<std::string()>& work);

// Runs work(i) for every i < count, each in its own child, at most `jobs` (>= 1) at once; outcome i
// is work(i)'s. Every child is forked from the calling thread, which then waits on all of them at
// once (poll): a child forked while another thread of the parent held a lock (an allocator's, say)
// would wait on that lock forever, so callers run children in parallel through this, not by forking
// from several threads.
std::vector<ChildOutcome> run_in_child_processes(std::size_t count, std::size_t jobs,
                                                 const std::function<std::string(std::size_t)>& work);

}  // namespace clustersim
