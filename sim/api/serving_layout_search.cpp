#include "sim/api/serving_layout_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

constexpr int kMaxParallelism = 1024;

std::set<int> checked_sizes(const std::vector<int>& sizes, const char* option) {
  if (sizes.empty()) throw SpecError(std::string("--") + option, "", "expected at least one size");
  for (int v : sizes)
    if (v < 1 || v > kMaxParallelism)
      throw SpecError(std::string("--") + option, "",
                      "expected sizes from 1 to " + std::to_string(kMaxParallelism) + ", got " + std::to_string(v));
  return {sizes.begin(), sizes.end()};
}

std::string format_rate(double r) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", r);
  return text;
}

// One design's layout: the fewest replicas meeting the SLO, by doubling from one replica until a
// count meets (or the cluster is full), then bisection between the last count that failed and the
// first that met. Meeting need not be monotone in the replicas (a router's luck): the result is a
// count that meets next to one that does not, as find_max_rate's rate is.
LayoutCandidate search_one(const LayoutSearchRequest& request, const std::string& cluster_source,
                           const ClusterSpec& cluster, const SloSpec& slo, int tp, int pp) {
  LayoutCandidate c;
  c.design = cluster.name.empty() ? cluster_source : cluster.name;
  c.tp = tp;
  c.pp = pp;
  const int per_replica = tp * pp;
  const int max_replicas = cluster.gpu_count() / per_replica;
  if (max_replicas < 1) {
    c.status = "infeasible";
    c.reason = "a replica needs tp x pp = " + std::to_string(per_replica) + " GPUs; the cluster has " +
               std::to_string(cluster.gpu_count());
    return c;
  }
  auto run = [&](int replicas) {
    ServingRequest r;
    r.cluster = cluster_source;
    r.serving = request.serving;
    r.settings = request.settings;
    r.settings.push_back("serving.replica.tp=" + std::to_string(tp));
    r.settings.push_back("serving.replica.pp=" + std::to_string(pp));
    r.settings.push_back("serving.replica.replicas=" + std::to_string(replicas));
    if (request.target_rate_rps)
      r.settings.push_back("serving.traffic.rate_rps=" + format_rate(*request.target_rate_rps));
    ++c.runs;
    return serve(r);
  };
  auto record = [&](const ServingReport& report) {
    const ServingSummary& s = report.result.summary;
    c.gpu = report.gpu;
    c.replicas = report.replicas;
    c.gpus = report.cost.gpus;
    c.ttft_p90_s = s.ttft.p90_s;
    c.tbt_p99_s = s.tbt_p99_s;
    c.slo_attainment = s.slo_attainment;
    c.throughput_rps = s.throughput_rps;
    c.rejected_kv_cache = s.rejected_kv_cache;
    c.gpu_power_w = report.cost.gpu_power_w;
    c.usd_per_hour = report.cost.usd_per_hour;
    c.usd_per_million_output_tokens = report.cost.usd_per_million_output_tokens;
    c.usd_per_million_tokens = report.cost.usd_per_million_tokens;
  };

  ServingReport first;
  try {
    first = run(1);
  } catch (const SpecError& e) {  // the specs were checked: what is left is this layout's own
    c.status = "infeasible";
    c.reason = e.message();
    return c;
  }
  if (layout_meets_slo(first.result.summary, slo)) {
    record(first);
    c.status = "meets";
    return c;
  }
  int lo = 1;  // fails
  int hi = 0;  // meets; 0: none found yet
  ServingReport at_hi;
  ServingReport at_lo = std::move(first);
  // Serves with n replicas and narrows the bracket: hi (and its report) when the SLO is met, else lo.
  auto probe = [&](int n) {
    ServingReport report = run(n);
    if (layout_meets_slo(report.result.summary, slo)) {
      hi = n;
      at_hi = std::move(report);
    } else {
      lo = n;
      at_lo = std::move(report);
    }
  };
  for (int n = 1; hi == 0 && n < max_replicas;) {  // doubling until the SLO is met
    n = std::min(2 * n, max_replicas);
    probe(n);
  }
  if (hi == 0) {
    record(at_lo);
    c.status = "fails_slo";
    c.reason = "the SLO is not met with all " + std::to_string(max_replicas) + " replicas the cluster holds";
    return c;
  }
  while (hi - lo > 1)  // bisection between the two
    probe(lo + (hi - lo) / 2);
  record(at_hi);
  c.status = "meets";
  return c;
}

void mark_cheapest_and_frontier(LayoutSearch& search) {
  std::vector<std::size_t> meeting;
  for (std::size_t i = 0; i < search.candidates.size(); ++i)
    if (search.candidates[i].status == "meets") meeting.push_back(i);
  auto better = [&](std::size_t a, std::size_t b) {  // cheaper; ties: fewer GPUs, then faster
    const LayoutCandidate& x = search.candidates[a];
    const LayoutCandidate& y = search.candidates[b];
    if (x.usd_per_hour != y.usd_per_hour) return x.usd_per_hour < y.usd_per_hour;
    if (x.gpus != y.gpus) return x.gpus < y.gpus;
    return x.ttft_p90_s < y.ttft_p90_s;
  };
  for (std::size_t i : meeting) {
    if (!search.cheapest || better(i, *search.cheapest)) search.cheapest = i;
    const LayoutCandidate& c = search.candidates[i];
    const bool dominated = std::any_of(meeting.begin(), meeting.end(), [&](std::size_t j) {
      const LayoutCandidate& o = search.candidates[j];
      return j != i && o.usd_per_hour <= c.usd_per_hour && o.ttft_p90_s <= c.ttft_p90_s &&
             (o.usd_per_hour < c.usd_per_hour || o.ttft_p90_s < c.ttft_p90_s);
    });
    search.candidates[i].on_frontier = !dominated;
  }
  if (search.cheapest) search.candidates[*search.cheapest].cheapest = true;
}

}  // namespace

