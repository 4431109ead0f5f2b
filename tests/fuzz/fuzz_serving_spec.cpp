// libFuzzer target: the serving spec reader (sim/serving/serving_spec.hpp) on arbitrary JSON text,
// then, when it accepts the spec, the replica it describes (replica_config: the model's shape and
// layout, the checks the iteration model relies on).
#include <cstdint>

#include "sim/serving/serving_spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim;
  return fuzz::parse_then_use(
      data, size, [](std::string_view text, const std::string& file) { return parse_serving_spec(text, file); },
      [](const ServingSpec& spec) { (void)replica_config(spec); });
}
