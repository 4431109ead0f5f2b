#pragma once
// The cheapest deployment meeting the SLO at a target rate (`clustersim serve --search-layouts`):
// for each cluster design and each replica layout (tp x pp), the fewest replicas whose run of the
// spec's traffic at the target rate meets the serving spec's SLO, what that deployment costs per hour,
// the cheapest of them, and the cost-latency frontier (docs/serving.md "Layout search").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/api/serving_request.hpp"

namespace clustersim {

struct LayoutSearchRequest {
  std::vector<std::string> clusters;      // designs: cluster spec files or preset names, >= 1
  std::string serving;                    // a serving spec file or preset name
  std::vector<std::string> settings;      // --set K=V for every design (split_serving_overrides)
  std::optional<double> target_rate_rps;  // > 0; none: the spec's traffic.rate_rps
  std::vector<int> tp = {1, 2, 4, 8};     // the tensor-parallel sizes tried, each >= 1
  std::vector<int> pp = {1};              // the pipeline sizes tried, each >= 1
};

// One layout on one design. `status`: "meets" (replicas is the fewest that meet: one fewer does not,
// or it is 1), "fails_slo" (even every replica the cluster holds does not), "infeasible" (the replica
// cannot run: it does not fit in memory, tp does not divide the heads, ...; `reason` says which).
struct LayoutCandidate {
  std::string design;  // the cluster spec's name (or the source given)
  std::string gpu;     // the GPU id
  int tp = 1;
  int pp = 1;
  int replicas = 0;  // meets: the fewest meeting; fails_slo: the most the cluster holds
  int gpus = 0;      // replicas x tp x pp
  std::string status;
  std::string reason;  // infeasible / fails_slo: why
  int runs = 0;        // serving runs the search made for this layout
  double ttft_p90_s = 0.0;
  double tbt_p99_s = 0.0;
  double slo_attainment = 0.0;
  double throughput_rps = 0.0;
  std::int64_t rejected_kv_cache = 0;
  double gpu_power_w = 0.0;
  double usd_per_hour = 0.0;  // the deployment's $ per hour (sim/serving/serving_cost)
  double usd_per_million_output_tokens = 0.0;
  double usd_per_million_tokens = 0.0;
  bool cheapest = false;     // the lowest usd_per_hour of those meeting (ties: fewer GPUs, lower TTFT)
  bool on_frontier = false;  // meets, and no other meeting layout is both cheaper and faster (TTFT p90)
};

struct LayoutSearch {
  double target_rate_rps = 0.0;
  double ttft_p90_max_s = 0.0;  // the serving spec's SLO
  double tbt_p99_max_s = 0.0;
  std::vector<LayoutCandidate> candidates;  // designs in the order given, then tp, then pp ascending
  std::optional<std::size_t> cheapest;      // index into candidates; none: no layout meets
};

// A deployment meets the SLO when its TTFT p90 <= slo.ttft_s, its p99 gap between tokens <=
// slo.tbt_s (find_max_rate's rule) and no request was rejected for want of KV cache (a layout with a
// larger KV cache would have served it).
bool layout_meets_slo(const ServingSummary& summary, const SloSpec& slo);

// Throws SpecError for bad input (an option, or a spec: file + JSON path), before any run.
LayoutSearch search_layouts(const LayoutSearchRequest& request);

// Keys: target_rate_rps, slo (ttft_p90_max_s, tbt_p99_max_s), layouts (every LayoutCandidate field
// by its name), cheapest (the index into layouts, or null). indent < 0: one line.
std::string layout_search_json(const LayoutSearch& search, int indent);
std::string layout_search_text(const LayoutSearch& search);

}  // namespace clustersim
