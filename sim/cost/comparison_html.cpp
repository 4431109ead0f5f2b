#include "sim/cost/comparison_html.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <vector>

#include "sim/core/xml_escape.hpp"
#include "sim/cost/figure_format.hpp"

namespace clustersim {
namespace {

using figure_format::duration;
using figure_format::fmt;
using figure_format::money;

constexpr double kChartWidth = 760.0;
constexpr double kLabelWidth = 210.0;
constexpr double kBarHeight = 22.0;
// Colour-blind-safe palette (Okabe and Ito, 2008).
constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"};

std::vector<const DesignRow*> simulated(const DesignComparison& c) {
  std::vector<const DesignRow*> rows;
  for (const DesignRow& r : c.rows)
    if (r.report) rows.push_back(&r);
  return rows;
}

// A horizontal stacked bar chart: one bar per design, one segment per part, with a legend; `whisker`
// (lo, hi) per design draws an interval over the bar.
struct Segment {
  std::string label;
  std::vector<double> values;  // per design
};

std::string bar_chart(const std::string& title, const std::string& unit, const std::vector<std::string>& designs,
                      const std::vector<Segment>& parts,
                      const std::vector<std::pair<double, double>>* whiskers = nullptr) {
  double max_total = 0.0;
  for (std::size_t d = 0; d < designs.size(); ++d) {
    double total = 0.0;
    for (const Segment& p : parts)
      total += std::max(0.0, p.values[d]);
    if (whiskers) total = std::max(total, (*whiskers)[d].second);
    max_total = std::max(max_total, total);
  }
  if (!(max_total > 0.0)) max_total = 1.0;
  const double plot_width = kChartWidth - kLabelWidth - 90.0;
  const double legend_height = parts.size() > 1 ? 24.0 : 0.0;
  const double height = 30.0 + legend_height + kBarHeight * 1.5 * static_cast<double>(designs.size()) + 10.0;
  std::ostringstream o;
  o << "<figure><figcaption>" << xml_escape(title) << "</figcaption>\n<svg class=\"chart\" role=\"img\" width=\""
    << kChartWidth << "\" height=\"" << height << "\" viewBox=\"0 0 " << kChartWidth << " " << height << "\">\n";
  double y = 20.0;
  if (parts.size() > 1) {
    double x = kLabelWidth;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      o << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"12\" height=\"12\" fill=\"" << kColours[p % 7]
        << "\"/><text x=\"" << x + 16 << "\" y=\"" << y << "\">" << xml_escape(parts[p].label) << "</text>\n";
      x += 24.0 + 7.0 * static_cast<double>(parts[p].label.size());
    }
    y += legend_height;
  }
  for (std::size_t d = 0; d < designs.size(); ++d) {
    o << "<text x=\"" << kLabelWidth - 8 << "\" y=\"" << y + kBarHeight * 0.7 << "\" text-anchor=\"end\">"
      << xml_escape(designs[d]) << "</text>\n";
    double x = kLabelWidth;
    double total = 0.0;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const double v = std::max(0.0, parts[p].values[d]);
      const double w = v / max_total * plot_width;
      o << "<rect class=\"bar\" x=\"" << fmt("%.2f", x) << "\" y=\"" << y << "\" width=\"" << fmt("%.2f", w)
        << "\" height=\"" << kBarHeight << "\" fill=\"" << kColours[p % 7] << "\"><title>" << xml_escape(designs[d])
        << ": " << xml_escape(parts[p].label) << " " << fmt("%.4g", v) << " " << xml_escape(unit)
        << "</title></rect>\n";
      x += w;
      total += v;
    }
    if (whiskers) {
      const auto [lo, hi] = (*whiskers)[d];
      const double x0 = kLabelWidth + lo / max_total * plot_width;
      const double x1 = kLabelWidth + hi / max_total * plot_width;
      const double ym = y + kBarHeight / 2;
      o << "<path class=\"whisker\" d=\"M" << fmt("%.2f", x0) << " " << ym << "H" << fmt("%.2f", x1) << "M"
        << fmt("%.2f", x0) << " " << y + 4 << "V" << y + kBarHeight - 4 << "M" << fmt("%.2f", x1) << " " << y + 4 << "V"
        << y + kBarHeight - 4 << "\" stroke=\"#222\" stroke-width=\"1.5\"/>\n";
    }
    o << "<text x=\"" << fmt("%.2f", std::max(x, kLabelWidth) + 6) << "\" y=\"" << y + kBarHeight * 0.7 << "\">"
      << fmt("%.4g", total) << " " << xml_escape(unit) << "</text>\n";
    y += kBarHeight * 1.5;
  }
  o << "</svg></figure>\n";
  return o.str();
}

