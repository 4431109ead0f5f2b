// libFuzzer target: the cluster spec reader (topologies/cluster_spec.hpp) on arbitrary JSON text,
// then, when it accepts the spec, the derived quantities every command asks of it.
#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"
#include "topologies/cluster_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  clustersim::fuzz::expect_only_spec_errors([&] {
    const clustersim::ClusterSpec spec =
        clustersim::parse_cluster_spec(clustersim::fuzz::as_text(data, size), "fuzz.json");
    (void)spec.gpu_count();
    (void)clustersim::cluster_spec_to_json(spec);
  });
  return 0;
}