bool layout_meets_slo(const ServingSummary& summary, const SloSpec& slo) {
  return meets_percentile_slo(summary, slo) && summary.rejected_kv_cache == 0;
}

LayoutSearch search_layouts(const LayoutSearchRequest& request) {
  if (request.clusters.empty()) throw SpecError("--cluster", "", "expected at least one cluster design");
  const std::set<int> tps = checked_sizes(request.tp, "tp");
  const std::set<int> pps = checked_sizes(request.pp, "pp");
  if (request.target_rate_rps && !(*request.target_rate_rps > 0.0 && std::isfinite(*request.target_rate_rps)))
    throw SpecError("--target-rate", "",
                    "expected a rate in requests/s > 0, got " + format_rate(*request.target_rate_rps));
  // Every spec is read and checked before any run: a bad value is the user's, not a layout's.
  const SplitServingOverrides overrides = split_serving_overrides(request.settings);
  const ServingSpec spec = load_serving_spec(request.serving, overrides.serving);
  if (request.target_rate_rps) check_arrival_rate_settable(spec, "--target-rate sets");
  std::vector<ClusterSpec> clusters;
  for (const std::string& source : request.clusters)
    clusters.push_back(load_cluster_spec(source, overrides.cluster));

  LayoutSearch search;
  search.target_rate_rps = request.target_rate_rps.value_or(spec.traffic.rate_rps);
  search.ttft_p90_max_s = spec.slo.ttft_s;
  search.tbt_p99_max_s = spec.slo.tbt_s;
  for (std::size_t d = 0; d < clusters.size(); ++d)
    for (int tp : tps)
      for (int pp : pps)
        search.candidates.push_back(search_one(request, request.clusters[d], clusters[d], spec.slo, tp, pp));
  mark_cheapest_and_frontier(search);
  return search;
}

std::string layout_search_json(const LayoutSearch& search, int indent) {
  nlohmann::ordered_json j;
  j["target_rate_rps"] = search.target_rate_rps;
  j["slo"] = {{"ttft_p90_max_s", search.ttft_p90_max_s}, {"tbt_p99_max_s", search.tbt_p99_max_s}};
  j["layouts"] = nlohmann::ordered_json::array();
  for (const LayoutCandidate& c : search.candidates)
    j["layouts"].push_back({{"design", c.design},
                            {"gpu", c.gpu},
                            {"tp", c.tp},
                            {"pp", c.pp},
                            {"replicas", c.replicas},
                            {"gpus", c.gpus},
                            {"status", c.status},
                            {"reason", c.reason},
                            {"runs", c.runs},
                            {"ttft_p90_s", c.ttft_p90_s},
                            {"tbt_p99_s", c.tbt_p99_s},
                            {"slo_attainment", c.slo_attainment},
                            {"throughput_rps", c.throughput_rps},
                            {"rejected_kv_cache", c.rejected_kv_cache},
                            {"gpu_power_w", c.gpu_power_w},
                            {"usd_per_hour", c.usd_per_hour},
                            {"usd_per_million_output_tokens", c.usd_per_million_output_tokens},
                            {"usd_per_million_tokens", c.usd_per_million_tokens},
                            {"cheapest", c.cheapest},
                            {"on_frontier", c.on_frontier}});
  j["cheapest"] = search.cheapest ? nlohmann::ordered_json(*search.cheapest) : nlohmann::ordered_json(nullptr);
  return j.dump(indent);
}

std::string layout_search_text(const LayoutSearch& search) {
  char line[512];
  std::snprintf(line, sizeof line, "layouts at %.3f requests/s, SLO TTFT p90 <= %.3g s, TBT p99 <= %.3g s\n",
                search.target_rate_rps, search.ttft_p90_max_s, search.tbt_p99_max_s);
  std::string t = line;
  t += "  design                         tp  pp  replicas  GPUs  TTFT p90 (s)  TBT p99 (s)     $/hour  $/M out tok  \n";
  for (const LayoutCandidate& c : search.candidates) {
    if (c.status == "infeasible") {
      std::snprintf(line, sizeof line, "  %-30s %3d %3d  infeasible: %s\n", c.design.c_str(), c.tp, c.pp,
                    c.reason.c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-30s %3d %3d  %8d %5d  %12.4f  %11.4f  %9.2f  %11.3f  %s%s%s\n",
                    c.design.c_str(), c.tp, c.pp, c.replicas, c.gpus, c.ttft_p90_s, c.tbt_p99_s, c.usd_per_hour,
                    c.usd_per_million_output_tokens, c.status == "meets" ? "meets" : "fails SLO",
                    c.on_frontier ? ", frontier" : "", c.cheapest ? ", CHEAPEST" : "");
    }
    t += line;
  }
  if (search.cheapest) {
    const LayoutCandidate& c = search.candidates[*search.cheapest];
    std::snprintf(line, sizeof line, "cheapest: %s, %d replicas x tp %d x pp %d = %d GPUs, $%.2f per hour\n",
                  c.design.c_str(), c.replicas, c.tp, c.pp, c.gpus, c.usd_per_hour);
    t += line;
  } else {
    t += "no layout meets the SLO at this rate\n";
  }
  return t;
}

}  // namespace clustersim