// Time to train against cost to train, the Pareto-optimal designs joined.
std::string pareto_chart(const std::vector<const DesignRow*>& rows) {
  const double width = kChartWidth;
  const double height = 360.0;
  const double left = 80.0, right = 30.0, top = 20.0, bottom = 50.0;
  double tmax = 0.0, cmax = 0.0;
  for (const DesignRow* r : rows) {
    tmax = std::max(tmax, std::max(ranked_time_s(*r), r->train_time_hi_s.value_or(0.0)));
    cmax = std::max(cmax, ranked_cost_usd(*r));
  }
  if (!(tmax > 0.0)) tmax = 1.0;
  if (!(cmax > 0.0)) cmax = 1.0;
  tmax *= 1.1;
  cmax *= 1.1;
  auto px = [&](double t_s) { return left + t_s / tmax * (width - left - right); };
  auto py = [&](double usd) { return height - bottom - usd / cmax * (height - top - bottom); };
  std::ostringstream o;
  const bool with_failures = !rows.empty() && rows.front()->run_time_s.has_value();
  o << "<figure><figcaption>Time and cost to train"
    << (with_failures ? " with failures, checkpoints and restarts (the Monte Carlo's mean run)" : "")
    << ": the Pareto front (no other design is at least as fast and as cheap and better in one) is joined; "
       "whiskers: the failure-free training time's interval</figcaption>\n"
    << "<svg class=\"chart\" id=\"pareto\" role=\"img\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\">\n"
    << "<path d=\"M" << left << " " << top << "V" << height - bottom << "H" << width - right
    << "\" stroke=\"#444\" fill=\"none\"/>\n"
    << "<text x=\"" << (left + width - right) / 2 << "\" y=\"" << height - 12
    << "\" text-anchor=\"middle\">time to train (days)</text>\n"
    << "<text x=\"16\" y=\"" << (top + height - bottom) / 2 << "\" transform=\"rotate(-90 16 "
    << (top + height - bottom) / 2 << ")\" text-anchor=\"middle\">cost to train</text>\n";
  for (int i = 0; i <= 4; ++i) {
    const double t = tmax * i / 4, usd = cmax * i / 4;
    o << "<text x=\"" << fmt("%.1f", px(t)) << "\" y=\"" << height - bottom + 16 << "\" text-anchor=\"middle\">"
      << fmt("%.3g", t / figure_format::kSecondsPerDay) << "</text>\n"
      << "<text x=\"" << left - 6 << "\" y=\"" << fmt("%.1f", py(usd) + 4) << "\" text-anchor=\"end\">" << money(usd)
      << "</text>\n";
  }
  std::vector<const DesignRow*> front;
  for (const DesignRow* r : rows)
    if (r->pareto) front.push_back(r);
  std::sort(front.begin(), front.end(),
            [](const DesignRow* a, const DesignRow* b) { return ranked_time_s(*a) < ranked_time_s(*b); });
  if (front.size() > 1) {
    o << "<path class=\"front\" d=\"";
    for (std::size_t i = 0; i < front.size(); ++i)
      o << (i == 0 ? "M" : "L") << fmt("%.2f", px(ranked_time_s(*front[i]))) << " "
        << fmt("%.2f", py(ranked_cost_usd(*front[i])));
    o << "\" stroke=\"#D55E00\" stroke-dasharray=\"5 3\" fill=\"none\"/>\n";
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const DesignRow* r = rows[i];
    const double x = px(ranked_time_s(*r)), y = py(ranked_cost_usd(*r));
    if (r->train_time_lo_s)
      o << "<path class=\"whisker\" d=\"M" << fmt("%.2f", px(*r->train_time_lo_s)) << " " << fmt("%.2f", y) << "H"
        << fmt("%.2f", px(*r->train_time_hi_s)) << "\" stroke=\"#888\"/>\n";
    o << "<circle class=\"point" << (r->pareto ? " pareto" : "") << "\" cx=\"" << fmt("%.2f", x) << "\" cy=\""
      << fmt("%.2f", y) << "\" r=\"6\" fill=\"" << kColours[i % 7] << "\"><title>" << xml_escape(r->design) << ": "
      << duration(ranked_time_s(*r)) << ", " << money(ranked_cost_usd(*r)) << "</title></circle>\n"
      << "<text x=\"" << fmt("%.2f", x + 9) << "\" y=\"" << fmt("%.2f", y - 8) << "\">" << xml_escape(r->design)
      << (r->pareto ? " *" : "") << "</text>\n";
  }
  o << "</svg></figure>\n";
  return o.str();
}

