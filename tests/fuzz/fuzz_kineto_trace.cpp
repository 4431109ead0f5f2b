// libFuzzer target: the PyTorch profiler (Kineto Chrome-trace JSON, plain or gzip) reader on one rank
// file of arbitrary bytes, both as a whole trace and as its last ProfilerStep (the reader takes a path).
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/trace_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = clustersim::fuzz::scratch().write("rank0.json", clustersim::fuzz::as_text(data, size));
  clustersim::fuzz::expect_only_spec_errors([&] { (void)clustersim::read_pytorch_trace(file); });
  clustersim::fuzz::expect_only_spec_errors([&] { (void)clustersim::read_pytorch_trace_step(file, "last"); });
  return 0;
}
