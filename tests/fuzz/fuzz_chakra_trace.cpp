// libFuzzer target: the Chakra ET reader (read_chakra_trace) on one rank file of arbitrary bytes,
// written to a private scratch folder (the reader takes a path).
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/trace_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = clustersim::fuzz::scratch().write("rank.0.et", clustersim::fuzz::as_text(data, size));
  clustersim::fuzz::expect_only_spec_errors([&] { (void)clustersim::read_chakra_trace(file); });
  return 0;
}