// Each design's run with failures: where its days go (useful training, checkpoints, recomputation
// after failures, restarts; the Monte Carlo's means), its p10 - p90 days as whiskers.
std::string time_to_train_section(const std::vector<const DesignRow*>& rows, const std::vector<std::string>& names) {
  std::vector<Segment> parts = {
      {"useful training", {}}, {"checkpoints", {}}, {"lost (recomputed)", {}}, {"restarts", {}}};
  std::vector<std::pair<double, double>> whiskers;
  for (const DesignRow* r : rows) {
    const auto& t = r->report->time_to_train;
    if (!t) return "";
    const double day = figure_format::kSecondsPerDay;
    parts[0].values.push_back(t->useful_s / day);
    parts[1].values.push_back(t->checkpoint_s / day);
    parts[2].values.push_back(t->lost_s / day);
    parts[3].values.push_back(t->restart_total_s / day);
    whiskers.emplace_back(t->days_p10, t->days_p90);
  }
  std::ostringstream o;
  o << bar_chart(
      "The run with failures, checkpoints and restarts: where the days go (whiskers: p10 - p90 of the "
      "Monte Carlo's runs)",
      "days", names, parts, &whiskers);
  o << "<table id=\"time-to-train\">\n<thead><tr><th>design</th><th>goodput</th><th>interruptions</th>"
       "<th>top causes</th><th>checkpoint</th><th>interval</th><th>restart</th></tr></thead>\n<tbody>\n";
  for (const DesignRow* r : rows) {
    const TimeToTrainStats& t = *r->report->time_to_train;
    std::string causes;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, t.causes.size()); ++i)
      causes += (i ? ", " : "") + t.causes[i].cause + fmt(" %.2g", t.causes[i].expected);
    o << "<tr><td>" << xml_escape(r->design) << "</td><td>" << fmt("%.1f %%", 100 * t.goodput) << "</td><td>"
      << fmt("%.1f", t.interruptions_mean) << "</td><td>" << xml_escape(causes) << "</td><td>"
      << fmt("%.3g TB", t.checkpoint_bytes / 1e12) << ", stall " << fmt("%.1f s", t.checkpoint_stall_s) << "</td><td>"
      << duration(t.checkpoint_interval_s) << " (" << xml_escape(t.checkpoint_interval_basis) << ")</td><td>"
      << fmt("%.0f s", t.restart_s) << "</td></tr>\n";
  }
  o << "</tbody></table>\n<p class=\"note\">Failure rates per component, restart times and storage: "
       "docs/time_to_train.md (the rates are fitted on Llama 3's interruption table; restart and storage figures "
       "are assumptions unless the cluster spec sets them).</p>\n";
  return o.str();
}

