#include "sim/api/serving_request.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/api/serving_validation.hpp"
#include "sim/api/spec_overrides.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/serving/serving_engine.hpp"
#include "sim/serving/serving_traffic.hpp"
#include "sim/serving/speculative_decoding.hpp"
#include "sim/simulate.hpp"
#include "sim/validation/error_bars.hpp"

namespace clustersim {
namespace {

constexpr std::int64_t kDefaultTimelineRequests = 10'000;
constexpr double kDefaultSampleInterval_s = 1.0;

// A key of the serving spec: the first key of one of its schema's paths (model, replica, traffic, ...).
bool is_serving_key(std::string_view k) {
  if (k == "name" || k == "description") return false;  // both specs have them: a prefix says which
  for (const SpecField& f : serving_schema()) {
    const std::string_view p = f.path;
    if (p.substr(0, p.find('.')) == k) return true;
  }
  return false;
}

}  // namespace

SplitServingOverrides split_serving_overrides(const std::vector<std::string>& settings) {
  ClusterAndOtherOverrides split = split_cluster_and(settings, "serving", "traffic.rate_rps=20", &is_serving_key);
  return {std::move(split.cluster), std::move(split.other)};
}

namespace {

// Both specs loaded and checked, the iteration model built: what every run of a request shares.
struct Deployment {
  ClusterSpec cluster;
  ServingSpec spec;
  GpuSpec gpu;
  std::unique_ptr<IterationModel> model;          // every replica; disaggregated: the decode pool's
  std::unique_ptr<IterationModel> prefill_model;  // disaggregated: the prefill pool's
  std::unique_ptr<KvTransfer> transfer;           // disaggregated: prefill -> decode over the fabric
  std::unique_ptr<IterationModel> draft;          // speculative decoding: the draft model
  ServingRunOptions options;
  std::int64_t timeline_requests = kDefaultTimelineRequests;
};

Deployment prepare(const ServingRequest& request) {
  Deployment d;
  d.timeline_requests = request.timeline_requests.value_or(kDefaultTimelineRequests);
  if (d.timeline_requests < 1)
    throw SpecError("--timeline-requests", "",
                    "expected a number of requests >= 1, got " + std::to_string(d.timeline_requests));
  d.options.sample_interval_s = request.sample_interval_s.value_or(kDefaultSampleInterval_s);
  if (!(d.options.sample_interval_s > 0.0) || d.options.sample_interval_s > 1e9)
    throw SpecError(
        "--sample-interval", "",
        "expected a number of seconds > 0 (at most 1e9), got " + std::to_string(d.options.sample_interval_s));
  if (request.iteration_records < 0)
    throw SpecError("iterations", "",
                    "expected a number of iterations to keep >= 0, got " + std::to_string(request.iteration_records));
  d.options.iteration_records = request.iteration_records;
  const SplitServingOverrides overrides = split_serving_overrides(request.settings);
  d.cluster = load_cluster_spec(request.cluster, overrides.cluster);
  d.spec = load_serving_spec(request.serving, overrides.serving);
  const ServingSpec& spec = d.spec;
  const std::int64_t gpus = std::int64_t{spec.replicas} * spec.tp * spec.pp;
  if (spec.disaggregated() && spec.gpus() > d.cluster.gpu_count())
    throw SpecError(spec.source_file, "/prefill_pool/replicas",
                    std::to_string(spec.prefill_pool.replicas) + " prefill replicas x tp " +
                        std::to_string(spec.prefill_tp()) + " x pp " + std::to_string(spec.prefill_pp()) + " and " +
                        std::to_string(spec.replicas) + " decode replicas x tp " + std::to_string(spec.tp) + " x pp " +
                        std::to_string(spec.pp) + " need " + std::to_string(spec.gpus()) + " GPUs; the cluster " +
                        d.cluster.name + " has " + std::to_string(d.cluster.gpu_count()));
  if (gpus > d.cluster.gpu_count())
    throw SpecError(spec.source_file, "/replica/replicas",
                    std::to_string(spec.replicas) + " replicas x tp " + std::to_string(spec.tp) + " x pp " +
                        std::to_string(spec.pp) + " need " + std::to_string(gpus) + " GPUs; the cluster " +
                        d.cluster.name + " has " + std::to_string(d.cluster.gpu_count()));
  d.gpu = simulated_gpu(d.cluster);
  try {
    d.model = make_iteration_model(replica_config(spec), d.gpu, d.cluster);
  } catch (const SpecError& e) {
    // The replica's errors name ReplicaConfig's members: say where they are in the serving spec.
    if (e.file() == d.cluster.source_file) throw;
    throw SpecError(spec.source_file, serving_path_of_replica_path(spec, e.json_path()), e.message());
  }
  if (spec.speculative.tokens > 0) {
    try {
      d.draft = make_iteration_model(draft_replica_config(spec), d.gpu, d.cluster);
    } catch (const SpecError& e) {
      if (e.file() == d.cluster.source_file) throw;
      throw SpecError(
          spec.source_file, "/speculative/draft_model",
          "the draft model \"" + spec.speculative.draft_source + "\" on the replica's layout: " + e.message());
    }
    try {  // the draft's weights and KV cache come out of the replica's KV budget
      d.model = with_draft_memory(std::move(d.model), d.draft->memory());
    } catch (const SpecError& e) {
      throw SpecError(spec.source_file, e.json_path(), e.message());
    }
  }
  if (spec.disaggregated()) {
    try {
      d.prefill_model = make_iteration_model(prefill_replica_config(spec), d.gpu, d.cluster);
    } catch (const SpecError& e) {
      if (e.file() == d.cluster.source_file) throw;
      throw SpecError(spec.source_file, serving_path_of_prefill_replica_path(spec, e.json_path()),
                      "prefill pool: " + e.message());
    }
    d.transfer = make_fabric_kv_transfer(d.cluster, {spec.prefill_pool.replicas, spec.prefill_tp(), spec.prefill_pp()},
                                         {spec.replicas, spec.tp, spec.pp});
  }
  return d;
}

// The deployment serving `traffic`.
ServingReport run(const Deployment& d, const TrafficSpec& traffic) {
  const ServingSpec& spec = d.spec;
  ServingSpec run_spec = spec;
  run_spec.traffic = traffic;
  const std::vector<RequestArrival> arrivals = make_traffic(traffic);
  ServingReport report;
  report.serving = spec.name;
  report.cluster = d.cluster.name;
  report.gpu = d.gpu.id;
  report.scheduler = spec.scheduler;
  report.router = spec.router;
  report.replicas = spec.replicas;
  report.tp = spec.tp;
  report.pp = spec.pp;
  report.memory = d.model->memory();
  report.prefix_caching = spec.prefix_caching;
  report.swap = spec.preemption == "swap";
  report.speculative_tokens = spec.speculative.tokens;
  if (spec.disaggregated()) {
    report.prefill_replicas = spec.prefill_pool.replicas;
    report.prefill_tp = spec.prefill_tp();
    report.prefill_pp = spec.prefill_pp();
    report.prefill_memory = d.prefill_model->memory();
  }
  report.result = run_serving(run_spec,
                              // The host link: the GPU's PCIe link (node.pcie_bandwidth_GBps, per direction).
                              ServingModels{*d.model, d.prefill_model.get(), d.transfer.get(),
                                            d.cluster.node.pcie_bandwidth_GBps * 1e9, d.draft.get()},
                              arrivals, d.options);
  report.cost = serving_cost(report.result.summary, static_cast<int>(spec.gpus()), d.gpu, d.cluster);
  return report;
}

// The error bars: per metric, the interval from the serving validation residuals nearest the deployment
// (sim/validation/error_bars.hpp: the rule of training's step-time interval).
void add_intervals(ServingReport& report, const Deployment& d) {
  const ResidualTable table = shipped_residuals();
  const PredictionFeatures features = serving_features(d.gpu.id, d.spec);
  for (const std::string& metric : serving_validation_metrics()) {
    const double predicted = serving_metric(report.result.summary, metric);
    if (!(predicted > 0.0)) continue;  // nothing finished (or no second token): no value to bound
    const auto i = metric_interval(features, metric, predicted, table);
    if (!i) continue;
    report.intervals.push_back({*i, metric, predicted});
  }
}

void write_timeline(const ServingRequest& request, const Deployment& d, const ServingReport& report) {
  if (request.timeline_path)
    write_output_file(*request.timeline_path,
                      serving_timeline_json(report.result, static_cast<std::size_t>(d.timeline_requests)) + "\n",
                      "timeline file");
}

}  // namespace

bool meets_percentile_slo(const ServingSummary& s, const SloSpec& slo) {
  return s.finished > 0 && s.ttft.p90_s <= slo.ttft_s && s.tbt_p99_s <= slo.tbt_s;
}

ServingReport serve(const ServingRequest& request) {
  const Deployment d = prepare(request);
  ServingReport report = run(d, d.spec.traffic);
  add_intervals(report, d);
  write_timeline(request, d, report);
  return report;
}

void check_arrival_rate_settable(const ServingSpec& spec, const std::string& option_sets) {
  if (!spec.traffic.trace.empty())
    throw SpecError(spec.source_file, "/traffic/trace",
                    option_sets + " the arrival rate of generated traffic; a request trace has its own");
  if (spec.traffic.closed_loop())
    throw SpecError(spec.source_file, "/traffic/arrival",
                    option_sets +
                        " the arrival rate; a closed loop's rate is the deployment's own (vary traffic.concurrency "
                        "instead)");
}

MaxRateSearch find_max_rate(const ServingRequest& request, double precision) {
  const Deployment d = prepare(request);
  const TrafficSpec& base = d.spec.traffic;
  check_arrival_rate_settable(d.spec, "--find-max-rate varies");
  MaxRateSearch search;
  auto probe = [&](double rate) {
    TrafficSpec t = base;
    t.rate_rps = rate;
    ServingReport report = run(d, t);
    const ServingSummary& s = report.result.summary;
    const bool meets = meets_percentile_slo(s, d.spec.slo);
    search.probes.push_back({rate, s.ttft.p90_s, s.tbt_p99_s, s.slo_attainment, meets});
    if (meets && rate >= search.max_rate_rps) {
      search.max_rate_rps = rate;
      search.at_max = std::move(report);
    }
    return meets;
  };
  // Doubling from the spec's rate until a rate fails (or halving until one meets), then bisection to
  // `precision`. Arrivals over duration_s: at most kMaxProbeRequests of them per probe.
  constexpr double kMaxProbeRequests = 1 << 22;
  constexpr int kMaxSteps = 40;
  double lo = 0.0;
  double hi = 0.0;
  if (probe(base.rate_rps)) {
    lo = base.rate_rps;
    hi = 2 * lo;
    for (int i = 0; i < kMaxSteps && (base.requests > 0 || hi * base.duration_s <= kMaxProbeRequests) && probe(hi);
         ++i) {
      lo = hi;
      hi *= 2;
    }
    if (search.probes.back().meets) {
      search.upper_bound_reached = true;
      return search;
    }
  } else {
    hi = base.rate_rps;
    lo = hi / 2;
    for (int i = 0; i < kMaxSteps && !probe(lo); ++i) {
      hi = lo;
      lo /= 2;
    }
    if (!search.probes.back().meets)
      throw SpecError(d.spec.source_file, "/slo",
                      "no arrival rate down to " + std::to_string(lo) +
                          " requests/s meets TTFT p90 <= " + std::to_string(d.spec.slo.ttft_s) +
                          " s and TBT p99 <= " + std::to_string(d.spec.slo.tbt_s) + " s");
  }
  while (hi - lo > precision * lo) {
    const double mid = 0.5 * (lo + hi);
    (probe(mid) ? lo : hi) = mid;
  }
  write_timeline(request, d, search.at_max);
  return search;
}

std::string max_rate_search_json(const MaxRateSearch& search, int indent) {
  nlohmann::ordered_json j;
  j["max_rate_rps"] = search.max_rate_rps;
  j["upper_bound_reached"] = search.upper_bound_reached;
  j["probes"] = nlohmann::ordered_json::array();
  for (const RateProbe& p : search.probes)
    j["probes"].push_back({{"rate_rps", p.rate_rps},
                           {"ttft_p90_s", p.ttft_p90_s},
                           {"tbt_p99_s", p.tbt_p99_s},
                           {"slo_attainment", p.slo_attainment},
                           {"meets", p.meets}});
  j["report"] = nlohmann::ordered_json::parse(serving_report_json(search.at_max, -1));
  return j.dump(indent);
}

std::string max_rate_search_text(const MaxRateSearch& search) {
  std::string t = "  rate (req/s)   TTFT p90 (s)   TBT p99 (s)   SLO attained   meets\n";
  char line[160];
  for (const RateProbe& p : search.probes) {
    std::snprintf(line, sizeof line, "  %12.3f   %12.4f   %11.4f   %11.1f %%   %s\n", p.rate_rps, p.ttft_p90_s,
                  p.tbt_p99_s, 100 * p.slo_attainment, p.meets ? "yes" : "no");
    t += line;
  }
  std::snprintf(line, sizeof line, "max rate %s%.3f requests/s\n", search.upper_bound_reached ? "at least " : "",
                search.max_rate_rps);
  return t + line + serving_report_text(search.at_max);
}

}  // namespace clustersim
