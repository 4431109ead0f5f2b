#pragma once
// The cluster spec's keys declared once, as the workload's are (workloads/workload_schema.hpp): its
// `node` (with `node.scale_up`), `fabric`, `power` and `cost` blocks. The table drives their reader
// and writer (cluster_spec.cpp), their rows of docs/specs.md's cluster table (`clustersim schema
// cluster --markdown`) and the JSON form the Python package reads. A key whose default is derived from
// another (the scale-up generation from the GPU, the fabric's transport from its technology) says so
// in its default_doc, and the reader lists the value it filled in (ClusterSpec::derived_defaults).
// The top-level keys (name, description, sources, gpu, nodes) are read by cluster_spec.cpp.
#include <span>
#include <string>
#include <string_view>

#include "sim/core/spec_field.hpp"

namespace clustersim {

// Every declared field, in the order the writer writes them.
std::span<const SpecField> cluster_schema();

}  // namespace clustersim
