// libFuzzer target: the native (clustersim) trace reader, parse_native_trace, on arbitrary text;
// an accepted trace must write back (write_native_trace) without failing.
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/trace_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim;
  return fuzz::parse_then_use(
      data, size, [](std::string_view text, const std::string& file) { return parse_native_trace(text, file); },
      [](const ExecutionGraph& graph) { (void)write_native_trace(graph); });
}
