#include "sim/serving/serving_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/json_fields.hpp"

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;

// The report's sections (docs/serving.md "Report"): their keys in order and the members they hold.
const JsonField<ServingReport> kRunFields[] = {
    {"serving", &ServingReport::serving}, {"cluster", &ServingReport::cluster},
    {"gpu", &ServingReport::gpu},         {"scheduler", &ServingReport::scheduler},
    {"router", &ServingReport::router},   {"replicas", &ServingReport::replicas},
    {"tp", &ServingReport::tp},           {"pp", &ServingReport::pp},
};  // gpus (the cost's) follows

using M = ReplicaMemory;
const JsonField<M> kMemoryFields[] = {
    {"capacity_bytes", &M::capacity_bytes},         {"weights_bytes", &M::weights_bytes},
    {"activation_bytes", &M::activation_bytes},     {"workspace_bytes", &M::workspace_bytes},
    {"kv_cache_bytes", &M::kv_cache_bytes},         {"kv_bytes_per_token", &M::kv_bytes_per_token},
    {"kv_capacity_tokens", &M::kv_capacity_tokens},
};  // kv_blocks (the scheduler's) follows

const JsonField<ServingReport> kPrefillPoolFields[] = {
    {"prefill_replicas", &ServingReport::prefill_replicas},
    {"prefill_tp", &ServingReport::prefill_tp},
    {"prefill_pp", &ServingReport::prefill_pp},
};  // prefill_memory and the KV transfers follow

const JsonField<SwapStats> kSwapFields[] = {
    {"swap_outs", &SwapStats::swap_outs},
    {"swap_ins", &SwapStats::swap_ins},
    {"blocks_out", &SwapStats::blocks_out},
    {"blocks_in", &SwapStats::blocks_in},
    {"bytes_per_gpu", &SwapStats::bytes_per_gpu},
    {"time_s", &SwapStats::time_s},
    {"recompute_fallbacks", &SwapStats::recompute_fallbacks},
    {"host_blocks_per_replica", &SwapStats::host_blocks_per_replica},
};

using S = ServingSummary;
const JsonField<S> kRequestFields[] = {
    {"arrived", &S::requests},
    {"finished", &S::finished},
    {"rejected_context", &S::rejected_context},
    {"rejected_kv_cache", &S::rejected_kv_cache},
    {"rejected_batch_tokens", &S::rejected_batch_tokens},
    {"preemptions", &S::preemptions},
    {"iterations", &S::iterations},
    {"input_tokens", &S::input_tokens},
    {"output_tokens", &S::output_tokens},
};

const JsonField<LatencySummary> kLatencyFields[] = {
    {"mean", &LatencySummary::mean_s}, {"p50", &LatencySummary::p50_s}, {"p90", &LatencySummary::p90_s},
    {"p99", &LatencySummary::p99_s},   {"max", &LatencySummary::max_s},
};

const JsonField<S> kThroughputFields[] = {
    {"makespan_s", &S::makespan_s},
    {"requests_per_s", &S::throughput_rps},
    {"input_tokens_per_s", &S::input_tokens_per_s},
    {"output_tokens_per_s", &S::output_tokens_per_s},
    {"goodput_rps", &S::goodput_rps},
    {"slo_attainment", &S::slo_attainment},
};

const JsonField<S> kUtilizationFields[] = {
    {"gpu_busy_fraction", &S::gpu_busy_fraction},
    {"mean_kv_occupancy", &S::mean_kv_occupancy},
    {"peak_kv_occupancy", &S::peak_kv_occupancy},
    {"mean_running", &S::mean_running},
    {"mean_queued", &S::mean_queued},
    {"mean_requests_in_system", &S::mean_requests_in_system},
};

// An interval's basis: the datasets (a list of {dataset, rows}) follow kIntervalHead.
using I = ServingInterval;
const JsonField<I> kIntervalHead[] = {{"rows", &I::rows}};
const JsonField<I> kIntervalTail[] = {
    {"mean_distance", &I::mean_distance},
    {"max_distance", &I::max_distance},
    {"widening", &I::widening},
    {"error_p5", &I::error_p5},
    {"error_p50", &I::error_p50},
    {"error_p95", &I::error_p95},
    {"rule", &I::rule},
};

const JsonField<ServingCost> kPowerFields[] = {
    {"gpu_w", &ServingCost::gpu_power_w},
    {"it_w", &ServingCost::it_power_w},
    {"facility_w", &ServingCost::facility_power_w},
    {"energy_j", &ServingCost::energy_j},
    {"energy_per_output_token_j", &ServingCost::energy_per_output_token_j},
    {"source", &ServingCost::power_source},
};

