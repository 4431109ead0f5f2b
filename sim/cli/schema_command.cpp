// clustersim schema workload|cluster|serving [--markdown]: a spec's keys as the core declares them
// (workloads/workload_schema.hpp; topologies/cluster_schema.hpp: the node, fabric, power and cost blocks;
// sim/serving/serving_spec.hpp):
// JSON by default, or docs/specs.md's table rows.
#include <iostream>
#include <span>
#include <string_view>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/spec_field.hpp"
#include "sim/serving/serving_spec.hpp"
#include "topologies/cluster_schema.hpp"
#include "workloads/workload_schema.hpp"

namespace clustersim::cli {
namespace {

struct SpecSchema {
  std::string_view spec;
  std::span<const SpecField> (*fields)();
};

constexpr SpecSchema kSchemas[] = {
    {"workload", &workload_schema},
    {"cluster", &cluster_schema},
    {"serving", &serving_schema},
};

}  // namespace

int run_schema(const std::vector<std::string>& args) {
  const Arguments a(args, {}, {"markdown"});
  const std::string spec = a.positional().size() == 1 ? a.positional().front() : "";
  for (const SpecSchema& s : kSchemas) {
    if (s.spec != spec) continue;
    std::cout << (a.flag("markdown") ? spec_fields_markdown(s.fields()) : spec_fields_json(s.fields()) + "\n");
    return 0;
  }
  throw UsageError("expected the spec whose schema to print: workload, cluster or serving");
}

}  // namespace clustersim::cli