std::string designs_table(const DesignComparison& c) {
  std::ostringstream o;
  o << "<table id=\"designs\">\n<thead><tr><th>design</th><th>GPU</th><th>GPUs</th><th>step time</th>"
       "<th>likely step time</th><th>tokens/s</th><th>MFU</th><th>fits in memory</th><th>facility kW</th>"
       "<th>J/token</th><th>capex</th><th>$/M tokens</th><th>time to train</th><th>likely</th>"
       "<th>cost to train</th><th>energy to train</th><th>goodput</th><th>with failures (p10 - p90)</th>"
       "<th>run cost</th><th>Pareto</th></tr></thead>\n<tbody>\n";
  for (const DesignRow& r : c.rows) {
    o << "<tr><td>" << xml_escape(r.design) << "</td>";
    if (!r.report) {
      o << "<td colspan=\"19\" class=\"error\">simulation failed: " << xml_escape(r.error) << "</td></tr>\n";
      continue;
    }
    const Report& rep = *r.report;
    const auto& iv = rep.step_time_interval;
    o << "<td>" << xml_escape(rep.run.gpu) << "</td><td>" << rep.run.gpus << "</td><td>"
      << fmt("%.3f s", rep.step_time_s) << "</td><td>"
      << (iv ? fmt("%.3f", iv->lo) + " - " + fmt("%.3f s", iv->hi) : "-") << "</td><td>"
      << fmt("%.0f", rep.tokens_per_s) << "</td><td>" << fmt("%.1f %%", 100 * rep.mfu) << "</td><td>"
      << (rep.memory.fits ? "yes" : "<b>no</b>") << "</td><td>"
      << (rep.power ? fmt("%.0f", rep.power->cluster_avg_kw) : "-") << "</td><td>"
      << (rep.power ? fmt("%.3f", rep.power->energy_per_token_j) : "-") << "</td><td>"
      << (rep.cost ? money(rep.cost->capex_usd) : "-") << "</td><td>"
      << (rep.cost ? fmt("%.3f", rep.cost->usd_per_million_tokens) : "-") << "</td><td>" << duration(r.train_time_s)
      << "</td><td>" << (r.train_time_lo_s ? duration(*r.train_time_lo_s) + " - " + duration(*r.train_time_hi_s) : "-")
      << "</td><td>" << money(r.train_cost_usd) << "</td><td>" << fmt("%.1f MWh", r.train_energy_kwh / 1e3)
      << "</td><td>" << (rep.time_to_train ? fmt("%.1f %%", 100 * rep.time_to_train->goodput) : "-") << "</td><td>"
      << (rep.time_to_train
              ? fmt("%.1f", rep.time_to_train->days_p10) + " - " + fmt("%.1f d", rep.time_to_train->days_p90)
              : "-")
      << "</td><td>" << (r.run_cost_usd ? money(*r.run_cost_usd) : "-") << "</td><td>" << (r.pareto ? "&#9733;" : "")
      << "</td></tr>\n";
  }
  o << "</tbody></table>\n";
  std::string overlaps;
  for (std::size_t i = 0; i < c.rows.size(); ++i)
    for (const std::string& other : c.rows[i].within_error_of)
      for (std::size_t k = i + 1; k < c.rows.size(); ++k)
        if (c.rows[k].design == other)
          overlaps += "<li>" + xml_escape(c.rows[i].design) + " and " + xml_escape(other) + "</li>";
  if (!overlaps.empty())
    o << "<p>Within the model's error of each other (their training-time intervals overlap, so which is faster "
         "is not known):</p><ul>"
      << overlaps << "</ul>\n";
  o << "<p class=\"note\">&#9733; Pareto-optimal (time vs cost to train) among " << xml_escape(c.pareto_among)
    << ". Likely: the interval where the measured time is expected, from the validation errors of the runs "
       "nearest to each design. Facility kW and J/token include the PUE; capex counts GPU servers, NICs, "
       "switches, cables and optics; $/M tokens is amortized capex, energy and operations per million tokens.</p>\n";
  return o.str();
}