const JsonField<ServingCost> kCostFields[] = {
    {"usd_per_gpu_hour", &ServingCost::usd_per_gpu_hour},
    {"usd_per_hour", &ServingCost::usd_per_hour},
    {"usd", &ServingCost::usd},
    {"usd_per_million_output_tokens", &ServingCost::usd_per_million_output_tokens},
    {"usd_per_million_tokens", &ServingCost::usd_per_million_tokens},
    {"source", &ServingCost::price_source},
};

// The samples' columns (preemptions: so far).
const JsonField<ServingSample> kSampleFields[] = {
    {"time_s", &ServingSample::time_s},           {"running", &ServingSample::running},
    {"queued", &ServingSample::queued},           {"kv_blocks_used", &ServingSample::kv_blocks_used},
    {"preemptions", &ServingSample::preemptions},
};

Json memory_json(const ReplicaMemory& m, std::int64_t kv_blocks) {
  Json j = fields_json(m, kMemoryFields);
  j["kv_blocks"] = kv_blocks;
  return j;
}

Json interval_json(const ServingInterval& i) {
  Json datasets = Json::array();
  for (const auto& [dataset, rows] : i.datasets)
    datasets.push_back({{"dataset", dataset}, {"rows", rows}});
  Json basis = fields_json(i, kIntervalHead);
  basis["datasets"] = datasets;
  write_fields(basis, i, kIntervalTail);
  return {{"predicted", i.predicted}, {"interval", {i.lo, i.hi}}, {"basis", basis}};
}

double ratio_or_zero(double part, double whole) {
  return whole > 0 ? part / whole : 0.0;
}

std::string fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

std::string serving_report_json(const ServingReport& r, int indent) {
  const ServingSummary& s = r.result.summary;
  const ServingCost& c = r.cost;
  const ReplicaMemory& m = r.memory;
  Json j;
  j["run"] = fields_json(r, kRunFields);
  j["run"]["gpus"] = c.gpus;
  j["memory"] = memory_json(m, s.kv_blocks_per_replica);
  if (m.attention_dp_ranks > 1) {  // data-parallel attention: the KV cache per rank
    j["memory"]["attention_dp_ranks"] = m.attention_dp_ranks;
    j["memory"]["kv_capacity_tokens_per_rank"] = m.kv_capacity_tokens_per_rank;
  }
  if (m.draft_weights_bytes > 0.0) {  // speculative decoding: the draft's share of the KV budget
    j["memory"]["draft_weights_bytes"] = m.draft_weights_bytes;
    j["memory"]["draft_kv_bytes_per_token"] = m.draft_kv_bytes_per_token;
  }
  if (r.prefill_replicas > 0) {
    const KvTransferStats& x = r.result.kv_transfers;
    Json& d = j["disaggregation"] = fields_json(r, kPrefillPoolFields);
    d["prefill_memory"] = memory_json(r.prefill_memory, x.prefill_kv_blocks_per_replica);
    d["kv_transfers"] = x.transfers;
    d["kv_transfer_bytes"] = x.bytes;
    d["kv_transfer_bytes_per_token"] = x.bytes_per_token;
    d["kv_transfer_mean_s"] = ratio_or_zero(x.total_s, static_cast<double>(x.transfers));
    d["kv_transfer_max_s"] = x.max_s;
    d["ttft_convention"] =
        "first token emitted by the prefill replica (DistServe); the transfer is in the first gap between tokens";
  }
  if (r.prefix_caching) {
    const PrefixCacheStats& x = r.result.prefix_cache;
    j["prefix_cache"] = {{"lookups", x.lookups},
                         {"hits", x.hits},
                         {"hit_rate", ratio_or_zero(static_cast<double>(x.hits), static_cast<double>(x.lookups))},
                         {"saved_prefill_tokens", x.saved_prefill_tokens},
                         {"saved_prefill_fraction", ratio_or_zero(static_cast<double>(x.saved_prefill_tokens),
                                                                  static_cast<double>(x.lookup_prompt_tokens))},
                         {"evictions", x.evictions},
                         {"dropped_references", x.dropped_references}};
  }
  if (r.swap) j["swap"] = fields_json(r.result.swap, kSwapFields);
  if (r.speculative_tokens > 0) {
    const SpeculativeStats& x = r.result.speculative;
    j["speculative"] = {{"draft_tokens", r.speculative_tokens},
                        {"expected_tokens_per_step", x.expected_tokens_per_step},
                        {"steps", x.steps},
                        {"tokens", x.tokens},
                        {"tokens_per_step", ratio_or_zero(static_cast<double>(x.tokens), static_cast<double>(x.steps))},
                        {"truncated_steps", x.truncated_steps},
                        {"draft_time_s", x.draft_time_s}};
  }
  j["requests"] = fields_json(s, kRequestFields);
  j["latency"] = {{"ttft_s", fields_json(s.ttft, kLatencyFields)},
                  {"tbt_s", {{"p50", s.tbt_p50_s}, {"p99", s.tbt_p99_s}}},
                  {"tbt_mean_per_request_s", fields_json(s.tbt_mean, kLatencyFields)},
                  {"tbt_max_per_request_s", fields_json(s.tbt_max, kLatencyFields)},
                  {"e2e_s", fields_json(s.e2e, kLatencyFields)}};
  j["throughput"] = fields_json(s, kThroughputFields);
  Json intervals = Json::object();
  for (const ServingInterval& i : r.intervals)
    intervals[i.metric] = interval_json(i);
  j["intervals"] = intervals;
  j["utilization"] = fields_json(s, kUtilizationFields);
  j["power"] = fields_json(c, kPowerFields);
  j["cost"] = fields_json(c, kCostFields);
  j["samples"] = columns_json(r.result.samples, kSampleFields);
  j["samples_truncated"] = r.result.samples_truncated;
  return j.dump(indent);
}

