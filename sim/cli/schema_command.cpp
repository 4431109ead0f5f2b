// clustersim schema workload|cluster|serving [--markdown]: a spec's keys as the core declares them
// (workloads/workload_schema.hpp; topologies/cluster_schema.hpp: the node, fabric, power and cost blocks;
// sim/serving/serving_spec.hpp):
// JSON by default, or docs/specs.md's table rows.
#include <iostream>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/serving/serving_spec.hpp"
#include "topologies/cluster_schema.hpp"
#include "workloads/workload_schema.hpp"

namespace clustersim::cli {

int run_schema(const std::vector<std::string>& args) {
  const Arguments a(args, {}, {"markdown"});
  const std::string spec = a.positional().size() == 1 ? a.positional().front() : "";
  if (spec == "workload")
    std::cout << (a.flag("markdown") ? workload_schema_markdown() : workload_schema_json() + "\n");
  else if (spec == "cluster")
    std::cout << (a.flag("markdown") ? cluster_schema_markdown() : cluster_schema_json() + "\n");
  else if (spec == "serving")
    std::cout << (a.flag("markdown") ? serving_schema_markdown() : serving_schema_json() + "\n");
  else
    throw UsageError("expected the spec whose schema to print: workload, cluster or serving");
  return 0;
}

}  // namespace clustersim::cli
