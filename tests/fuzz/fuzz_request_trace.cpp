// libFuzzer target: the serving request-trace reader (sim/serving/serving_traffic.hpp,
// parse_request_trace) on arbitrary text. The first byte picks the format (even: CSV, odd: JSONL);
// the rest is the file.
#include <cstdint>

#include "sim/serving/serving_traffic.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool jsonl = (data[0] & 1U) != 0;
  clustersim::fuzz::expect_only_spec_errors([&] {
    const auto requests = clustersim::parse_request_trace(clustersim::fuzz::as_text(data + 1, size - 1),
                                                          jsonl ? "fuzz.jsonl" : "fuzz.csv", jsonl);
    (void)requests.size();
  });
  return 0;
}
