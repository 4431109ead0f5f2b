// libFuzzer target: the native (clustersim) trace reader, parse_native_trace, on arbitrary text;
// an accepted trace must write back (write_native_trace) without failing.
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/trace_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_only_spec_errors([&] {
    const clustersim::ExecutionGraph graph =
        clustersim::parse_native_trace(clustersim::fuzz::as_text(data, size), "fuzz.json");
    (void)clustersim::write_native_trace(graph);
  });
  return 0;
}
