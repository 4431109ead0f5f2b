#pragma once
// The host of a recorded PyTorch profiler trace: when each rank's CPU had issued each op (the end of
// the op's cudaLaunchKernel / cuLaunchKernel / cudaMemcpyAsync call). A replay that starts no op
// before it keeps the trace's host time, late launches included (docs/traces.md, "A host-bound
// world"); without it a replay drops the host and times only the GPU.
#include <string>
#include <vector>

#include "workloads/execution_graph.hpp"

namespace clustersim {

struct MeasuredHostTrace {
  ExecutionGraph graph;
  // Per rank class (graph.classes() order), per op: seconds after the rank's step began (its
  // ProfilerStep#N when the trace is cut to a step, else its first launch) when the host had issued
  // the op (without its launch call in the trace: when the op started on the GPU).
  std::vector<std::vector<double>> issue_s;
};

// read_pytorch_trace_step(path, step) (step "": the whole trace) with the host's issue times.
MeasuredHostTrace read_pytorch_trace_with_host(const std::string& path, const std::string& step);

}  // namespace clustersim