std::string links_section(const std::vector<const DesignRow*>& rows) {
  std::ostringstream o;
  o << "<table id=\"links\">\n<thead><tr><th>design</th><th>link</th><th>kind</th><th>utilization</th>"
       "<th>busy</th><th>bytes per step</th><th>most bytes from</th></tr></thead>\n<tbody>\n";
  for (const DesignRow* r : rows) {
    const Report& rep = *r->report;
    const std::size_t n = std::min<std::size_t>(3, rep.links.size());
    if (n == 0)
      o << "<tr><td>" << xml_escape(r->design) << "</td><td colspan=\"6\">no link carried traffic</td></tr>\n";
    for (std::size_t i = 0; i < n; ++i) {
      const LinkStats& l = rep.links[i];
      o << "<tr><td>" << (i == 0 ? xml_escape(r->design) : "") << "</td><td>" << xml_escape(l.id) << "</td><td>"
        << xml_escape(l.kind) << "</td><td>" << fmt("%.1f %%", 100 * l.utilization) << "</td><td>"
        << fmt("%.4f s", l.busy_s) << "</td><td>" << fmt("%.3g", l.bytes) << "</td><td>"
        << (l.users.empty() ? "" : xml_escape(l.users.front().group)) << "</td></tr>\n";
    }
  }
  o << "</tbody></table>\n";
  return o.str();
}

std::string assumptions_section(const std::vector<const DesignRow*>& rows) {
  std::ostringstream o;
  for (const DesignRow* r : rows) {
    const Report& rep = *r->report;
    o << "<h3>" << xml_escape(r->design) << "</h3>\n<ul>\n"
      << "<li>GPU model: " << xml_escape(rep.provenance.calibration) << "</li>\n"
      << "<li>Software stack: " << xml_escape(rep.provenance.stack) << "</li>\n"
      << "<li>Network: " << xml_escape(rep.provenance.network) << " (" << xml_escape(rep.provenance.fidelity)
      << " fidelity)</li>\n";
    if (rep.step_time_interval) {
      std::string datasets;
      for (const IntervalNeighbours& n : rep.step_time_interval->datasets)
        datasets += (datasets.empty() ? "" : ", ") + n.dataset + " (" + std::to_string(n.rows) + ")";
      o << "<li>Error bar: " << xml_escape(rep.step_time_interval->rule)
        << "; nearest validation runs: " << xml_escape(datasets) << "</li>\n";
    } else {
      o << "<li>Error bar: none (no validation residuals apply)</li>\n";
    }
    for (const std::string& e : rep.provenance.extrapolated)
      o << "<li class=\"warn\">Extrapolated: " << xml_escape(e) << "</li>\n";
    for (const DerivedDefault& d : rep.provenance.derived_defaults)
      o << "<li>Derived default: " << xml_escape(d.key) << " = " << xml_escape(d.value) << " (" << xml_escape(d.why)
        << ")</li>\n";
    if (rep.cost) {
      std::set<std::string> sources;
      for (const CostLine& l : rep.cost->bill_of_materials)
        sources.insert(l.item + ": " + l.source);
      for (const std::string& s : sources)
        o << "<li>Price, " << xml_escape(s) << "</li>\n";
      o << "<li>Electricity " << fmt("%.3f", rep.cost->electricity_usd_per_kwh) << " $/kWh, amortized over "
        << fmt("%.3g", rep.cost->amortization_years) << " years</li>\n";
    }
    if (rep.power)
      for (const DeviceEnergy& d : rep.power->by_device)
        if (!d.basis.empty()) o << "<li>Power, " << xml_escape(d.device) << ": " << xml_escape(d.basis) << "</li>\n";
    o << "</ul>\n";
  }
  return o.str();
}

