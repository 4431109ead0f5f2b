// clustersim topology info|export: inspect a cluster spec as the graph the simulator uses.
//   info C [--json] [--set k=v ...]          counts, bisection, diameter, hops, oversubscription
//   export C --format simgrid|dot|json [--out FILE] [--set k=v ...]
// C is a cluster spec file or preset name. Bad input (spec or usage) exits with status 2.
#include <iostream>
#include <span>
#include <string_view>

#include "sim/api/spec_overrides.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_export.hpp"
#include "topologies/topology_metrics.hpp"

namespace clustersim::cli {
namespace {

// The one cluster argument, and the spec it names with the --set overrides (cluster keys only).
ClusterSpec load_spec(const Arguments& a) {
  if (a.positional().empty()) throw UsageError("missing the cluster (a spec file or preset name)");
  if (a.positional().size() > 1) throw UsageError("unexpected argument '" + a.positional()[1] + "'");
  const SplitOverrides overrides = split_overrides(a.values("set"));
  if (!overrides.workload.empty()) {
    const auto& [key, value] = overrides.workload.front();
    throw SpecError("--set " + key + "=" + value, "", "topology commands take cluster keys only");
  }
  return load_cluster_spec(a.positional().front(), overrides.cluster);
}

int run_info(const std::vector<std::string>& args) {
  const Arguments a(args, {"set"}, {"json"});
  const Cluster cluster = Cluster::build(load_spec(a));
  const TopologyMetrics metrics = compute_metrics(cluster);
  if (a.flag("json"))
    std::cout << metrics_to_json(metrics) << "\n";
  else
    std::cout << metrics_to_text(metrics);
  return 0;
}

int run_export(const std::vector<std::string>& args) {
  const Arguments a(args, {"format", "out", "set"}, {});
  const std::string name = a.required("format");
  const ExportFormat* format = find_export_format(name);
  if (format == nullptr) {
    std::string known;
    for (const auto& f : export_formats())
      known += (known.empty() ? "" : ", ") + std::string(f.name);
    throw UsageError("unknown format '" + name + "' (formats: " + known + ")");
  }
  if (const auto out = a.value("out"))
    check_output_paths({{*out, "export file"}}, {a.positional().empty() ? "" : a.positional().front()});
  const Cluster cluster = Cluster::build(load_spec(a));
  const std::string text = format->write(cluster);
  if (const auto out = a.value("out")) {
    write_output_file(*out, text, "export file");
  } else {
    std::cout << text;
  }
  return 0;
}

struct Subcommand {
  std::string_view name;
  int (*run)(const std::vector<std::string>& args);
};

constexpr Subcommand k_subcommands[] = {
    {"info", &run_info},
    {"export", &run_export},
};

}  // namespace

int run_topology(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("expected a subcommand: info or export");
  for (const Subcommand& s : k_subcommands) {
    if (args.front() == s.name) return s.run({args.begin() + 1, args.end()});
  }
  throw UsageError("unknown subcommand '" + args.front() + "' (expected info or export)");
}

}  // namespace clustersim::cli
