#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "sim/api/spec_overrides.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/collective_sweep.hpp"
#include "sim/core/error.hpp"

namespace clustersim::cli {

int run_collective(const std::vector<std::string>& args) {
  const Arguments a(args,
                    {"cluster", "op", "ranks", "min-bytes", "max-bytes", "step-factor", "fidelity", "algorithm",
                     "network-profile", "peer-offset", "set"},
                    {"json"});
  if (!a.positional().empty()) throw UsageError("unexpected argument '" + a.positional().front() + "'");
  const SplitOverrides overrides = split_overrides(a.values("set"));
  if (!overrides.workload.empty()) throw UsageError("--set applies to the cluster here (no workload)");
  const ClusterSpec cluster = load_cluster_spec(a.required("cluster"), overrides.cluster);

  CollectiveSweepRequest request;
  request.op = a.value("op").value_or(request.op);
  if (const auto k = a.value("peer-offset")) {
    try {
      std::size_t used = 0;
      request.peer_offset = std::stoi(*k, &used);
      if (used != k->size()) throw std::invalid_argument(*k);
    } catch (const std::logic_error&) {
      throw SpecError("--peer-offset " + *k, "", "expected an integer");
    }
  }
  request.ranks = a.value("ranks");
  request.min_bytes = a.value("min-bytes").value_or(request.min_bytes);
  request.max_bytes = a.value("max-bytes").value_or(request.max_bytes);
  request.step_factor = a.value("step-factor").value_or(request.step_factor);
  request.fidelity = a.value("fidelity");
  request.algorithm = a.value("algorithm");
  request.network_profile = a.value("network-profile");
  const CollectiveSweepOptions o = collective_sweep_options(cluster, request);

  const auto rows = simulate_collective_sweep(cluster, o);
  if (a.flag("json")) {
    std::cout << collective_rows_json(rows) << "\n";
    return 0;
  }
  const std::string ranks = request.ranks.value_or("0-" + std::to_string(cluster.gpu_count() - 1));
  std::printf("# clustersim collective: %s over %zu ranks (%s) of %s\n", o.send_recv ? "send_recv" : to_string(o.kind),
              o.ranks.size(), ranks.c_str(), cluster.name.c_str());
  if (o.send_recv) std::printf("# every rank sends to the rank %d places after it in --ranks\n", o.peer_offset);
  const std::string profile = collective_sweep_profile_name(cluster, o);
  std::printf("# fidelity %s, algorithm %s, network profile %s; simulated, idle fabric\n", o.fidelity.c_str(),
              o.algorithm.c_str(), profile.c_str());
  for (const DerivedDefault& d : cluster.derived_defaults.items)
    std::printf("# derived default %s = %s: %s\n", d.key.c_str(), d.value.c_str(), d.why.c_str());
  std::printf("#\n#%12s %13s %9s %7s %16s %8s %11s %8s %8s\n", "size", "count", "type", "redop", "algorithm",
              "protocol", "time", "algbw", "busbw");
  std::printf("#%12s %13s %9s %7s %16s %8s %11s %8s %8s\n", "(B)", "(elements)", "", "", "", "", "(us)", "(GB/s)",
              "(GB/s)");
  for (const auto& r : rows) {
    std::printf(" %12.0f %13lld %9s %7s %16s %8s %11.2f %8.2f %8.2f\n", r.bytes, static_cast<long long>(r.count),
                "float", o.send_recv ? "none" : "sum", r.algorithm.c_str(),
                r.protocol.empty() ? "-" : r.protocol.c_str(), r.time_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9);
  }
  return 0;
}

}  // namespace clustersim::cli
