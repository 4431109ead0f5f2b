#include "sim/cost/design_comparison.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cost/figure_format.hpp"

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;

using figure_format::duration;
using figure_format::fmt;
using figure_format::money;

std::string cell(std::string s, std::size_t width, bool left = false) {
  if (s.size() < width) {
    if (left)
      s.append(width - s.size(), ' ');
    else
      s.insert(0, width - s.size(), ' ');
  }
  return s;
}

bool dominates(const DesignRow& a, const DesignRow& b) {
  return ranked_time_s(a) <= ranked_time_s(b) && ranked_cost_usd(a) <= ranked_cost_usd(b) &&
         (ranked_time_s(a) < ranked_time_s(b) || ranked_cost_usd(a) < ranked_cost_usd(b));
}

}  // namespace

double ranked_time_s(const DesignRow& r) {
  return r.run_time_s.value_or(r.train_time_s);
}

double ranked_cost_usd(const DesignRow& r) {
  return r.run_cost_usd.value_or(r.train_cost_usd);
}

void number_repeated_designs(std::vector<std::string*> names) {
  std::map<std::string, int> seen;
  for (std::string* name : names)
    if (const int n = seen[*name]++; n > 0) *name += " #" + std::to_string(n + 1);
}

DesignComparison compare_designs(std::string workload, double tokens, std::vector<DesignRow> rows) {
  std::vector<std::string*> names;
  for (DesignRow& r : rows)
    names.push_back(&r.design);
  number_repeated_designs(std::move(names));
  DesignComparison c;
  c.workload = std::move(workload);
  c.tokens = tokens;
  bool any_fits = false;
  for (DesignRow& r : rows) {
    if (!r.report) continue;
    const Report& rep = *r.report;
    any_fits = any_fits || rep.memory.fits;
    const double tokens_per_step = rep.tokens_per_s * rep.step_time_s;
    const double steps = tokens_per_step > 0 ? tokens / tokens_per_step : 0.0;
    r.train_time_s = steps * rep.step_time_s;
    r.train_cost_usd = rep.cost ? steps * rep.cost->usd_per_step : 0.0;
    r.train_energy_kwh = rep.power ? steps * rep.power->energy_per_step_j / 3.6e6 : 0.0;
    if (rep.step_time_interval) {
      r.train_time_lo_s = steps * rep.step_time_interval->lo;
      r.train_time_hi_s = steps * rep.step_time_interval->hi;
    }
    if (rep.time_to_train) {
      r.run_time_s = rep.time_to_train->days_mean * figure_format::kSecondsPerDay;
      r.run_cost_usd = rep.time_to_train->cost_usd;
    }
  }
  // Ranked with failures only when every simulated design has its run: one basis for all.
  const bool with_failures =
      std::all_of(rows.begin(), rows.end(), [](const DesignRow& r) { return !r.report || r.run_time_s.has_value(); });
  if (!with_failures)
    for (DesignRow& r : rows) {
      r.run_time_s.reset();
      r.run_cost_usd.reset();
    }
  for (DesignRow& r : rows) {
    if (!r.train_time_lo_s) continue;
    for (const DesignRow& other : rows)
      if (&other != &r && other.train_time_lo_s && *other.train_time_lo_s <= *r.train_time_hi_s &&
          *r.train_time_lo_s <= *other.train_time_hi_s)
        r.within_error_of.push_back(other.design);
  }
  c.pareto_among = any_fits ? "designs that fit in memory" : "all designs (none fits in memory)";
  if (with_failures) c.pareto_among += ", by the run's time and cost with failures, checkpoints and restarts";
  const auto candidate = [&](const DesignRow& r) {
    return r.report && ranked_time_s(r) > 0 && (!any_fits || r.report->memory.fits);
  };
  for (DesignRow& r : rows) {
    if (!candidate(r)) continue;
    r.pareto = true;
    for (const DesignRow& other : rows)
      if (&other != &r && candidate(other) && dominates(other, r)) r.pareto = false;
  }
  c.rows = std::move(rows);
  return c;
}

