// clustersim schema workload [--markdown]: the workload spec's keys as the core declares them
// (workloads/workload_schema.hpp): JSON by default, or docs/specs.md's table.
#include <iostream>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "workloads/workload_schema.hpp"

namespace clustersim::cli {

int run_schema(const std::vector<std::string>& args) {
  const Arguments a(args, {}, {"markdown"});
  if (a.positional().size() != 1 || a.positional().front() != "workload")
    throw UsageError("expected the spec whose schema to print: workload");
  std::cout << (a.flag("markdown") ? workload_schema_markdown() : workload_schema_json() + "\n");
  return 0;
}

}  // namespace clustersim::cli
