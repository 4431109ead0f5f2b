// libFuzzer target: the serving spec reader (sim/serving/serving_spec.hpp) on arbitrary JSON text,
// then, when it accepts the spec, the replica it describes (replica_config: the model's shape and
// layout, the checks the iteration model relies on).
#include <cstdint>

#include "sim/serving/serving_spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_only_spec_errors([&] {
    const clustersim::ServingSpec spec =
        clustersim::parse_serving_spec(clustersim::fuzz::as_text(data, size), "fuzz.json");
    (void)clustersim::replica_config(spec);
  });
  return 0;
}