constexpr const char* kStyle =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1200px;color:#222}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
    "thead th{background:#f2f2f2}.error{color:#b00;text-align:left}.note{font-size:0.85em;color:#555}"
    ".warn{color:#a60}figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:0.3em}"
    "svg.chart text{font-size:12px}";

}  // namespace

std::string comparison_to_html(const DesignComparison& c) {
  const std::vector<const DesignRow*> rows = simulated(c);
  std::vector<std::string> names;
  for (const DesignRow* r : rows)
    names.push_back(r->design);
  auto per_design = [&](auto value) {
    std::vector<double> v;
    for (const DesignRow* r : rows)
      v.push_back(value(*r->report));
    return v;
  };
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>clustersim: "
    << xml_escape(c.workload) << " on " << c.rows.size() << " designs</title>\n<style>" << kStyle
    << "</style>\n</head>\n<body>\n"
    << "<h1>" << xml_escape(c.workload) << ": " << c.rows.size() << " cluster designs, a training run of "
    << fmt("%.3g", c.tokens) << " tokens</h1>\n"
    << "<p class=\"note\">Simulated by clustersim: every figure below comes from the simulated step of each design "
       "(its kernel, network, memory, power and cost models); the assumptions and their sources are at the end. "
       "A prediction is as good as the models' validation: see each design's error bar.</p>\n"
    << "<h2>Designs side by side</h2>\n"
    << designs_table(c);
  if (!rows.empty()) {
    std::vector<std::pair<double, double>> whiskers;
    for (const DesignRow* r : rows) {
      const auto& iv = r->report->step_time_interval;
      whiskers.emplace_back(iv ? iv->lo : r->report->step_time_s, iv ? iv->hi : r->report->step_time_s);
    }
    o << "<h2>Step time</h2>\n"
      << bar_chart("Step time and where it goes (whiskers: the likely interval)", "s", names,
                   {{"compute", per_design([](const Report& r) { return r.breakdown.compute_s; })},
                    {"exposed communication",
                     per_design([](const Report& r) { return r.breakdown.exposed_communication_s; })},
                    {"pipeline bubble", per_design([](const Report& r) { return r.breakdown.pipeline_bubble_s; })},
                    {"host wait", per_design([](const Report& r) { return r.breakdown.host_wait_s; })}},
                   &whiskers)
      << "<h2>Time and cost to train</h2>\n"
      << pareto_chart(rows) << time_to_train_section(rows, names) << "<h2>Cost per hour of training</h2>\n"
      << bar_chart("Cost per hour by part", "$/h", names,
                   {{"amortized capex",
                     per_design([](const Report& r) { return r.cost ? r.cost->amortized_usd_per_hour : 0.0; })},
                    {"energy", per_design([](const Report& r) { return r.cost ? r.cost->energy_usd_per_hour : 0.0; })},
                    {"operations",
                     per_design([](const Report& r) { return r.cost ? r.cost->operations_usd_per_hour : 0.0; })}})
      << "<h2>Power</h2>\n"
      << bar_chart("Average facility power during the step (PUE included)", "kW", names,
                   {{"facility", per_design([](const Report& r) { return r.power ? r.power->cluster_avg_kw : 0.0; })}})
      << "<h2>Bottleneck links</h2>\n<p class=\"note\">The three busiest links of each design over one step.</p>\n"
      << links_section(rows) << "<h2>Assumptions and sources</h2>\n"
      << assumptions_section(rows);
  }
  o << "</body>\n</html>\n";
  return o.str();
}

}  // namespace clustersim