std::string comparison_to_text(const DesignComparison& c) {
  std::ostringstream o;
  o << "clustersim compare: " << c.workload << ", training run of " << fmt("%.3g", c.tokens) << " tokens\n\n";
  const std::size_t name_width = [&] {
    std::size_t w = 6;
    for (const auto& r : c.rows)
      w = std::max(w, r.design.size());
    return w + 2;
  }();
  o << cell("design", name_width, true) << cell("GPUs", 6) << cell("step", 11) << cell("tokens/s", 11) << cell("MFU", 7)
    << cell("fits", 6) << cell("avg kW", 9) << cell("J/token", 9) << cell("capex", 10) << cell("$/M tok", 9)
    << cell("train time", 12) << cell("likely", 15) << cell("train cost", 12) << cell("goodput", 9)
    << cell("with failures", 15) << cell("run cost", 11) << "  pareto\n";
  for (const DesignRow& r : c.rows) {
    o << cell(r.design, name_width, true);
    if (!r.report) {
      o << "  simulation failed: " << r.error << "\n";
      continue;
    }
    const Report& rep = *r.report;
    const double kw = rep.power ? rep.power->cluster_avg_kw : 0.0;
    const double j_per_token = rep.power ? rep.power->energy_per_token_j : 0.0;
    o << cell(std::to_string(rep.run.gpus), 6) << cell(fmt("%.3f s", rep.step_time_s), 11)
      << cell(fmt("%.0f", rep.tokens_per_s), 11) << cell(fmt("%.1f%%", 100 * rep.mfu), 7)
      << cell(rep.memory.fits ? "yes" : "no", 6) << cell(fmt("%.0f", kw), 9) << cell(fmt("%.3f", j_per_token), 9)
      << cell(rep.cost ? money(rep.cost->capex_usd) : "-", 10)
      << cell(rep.cost ? fmt("%.3f", rep.cost->usd_per_million_tokens) : "-", 9) << cell(duration(r.train_time_s), 12)
      << cell(r.train_time_lo_s ? duration(*r.train_time_lo_s) + "-" + duration(*r.train_time_hi_s) : "-", 15)
      << cell(money(r.train_cost_usd), 12)
      << cell(rep.time_to_train ? fmt("%.1f%%", 100 * rep.time_to_train->goodput) : "-", 9)
      << cell(rep.time_to_train
                  ? fmt("%.1f", rep.time_to_train->days_p10) + "-" + fmt("%.1f d", rep.time_to_train->days_p90)
                  : "-",
              15)
      << cell(r.run_cost_usd ? money(*r.run_cost_usd) : "-", 11) << "  " << (r.pareto ? "*" : "") << "\n";
  }
  std::string overlaps;
  for (std::size_t i = 0; i < c.rows.size(); ++i)
    for (const std::string& other : c.rows[i].within_error_of)
      for (std::size_t k = i + 1; k < c.rows.size(); ++k)
        if (c.rows[k].design == other) overlaps += "\n    " + c.rows[i].design + " and " + other;
  if (!overlaps.empty())
    o << "\n  Within the model's error of each other (their training-time intervals overlap: which is faster is "
         "not known):"
      << overlaps << "\n";
  o << "\n  avg kW: facility power (PUE included); J/token: facility energy per token; capex: GPU servers,\n"
       "  NICs, switches, cables and optics; $/M tok: amortized capex + energy per million tokens;\n"
       "  likely: the training time's interval, from the validation errors of the runs nearest to each design;\n"
       "  train time/cost: "
    << fmt("%.3g", c.tokens)
    << " tokens at the simulated step, nothing failing; goodput, with failures (days, p10-p90) and\n"
       "  run cost: the same run with failures, checkpoints and restarts (docs/time_to_train.md);\n"
       "  * Pareto-optimal (time vs cost) among "
    << c.pareto_among << ".\n";
  return o.str();
}

std::string comparison_to_json(const DesignComparison& c, int indent) {
  Json j;
  j["workload"] = c.workload;
  j["tokens"] = c.tokens;
  j["pareto_among"] = c.pareto_among;
  Json designs = Json::array();
  for (const DesignRow& r : c.rows) {
    if (!r.report) {
      designs.push_back({{"design", r.design}, {"error", r.error}});
      continue;
    }
    const Report& rep = *r.report;
    Json d = {
        {"design", r.design},
        {"pareto", r.pareto},
        {"gpus", rep.run.gpus},
        {"step_time_s", rep.step_time_s},
        {"tokens_per_s", rep.tokens_per_s},
        {"mfu", rep.mfu},
        {"fits", rep.memory.fits},
        {"cluster_avg_kw", rep.power ? rep.power->cluster_avg_kw : 0.0},
        {"energy_per_token_j", rep.power ? rep.power->energy_per_token_j : 0.0},
        {"capex_usd", rep.cost ? rep.cost->capex_usd : 0.0},
        {"usd_per_million_tokens", rep.cost ? rep.cost->usd_per_million_tokens : 0.0},
        {"train_time_s", r.train_time_s},
        {"train_cost_usd", r.train_cost_usd},
        {"train_energy_kwh", r.train_energy_kwh},
        {"step_time_interval_s",
         rep.step_time_interval ? Json{rep.step_time_interval->lo, rep.step_time_interval->hi} : Json(nullptr)},
        {"train_time_interval_s", r.train_time_lo_s ? Json{*r.train_time_lo_s, *r.train_time_hi_s} : Json(nullptr)},
        {"within_error_of", r.within_error_of}};
    const auto& ttt = rep.time_to_train;
    d["goodput"] = ttt ? Json(ttt->goodput) : Json(nullptr);
    d["train_days_p10"] = ttt ? Json(ttt->days_p10) : Json(nullptr);
    d["train_days_p50"] = ttt ? Json(ttt->days_p50) : Json(nullptr);
    d["train_days_p90"] = ttt ? Json(ttt->days_p90) : Json(nullptr);
    d["run_time_s"] = r.run_time_s ? Json(*r.run_time_s) : Json(nullptr);
    d["run_cost_usd"] = r.run_cost_usd ? Json(*r.run_cost_usd) : Json(nullptr);
    d["report"] = Json::parse(rep.to_json(-1));
    designs.push_back(std::move(d));
  }
  j["designs"] = designs;
  return j.dump(indent);
}

}  // namespace clustersim
