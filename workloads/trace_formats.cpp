#include <string>

#include "sim/core/error.hpp"
#include "sim/core/named_table.hpp"
#include "workloads/trace_format.hpp"

namespace clustersim {

std::span<const TraceFormat> trace_formats() {
  static constexpr TraceFormat kFormats[] = {
      {"clustersim", "clustersim's native JSON trace (docs/traces.md)", &read_native_trace},
      {"chakra", "Chakra execution traces (protobuf .et, one file per rank)", &read_chakra_trace},
      {"pytorch", "PyTorch profiler (Kineto) Chrome-trace JSON (.json or .json.gz), one file per rank",
       &read_pytorch_trace, &read_pytorch_trace_step},
  };
  return kFormats;
}

const TraceFormat* find_trace_format(std::string_view name) {
  return find_by_name(trace_formats(), name);
}

std::vector<std::string> trace_format_names() {
  return names_of(trace_formats());
}

ExecutionGraph read_trace(const TraceSpec& trace) {
  const TraceFormat* f = find_trace_format(trace.format);
  if (f == nullptr || f->read == nullptr)
    throw SpecError(trace.path, "", "no reader for trace format \"" + trace.format + "\"");
  if (trace.step.empty()) return f->read(trace.path);
  if (f->read_step == nullptr)
    throw SpecError(trace.path, "/trace/step",
                    "the " + trace.format +
                        " format marks no training steps: remove \"step\" (only \"pytorch\" "
                        "traces have ProfilerStep#N annotations)");
  return f->read_step(trace.path, trace.step);
}

}  // namespace clustersim
