#include "sim/api/serving_comparison.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/cost/design_comparison.hpp"

namespace clustersim {
namespace {

double ttft_p90_s(const ServingDesignRow& r) {
  return r.report->result.summary.ttft.p90_s;
}

// a is at least as cheap per output token at its maximum rate and as fast, and better in one.
bool dominates(const ServingDesignRow& a, const ServingDesignRow& b) {
  const double ca = a.usd_per_million_output_tokens_at_max;
  const double cb = b.usd_per_million_output_tokens_at_max;
  return ca <= cb && ttft_p90_s(a) <= ttft_p90_s(b) && (ca < cb || ttft_p90_s(a) < ttft_p90_s(b));
}

}  // namespace

ServingComparison compare_serving(const std::vector<std::string>& clusters, const std::string& serving,
                                  const std::vector<std::string>& settings) {
  if (clusters.empty()) throw SpecError("--cluster", "", "expected at least one cluster design");
  const SplitServingOverrides overrides = split_serving_overrides(settings);
  const ServingSpec spec = load_serving_spec(serving, overrides.serving);
  std::vector<std::string> names;
  for (const std::string& source : clusters) {
    const ClusterSpec cluster = load_cluster_spec(source, overrides.cluster);
    names.push_back(cluster.name.empty() ? source : cluster.name);
  }
  ServingComparison c;
  c.serving = spec.name;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    ServingDesignRow row;
    row.design = names[i];
    ServingRequest request;
    request.cluster = clusters[i];
    request.serving = serving;
    request.settings = settings;
    try {
      row.report = serve(request);
    } catch (const SpecError& e) {  // the specs were checked: what is left is this design's own
      row.error = e.message();
    }
    if (row.report && spec.traffic.trace.empty() && !spec.traffic.closed_loop()) {
      try {
        const MaxRateSearch search = find_max_rate(request);
        row.max_rate_rps = search.max_rate_rps;
        row.upper_bound_reached = search.upper_bound_reached;
        row.usd_per_million_output_tokens_at_max = search.at_max.cost.usd_per_million_output_tokens;
      } catch (const SpecError& e) {  // no rate meets the SLO on this design
        row.capacity_error = e.message();
      }
    }
    c.rows.push_back(std::move(row));
  }
  std::vector<std::string*> designs;
  for (ServingDesignRow& r : c.rows)
    designs.push_back(&r.design);
  number_repeated_designs(std::move(designs));
  for (ServingDesignRow& r : c.rows) {
    if (!r.report || !r.max_rate_rps) continue;
    bool dominated = false;
    for (const ServingDesignRow& o : c.rows)
      if (&o != &r && o.report && o.max_rate_rps && dominates(o, r)) dominated = true;
    r.pareto = !dominated;
  }
  return c;
}

std::string serving_comparison_json(const ServingComparison& c, int indent) {
  nlohmann::ordered_json j;
  j["serving"] = c.serving;
  j["designs"] = nlohmann::ordered_json::array();
  for (const ServingDesignRow& r : c.rows) {
    if (!r.report) {
      j["designs"].push_back({{"design", r.design}, {"error", r.error}});
      continue;
    }
    const ServingSummary& s = r.report->result.summary;
    const ServingCost& cost = r.report->cost;
    nlohmann::ordered_json d = {{"design", r.design},
                                {"gpu", r.report->gpu},
                                {"gpus", cost.gpus},
                                {"pareto", r.pareto},
                                {"ttft_p90_s", s.ttft.p90_s},
                                {"tbt_p99_s", s.tbt_p99_s},
                                {"e2e_p90_s", s.e2e.p90_s},
                                {"throughput_rps", s.throughput_rps},
                                {"output_tokens_per_s", s.output_tokens_per_s},
                                {"slo_attainment", s.slo_attainment},
                                {"gpu_power_w", cost.gpu_power_w},
                                {"energy_per_output_token_j", cost.energy_per_output_token_j},
                                {"usd_per_hour", cost.usd_per_hour},
                                {"usd_per_million_output_tokens", cost.usd_per_million_output_tokens}};
    d["max_rate_rps"] = r.max_rate_rps ? nlohmann::ordered_json(*r.max_rate_rps) : nlohmann::ordered_json(nullptr);
    d["upper_bound_reached"] = r.upper_bound_reached;
    d["usd_per_million_output_tokens_at_max"] = r.max_rate_rps
                                                    ? nlohmann::ordered_json(r.usd_per_million_output_tokens_at_max)
                                                    : nlohmann::ordered_json(nullptr);
    d["capacity_error"] = r.capacity_error;
    d["report"] = nlohmann::ordered_json::parse(serving_report_json(*r.report, -1));
    j["designs"].push_back(std::move(d));
  }
  return j.dump(indent);
}

std::string serving_comparison_text(const ServingComparison& c) {
  char line[512];
  std::string t = "serving " + c.serving + " on " + std::to_string(c.rows.size()) + " designs\n";
  t += "  design                        GPU               GPUs  TTFT p90 (s)  TBT p99 (s)  req/s    $/hour  "
       "$/M out  max req/s  $/M out at max\n";
  for (const ServingDesignRow& r : c.rows) {
    if (!r.report) {
      std::snprintf(line, sizeof line, "  %-29s cannot run: %s\n", r.design.c_str(), r.error.c_str());
      t += line;
      continue;
    }
    const ServingSummary& s = r.report->result.summary;
    char max_rate[64] = "none";
    char at_max[64] = "-";
    if (r.max_rate_rps) {
      std::snprintf(max_rate, sizeof max_rate, "%s%.2f", r.upper_bound_reached ? ">=" : "", *r.max_rate_rps);
      std::snprintf(at_max, sizeof at_max, "%.3f", r.usd_per_million_output_tokens_at_max);
    }
    std::snprintf(line, sizeof line, "  %-29s %-16s %5d  %12.4f  %11.4f  %5.2f  %8.2f  %7.3f  %9s  %14s%s\n",
                  r.design.c_str(), r.report->gpu.c_str(), r.report->cost.gpus, s.ttft.p90_s, s.tbt_p99_s,
                  s.throughput_rps, r.report->cost.usd_per_hour, r.report->cost.usd_per_million_output_tokens, max_rate,
                  at_max, r.pareto ? "  pareto" : "");
    t += line;
  }
  t += "pareto: no other design is as cheap per output token at its maximum rate and as fast (TTFT p90)\n";
  return t;
}

}  // namespace clustersim