std::string serving_report_text(const ServingReport& r) {
  const ServingSummary& s = r.result.summary;
  const ServingCost& c = r.cost;
  std::string t;
  t += "serving " + r.serving + " on " + r.cluster + " (" + r.gpu + "): " + std::to_string(r.replicas) +
       " replicas x tp " + std::to_string(r.tp) + " x pp " + std::to_string(r.pp) + ", " + r.scheduler + ", " +
       r.router + "\n";
  t += "  KV cache per replica   " + std::to_string(r.memory.kv_capacity_tokens) + " tokens (" +
       fixed("%.1f", r.memory.kv_cache_bytes / 1e9) + " GB per GPU)\n";
  if (r.prefill_replicas > 0) {
    const KvTransferStats& x = r.result.kv_transfers;
    t += "  prefill pool           " + std::to_string(r.prefill_replicas) + " replicas x tp " +
         std::to_string(r.prefill_tp) + " x pp " + std::to_string(r.prefill_pp) + " (the replicas above decode); " +
         std::to_string(x.transfers) + " KV transfers, " + fixed("%.3f", x.bytes / 1e9) + " GB, mean " +
         fixed("%.2f", x.transfers > 0 ? 1e3 * x.total_s / static_cast<double>(x.transfers) : 0.0) + " ms, max " +
         fixed("%.2f", 1e3 * x.max_s) + " ms\n";
  }
  if (r.prefix_caching) {
    const PrefixCacheStats& x = r.result.prefix_cache;
    t += "  prefix cache           " + std::to_string(x.hits) + " hits of " + std::to_string(x.lookups) + " lookups, " +
         std::to_string(x.saved_prefill_tokens) + " prefill tokens saved, " + std::to_string(x.evictions) +
         " evictions\n";
  }
  if (r.swap) {
    const SwapStats& x = r.result.swap;
    t += "  swap                   " + std::to_string(x.swap_outs) + " out, " + std::to_string(x.swap_ins) + " in, " +
         fixed("%.3f", x.bytes_per_gpu / 1e9) + " GB per GPU, " + fixed("%.3f", x.time_s) + " s; " +
         std::to_string(x.recompute_fallbacks) + " recomputed (host space full)\n";
  }
  t += "  requests               " + std::to_string(s.requests) + " arrived, " + std::to_string(s.finished) +
       " finished, rejected: " + std::to_string(s.rejected_context) + " context, " +
       std::to_string(s.rejected_kv_cache) + " KV cache, " + std::to_string(s.rejected_batch_tokens) +
       " batch tokens; " + std::to_string(s.preemptions) + " preemptions\n";
  auto line = [&t](const char* name, const LatencySummary& l) {
    t += std::string("  ") + name + fixed("%.4f", l.p50_s) + " / " + fixed("%.4f", l.p90_s) + " / " +
         fixed("%.4f", l.p99_s) + " s (mean " + fixed("%.4f", l.mean_s) + ")\n";
  };
  t += "  latency p50 / p90 / p99\n";
  line("  TTFT                 ", s.ttft);
  line("  TBT (request mean)   ", s.tbt_mean);
  line("  end to end           ", s.e2e);
  t += "    TBT (all tokens)     p50 " + fixed("%.4f", s.tbt_p50_s) + ", p99 " + fixed("%.4f", s.tbt_p99_s) + " s\n";
  t += "  throughput             " + fixed("%.2f", s.throughput_rps) + " requests/s, " +
       fixed("%.0f", s.input_tokens_per_s) + " input + " + fixed("%.0f", s.output_tokens_per_s) +
       " output tokens/s over " + fixed("%.1f", s.makespan_s) + " s\n";
  for (const ServingInterval& x : r.intervals) {
    const bool rate = x.metric == "output_tokens_per_s";
    const char* format = rate ? "%.0f" : "%.4f";
    std::string basis;
    for (const auto& d : x.datasets)
      basis += (basis.empty() ? "" : ", ") + d.dataset;
    t += "  error bars " + x.metric + std::string(std::max<std::size_t>(1, 20 - x.metric.size()), ' ') +
         fixed(format, x.predicted) + " in [" + fixed(format, x.lo) + ", " + fixed(format, x.hi) + "]" +
         (rate ? " tokens/s" : " s") + " (5-95 %, " + std::to_string(x.rows) + " validation rows of " + basis + ")\n";
  }
  t += "  SLO attainment         " + fixed("%.1f", 100 * s.slo_attainment) + " % (goodput " +
       fixed("%.2f", s.goodput_rps) + " requests/s)\n";
  t += "  GPU busy               " + fixed("%.1f", 100 * s.gpu_busy_fraction) + " %, KV occupancy mean " +
       fixed("%.1f", 100 * s.mean_kv_occupancy) + " % (peak " + fixed("%.1f", 100 * s.peak_kv_occupancy) + " %)\n";
  t += "  power                  " + fixed("%.0f", c.gpu_power_w) + " W per GPU, " +
       fixed("%.1f", c.facility_power_w / 1e3) + " kW facility, " + fixed("%.2f", c.energy_per_output_token_j) +
       " J per output token\n";
  t += "  cost                   $" + fixed("%.2f", c.usd_per_gpu_hour) + " per GPU-hour, $" +
       fixed("%.3f", c.usd_per_million_output_tokens) + " per million output tokens ($" +
       fixed("%.3f", c.usd_per_million_tokens) + " per million tokens in + out)\n";
  return t;
}

