#pragma once
// Execution traces: recorded or exported per-rank op graphs, read into an ExecutionGraph instead of
// generating one from a model description. A registry of formats, each with a reader (and a writer
// where the format is ours).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/execution_graph.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct TraceFormat {
  std::string_view name;     // "clustersim", "chakra", "pytorch"
  std::string_view summary;  // one line for `clustersim presets` and errors
  // Reads the trace at `path`. Bad input: SpecError naming the file and the JSON path (or record).
  ExecutionGraph (*read)(const std::string& path);
  // Reads one training step of the trace (TraceSpec::step: "last" or a step number); null for the
  // formats that mark no steps.
  ExecutionGraph (*read_step)(const std::string& path, const std::string& step) = nullptr;
};

std::span<const TraceFormat> trace_formats();
const TraceFormat* find_trace_format(std::string_view name);
std::vector<std::string> trace_format_names();

// Reads the trace of a workload spec (spec.trace): the format's reader on the resolved path.
ExecutionGraph read_trace(const TraceSpec& trace);

// The readers of the registered formats (docs/traces.md). `path` is a file, a directory of per-rank
// files, or (chakra, pytorch) a pattern with "{rank}" standing for the rank number.
ExecutionGraph read_native_trace(const std::string& path);   // "clustersim"
ExecutionGraph read_chakra_trace(const std::string& path);   // "chakra": Chakra ET protobuf, one file per rank
ExecutionGraph read_pytorch_trace(const std::string& path);  // "pytorch": Kineto Chrome-trace JSON per rank
// The kernels launched inside each rank's ProfilerStep#`step` ("last": each rank's last ProfilerStep).
ExecutionGraph read_pytorch_trace_step(const std::string& path, const std::string& step);

// The native format: write_native_trace(g) is canonical text (docs/traces.md) that
// parse_native_trace reads back into a graph equal to g on every field, and that it writes again
// byte for byte. `file` names the text in SpecErrors.
std::string write_native_trace(const ExecutionGraph& graph);
ExecutionGraph parse_native_trace(std::string_view text, const std::string& file);

}  // namespace clustersim
