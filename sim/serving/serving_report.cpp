#include "sim/serving/serving_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;

Json latency(const LatencySummary& l) {
  return Json{{"mean", l.mean_s}, {"p50", l.p50_s}, {"p90", l.p90_s}, {"p99", l.p99_s}, {"max", l.max_s}};
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
  j["run"] = {{"serving", r.serving}, {"cluster", r.cluster},   {"gpu", r.gpu}, {"scheduler", r.scheduler},
              {"router", r.router},   {"replicas", r.replicas}, {"tp", r.tp},   {"pp", r.pp},
              {"gpus", c.gpus}};
  j["memory"] = {{"capacity_bytes", m.capacity_bytes},         {"weights_bytes", m.weights_bytes},
                 {"activation_bytes", m.activation_bytes},     {"workspace_bytes", m.workspace_bytes},
                 {"kv_cache_bytes", m.kv_cache_bytes},         {"kv_bytes_per_token", m.kv_bytes_per_token},
                 {"kv_capacity_tokens", m.kv_capacity_tokens}, {"kv_blocks", s.kv_blocks_per_replica}};
  if (m.attention_dp_ranks > 1) {  // data-parallel attention: the KV cache per rank
    j["memory"]["attention_dp_ranks"] = m.attention_dp_ranks;
    j["memory"]["kv_capacity_tokens_per_rank"] = m.kv_capacity_tokens_per_rank;
  }
  if (m.draft_weights_bytes > 0.0) {  // speculative decoding: the draft's share of the KV budget
    j["memory"]["draft_weights_bytes"] = m.draft_weights_bytes;
    j["memory"]["draft_kv_bytes_per_token"] = m.draft_kv_bytes_per_token;
  }
  if (r.prefill_replicas > 0) {
    const ReplicaMemory& pm = r.prefill_memory;
    const KvTransferStats& x = r.result.kv_transfers;
    j["disaggregation"] = {{"prefill_replicas", r.prefill_replicas},
                           {"prefill_tp", r.prefill_tp},
                           {"prefill_pp", r.prefill_pp},
                           {"prefill_memory",
                            {{"capacity_bytes", pm.capacity_bytes},
                             {"weights_bytes", pm.weights_bytes},
                             {"activation_bytes", pm.activation_bytes},
                             {"workspace_bytes", pm.workspace_bytes},
                             {"kv_cache_bytes", pm.kv_cache_bytes},
                             {"kv_bytes_per_token", pm.kv_bytes_per_token},
                             {"kv_capacity_tokens", pm.kv_capacity_tokens},
                             {"kv_blocks", x.prefill_kv_blocks_per_replica}}},
                           {"kv_transfers", x.transfers},
                           {"kv_transfer_bytes", x.bytes},
                           {"kv_transfer_bytes_per_token", x.bytes_per_token},
                           {"kv_transfer_mean_s", x.transfers > 0 ? x.total_s / static_cast<double>(x.transfers) : 0.0},
                           {"kv_transfer_max_s", x.max_s},
                           {"ttft_convention",
                            "first token emitted by the prefill replica (DistServe); the transfer is in the first "
                            "gap between tokens"}};
  }
  if (r.prefix_caching) {
    const PrefixCacheStats& x = r.result.prefix_cache;
    j["prefix_cache"] = {
        {"lookups", x.lookups},
        {"hits", x.hits},
        {"hit_rate", x.lookups > 0 ? static_cast<double>(x.hits) / static_cast<double>(x.lookups) : 0.0},
        {"saved_prefill_tokens", x.saved_prefill_tokens},
        {"saved_prefill_fraction", x.lookup_prompt_tokens > 0 ? static_cast<double>(x.saved_prefill_tokens) /
                                                                    static_cast<double>(x.lookup_prompt_tokens)
                                                              : 0.0},
        {"evictions", x.evictions},
        {"dropped_references", x.dropped_references}};
  }
  if (r.swap) {
    const SwapStats& x = r.result.swap;
    j["swap"] = {{"swap_outs", x.swap_outs},
                 {"swap_ins", x.swap_ins},
                 {"blocks_out", x.blocks_out},
                 {"blocks_in", x.blocks_in},
                 {"bytes_per_gpu", x.bytes_per_gpu},
                 {"time_s", x.time_s},
                 {"recompute_fallbacks", x.recompute_fallbacks},
                 {"host_blocks_per_replica", x.host_blocks_per_replica}};
  }
  if (r.speculative_tokens > 0) {
    const SpeculativeStats& x = r.result.speculative;
    j["speculative"] = {
        {"draft_tokens", r.speculative_tokens},
        {"expected_tokens_per_step", x.expected_tokens_per_step},
        {"steps", x.steps},
        {"tokens", x.tokens},
        {"tokens_per_step", x.steps > 0 ? static_cast<double>(x.tokens) / static_cast<double>(x.steps) : 0.0},
        {"truncated_steps", x.truncated_steps},
        {"draft_time_s", x.draft_time_s}};
  }
  j["requests"] = {{"arrived", s.requests},
                   {"finished", s.finished},
                   {"rejected_context", s.rejected_context},
                   {"rejected_kv_cache", s.rejected_kv_cache},
                   {"rejected_batch_tokens", s.rejected_batch_tokens},
                   {"preemptions", s.preemptions},
                   {"iterations", s.iterations},
                   {"input_tokens", s.input_tokens},
                   {"output_tokens", s.output_tokens}};
  j["latency"] = {{"ttft_s", latency(s.ttft)},
                  {"tbt_s", {{"p50", s.tbt_p50_s}, {"p99", s.tbt_p99_s}}},
                  {"tbt_mean_per_request_s", latency(s.tbt_mean)},
                  {"tbt_max_per_request_s", latency(s.tbt_max)},
                  {"e2e_s", latency(s.e2e)}};
  j["throughput"] = {{"makespan_s", s.makespan_s},
                     {"requests_per_s", s.throughput_rps},
                     {"input_tokens_per_s", s.input_tokens_per_s},
                     {"output_tokens_per_s", s.output_tokens_per_s},
                     {"goodput_rps", s.goodput_rps},
                     {"slo_attainment", s.slo_attainment}};
  Json intervals = Json::object();
  for (const ServingInterval& x : r.intervals) {
    const ServingInterval& i = x;
    Json datasets = Json::array();
    for (const auto& [dataset, rows] : i.datasets)
      datasets.push_back({{"dataset", dataset}, {"rows", rows}});
    intervals[x.metric] = {{"predicted", x.predicted},
                           {"interval", {i.lo, i.hi}},
                           {"basis",
                            {{"rows", i.rows},
                             {"datasets", datasets},
                             {"mean_distance", i.mean_distance},
                             {"max_distance", i.max_distance},
                             {"widening", i.widening},
                             {"error_p5", i.error_p5},
                             {"error_p50", i.error_p50},
                             {"error_p95", i.error_p95},
                             {"rule", i.rule}}}};
  }
  j["intervals"] = intervals;
  j["utilization"] = {{"gpu_busy_fraction", s.gpu_busy_fraction},
                      {"mean_kv_occupancy", s.mean_kv_occupancy},
                      {"peak_kv_occupancy", s.peak_kv_occupancy},
                      {"mean_running", s.mean_running},
                      {"mean_queued", s.mean_queued},
                      {"mean_requests_in_system", s.mean_requests_in_system}};
  j["power"] = {{"gpu_w", c.gpu_power_w},
                {"it_w", c.it_power_w},
                {"facility_w", c.facility_power_w},
                {"energy_j", c.energy_j},
                {"energy_per_output_token_j", c.energy_per_output_token_j},
                {"source", c.power_source}};
  j["cost"] = {{"usd_per_gpu_hour", c.usd_per_gpu_hour},
               {"usd_per_hour", c.usd_per_hour},
               {"usd", c.usd},
               {"usd_per_million_output_tokens", c.usd_per_million_output_tokens},
               {"usd_per_million_tokens", c.usd_per_million_tokens},
               {"source", c.price_source}};
  Json samples = {{"time_s", Json::array()},
                  {"running", Json::array()},
                  {"queued", Json::array()},
                  {"kv_blocks_used", Json::array()},
                  {"preemptions", Json::array()}};
  for (const ServingSample& x : r.result.samples) {
    samples["time_s"].push_back(x.time_s);
    samples["running"].push_back(x.running);
    samples["queued"].push_back(x.queued);
    samples["kv_blocks_used"].push_back(x.kv_blocks_used);
    samples["preemptions"].push_back(x.preemptions);
  }
  j["samples"] = std::move(samples);
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
      basis += (basis.empty() ? "" : ", ") + d.first;
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
