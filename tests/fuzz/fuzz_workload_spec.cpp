// libFuzzer target: the workload spec reader (workloads/workload_spec.hpp) on arbitrary JSON text,
// then, when it accepts the spec, its canonical JSON.
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/workload_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_only_spec_errors([&] {
    const clustersim::WorkloadSpec spec =
        clustersim::parse_workload_spec(clustersim::fuzz::as_text(data, size), "fuzz.json");
    (void)clustersim::workload_spec_to_json(spec);
  });
  return 0;
}
