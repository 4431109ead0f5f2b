// libFuzzer target: the cluster spec reader (topologies/cluster_spec.hpp) on arbitrary JSON text,
// then, when it accepts the spec, the derived quantities every command asks of it.
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "topologies/cluster_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim;
  return fuzz::parse_then_use(
      data, size, [](std::string_view text, const std::string& file) { return parse_cluster_spec(text, file); },
      [](const ClusterSpec& spec) {
        (void)spec.gpu_count();
        (void)cluster_spec_to_json(spec);
      });
}
