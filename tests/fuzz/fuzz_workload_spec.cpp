// libFuzzer target: the workload spec reader (workloads/workload_spec.hpp) on arbitrary JSON text,
// then, when it accepts the spec, its canonical JSON.
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/workload_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim;
  return fuzz::parse_then_use(
      data, size, [](std::string_view text, const std::string& file) { return parse_workload_spec(text, file); },
      [](const WorkloadSpec& spec) { (void)workload_spec_to_json(spec); });
}