std::string serving_timeline_json(const ServingResult& result, std::size_t max_requests) {
  Json events = Json::array();
  std::map<int, std::vector<double>> lanes;  // per replica: when each lane is free again
  std::size_t written = 0;
  for (std::size_t i = 0; i < result.requests.size() && written < max_requests; ++i) {
    const ServedRequest& q = result.requests[i];
    if (q.status != RequestStatus::finished) continue;
    ++written;
    std::vector<double>& free_at = lanes[q.replica];
    std::size_t lane = 0;
    while (lane < free_at.size() && free_at[lane] > q.arrival_s)
      ++lane;
    if (lane == free_at.size()) free_at.push_back(0.0);
    free_at[lane] = q.finish_s;
    const double ts = q.arrival_s * 1e6;
    events.push_back({{"name", "request " + std::to_string(i)},
                      {"ph", "X"},
                      {"pid", q.replica},
                      {"tid", lane},
                      {"ts", ts},
                      {"dur", (q.finish_s - q.arrival_s) * 1e6},
                      {"args",
                       {{"prompt_tokens", q.prompt_tokens},
                        {"output_tokens", q.output_tokens},
                        {"ttft_s", q.first_token_s - q.arrival_s},
                        {"preemptions", q.preemptions}}}});
    events.push_back({{"name", "to first token"},
                      {"ph", "X"},
                      {"pid", q.replica},
                      {"tid", lane},
                      {"ts", ts},
                      {"dur", (q.first_token_s - q.arrival_s) * 1e6}});
  }
  for (const auto& [replica, free_at] : lanes)
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", replica},
                      {"args", {{"name", "replica " + std::to_string(replica)}}}});
  return Json{{"displayTimeUnit", "ms"}, {"traceEvents", std::move(events)}}.dump();
}

}  // namespace clustersim
