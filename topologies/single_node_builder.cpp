#include "topologies/single_node_builder.hpp"

#include "sim/core/error.hpp"

namespace clustersim {

void build_single_node(Cluster& /*cluster*/, const ClusterSpec& spec, const NodeLayout& /*nodes*/,
                       const FabricPlane& /*plane*/) {
  // parse_cluster_spec already enforces this; specs built in code get the same message.
  if (spec.nodes != 1)
    throw SpecError(spec.source_file, "/nodes",
                    "fabric type single_node requires nodes = 1, got " + std::to_string(spec.nodes));
}

}  // namespace clustersim
