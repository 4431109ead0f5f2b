#include "sim/api/network_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "sim/collective_sweep.hpp"
#include "sim/core/error.hpp"
#include "sim/core/spec_document.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

ClusterSpec cluster_of(const CollectiveTable& t) {
  Overrides o;
  for (const auto& kv : t.overrides) {
    const auto eq = kv.find('=');
    o.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return load_cluster_spec(t.cluster, o);
}

// Simulated times of the rows of `t` with at least `min_bytes`, and the measured ones.
struct Comparison {
  std::vector<double> measured, simulated;
  std::string algorithm;
};

Comparison compare(const CollectiveTable& t, const NetworkProfile& profile, const std::string& fidelity,
                   double min_bytes, std::size_t max_rows) {
  const ClusterSpec spec = cluster_of(t);
  CollectiveSweepOptions o;
  o.kind = t.kind;
  o.ranks = parse_rank_list(t.ranks, spec.gpu_count());
  o.fidelity = fidelity;
  o.algorithm = t.algorithm;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < t.bytes.size(); ++i)
    if (t.bytes[i] >= min_bytes) rows.push_back(i);
  if (rows.size() > max_rows) {  // evenly spaced subsample: fitting loops stay fast
    std::vector<std::size_t> kept;
    for (std::size_t k = 0; k < max_rows; ++k)
      kept.push_back(rows[k * rows.size() / max_rows]);
    rows = kept;
  }
  Comparison c;
  for (std::size_t i : rows) {
    o.sizes.push_back(t.bytes[i]);
    c.measured.push_back(t.time_s[i]);
  }
  if (rows.empty()) return c;
  std::vector<CollectiveSweepRow> sim;
  if (fidelity == "analytical") {
    sim = run_collective_sweep_in_this_process(spec, o, profile);
  } else {
    // Child processes load the profile by name or file: pass it as a temporary file.
    const std::string path = "/tmp/clustersim_profile_" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << network_profile_to_json(profile);
    o.network_profile = path;
    sim = simulate_collective_sweep(spec, o);
    std::remove(path.c_str());
  }
  for (const auto& r : sim)
    c.simulated.push_back(r.time_s);
  c.algorithm = sim.empty() ? t.algorithm : sim.front().algorithm;
  return c;
}

double squared_log_error(const Comparison& c) {
  double e = 0;
  for (std::size_t i = 0; i < c.measured.size(); ++i) {
    const double d = std::log(c.simulated[i] / c.measured[i]);
    e += d * d;
  }
  return e;
}

// Nelder-Mead simplex minimization, deterministic (fixed initial simplex, fixed iteration cap).
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                                double step, int max_iterations) {
  const std::size_t n = x0.size();
  std::vector<std::vector<double>> pts{x0};
  for (std::size_t i = 0; i < n; ++i) {
    auto p = x0;
    p[i] += step;
    pts.push_back(p);
  }
  std::vector<double> vals;
  for (const auto& p : pts)
    vals.push_back(f(p));
  for (int it = 0; it < max_iterations; ++it) {
    std::vector<std::size_t> order(pts.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return vals[a] < vals[b]; });
    std::vector<std::vector<double>> p2;
    std::vector<double> v2;
    for (std::size_t i : order) {
      p2.push_back(pts[i]);
      v2.push_back(vals[i]);
    }
    pts = p2;
    vals = v2;
    if (std::fabs(vals.back() - vals.front()) < 1e-12 * (1 + std::fabs(vals.front()))) break;
    std::vector<double> centroid(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t d = 0; d < n; ++d)
        centroid[d] += pts[i][d] / static_cast<double>(n);
    auto along = [&](double t) {
      std::vector<double> p(n);
      for (std::size_t d = 0; d < n; ++d)
        p[d] = centroid[d] + t * (pts[n][d] - centroid[d]);
      return p;
    };
    const auto reflected = along(-1.0);
    const double fr = f(reflected);
    if (fr < vals[0]) {
      const auto expanded = along(-2.0);
      const double fe = f(expanded);
      if (fe < fr) {
        pts[n] = expanded;
        vals[n] = fe;
      } else {
        pts[n] = reflected;
        vals[n] = fr;
      }
    } else if (fr < vals[n - 1]) {
      pts[n] = reflected;
      vals[n] = fr;
    } else {
      const auto contracted = along(0.5);
      const double fc = f(contracted);
      if (fc < vals[n]) {
        pts[n] = contracted;
        vals[n] = fc;
      } else {
        for (std::size_t i = 1; i <= n; ++i) {
          for (std::size_t d = 0; d < n; ++d)
            pts[i][d] = pts[0][d] + 0.5 * (pts[i][d] - pts[0][d]);
          vals[i] = f(pts[i]);
        }
      }
    }
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < vals.size(); ++i)
    if (vals[i] < vals[best]) best = i;
  return pts[best];
}

// Parameters are optimized in unconstrained coordinates: efficiencies through a logistic map into
// (0, 1), latencies through exp() in microseconds.
double efficiency_of(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double logit(double e) {
  return std::log(e / (1.0 - e));
}
double latency_of(double x) {
  return std::exp(x) * 1e-6;
}

std::string ids(const std::vector<const CollectiveTable*>& tables) {
  std::string out;
  for (const auto* t : tables)
    out += (out.empty() ? "" : ", ") + t->id;
  return out;
}

double rms_relative(const std::vector<const CollectiveTable*>& tables, const NetworkProfile& p, double min_bytes) {
  double e = 0;
  std::size_t n = 0;
  for (const auto* t : tables) {
    const Comparison c = compare(*t, p, "analytical", min_bytes, 64);
    for (std::size_t i = 0; i < c.measured.size(); ++i) {
      const double r = c.simulated[i] / c.measured[i] - 1;
      e += r * r;
      ++n;
    }
  }
  return n ? std::sqrt(e / static_cast<double>(n)) : 0.0;
}

}  // namespace

std::vector<TableError> evaluate_network_profile(const std::vector<CollectiveTable>& tables,
                                                 const NetworkProfile& profile, const std::string& fidelity,
                                                 double min_bytes) {
  std::vector<TableError> out;
  for (const auto& t : tables) {
    const Comparison c = compare(t, profile, fidelity, min_bytes, 1u << 20);
    std::vector<double> errs;
    // Bus bandwidth error: busbw_sim / busbw_measured - 1 = t_measured / t_sim - 1.
    for (std::size_t i = 0; i < c.measured.size(); ++i)
      errs.push_back(std::fabs(c.measured[i] / c.simulated[i] - 1));
    std::sort(errs.begin(), errs.end());
    TableError e;
    e.id = t.id;
    e.system = t.system.empty() ? t.id : t.system;
    e.role = t.role;
    e.algorithm = c.algorithm;
    e.rows = static_cast<int>(errs.size());
    if (!errs.empty()) {
      e.median_abs_error = errs[errs.size() / 2];
      e.p90_abs_error = errs[std::min(errs.size() - 1, errs.size() * 9 / 10)];
      e.max_abs_error = errs.back();
    }
    e.abs_errors = std::move(errs);
    out.push_back(e);
  }
  return out;
}

TableErrorSummary summarize_errors(const std::vector<TableError>& errors, const std::string& role) {
  TableErrorSummary s;
  std::vector<double> medians, pooled;
  for (const auto& e : errors) {
    if ((!role.empty() && e.role != role) || e.rows == 0) continue;
    ++s.tables;
    medians.push_back(e.median_abs_error);
    pooled.insert(pooled.end(), e.abs_errors.begin(), e.abs_errors.end());
  }
  if (medians.empty()) return s;
  std::sort(medians.begin(), medians.end());
  std::sort(pooled.begin(), pooled.end());
  s.rows = static_cast<int>(pooled.size());
  s.median_of_table_medians = medians[medians.size() / 2];
  s.pooled_median_abs_error = pooled[pooled.size() / 2];
  s.pooled_p90_abs_error = pooled[std::min(pooled.size() - 1, pooled.size() * 9 / 10)];
  return s;
}

NetworkCalibration calibrate_network(const std::vector<CollectiveTable>& all_tables, const NetworkProfile& base,
                                     double min_bytes) {
  NetworkProfile p = base;
  p.description += (p.description.empty() ? "" : "; ") +
                   std::string("fitted by clustersim calibrate-network to nccl-tests tables (see each value's source)");
  std::vector<CollectiveTable> tables;
  for (const auto& t : all_tables)
    if (t.profile == base.name) tables.push_back(t);
  std::vector<const CollectiveTable*> nvlink, nvls, scale_out;
  for (const auto& t : tables) {
    if (t.role != "fit") continue;
    const ClusterSpec spec = cluster_of(t);
    if (t.algorithm == "nvls")
      nvls.push_back(&t);
    else if (spec.nodes == 1 || spec.fabric.type == "single_node")
      nvlink.push_back(&t);
    else
      scale_out.push_back(&t);
  }
  const std::string domain = ">= " + std::to_string(static_cast<long long>(min_bytes)) + " B";
  auto objective = [&](const std::vector<const CollectiveTable*>& set, const NetworkProfile& q) {
    double e = 0;
    for (const auto* t : set)
      e += squared_log_error(compare(*t, q, "analytical", min_bytes, 64));
    return e;
  };
  TechnologyProfile& nv = p.of(LinkTechnology::nvlink);
  if (!nvlink.empty()) {
    // NVLink efficiency, per-step latency and per-call latency from single-node rings.
    // With NCCL's protocols, the scale of NCCL's intra-node latencies too (exp(x): positive).
    auto apply = [&](NetworkProfile& q, const std::vector<double>& x) {
      q.of(LinkTechnology::nvlink).bandwidth_efficiency.value = efficiency_of(x[0]);
      q.of(LinkTechnology::nvlink).step_latency_s.value = latency_of(x[1]);
      q.collective_latency_s.value = latency_of(x[2]);
      if (x.size() > 3) q.nccl_intra_latency_scale.value = std::exp(x[3]);
    };
    std::vector<double> x0{logit(0.8), std::log(1.0), std::log(10.0)};
    if (p.nccl_protocols) x0.push_back(std::log(0.5));
    const auto x = nelder_mead(
        [&](const std::vector<double>& v) {
          NetworkProfile q = p;
          apply(q, v);
          return objective(nvlink, q);
        },
        x0, 0.5, 400);
    apply(p, x);
    const std::string src = "fit to " + ids(nvlink);
    const double res = rms_relative(nvlink, p, min_bytes);
    nv.bandwidth_efficiency = {nv.bandwidth_efficiency.value, src, "NVLink rings, " + domain, res};
    nv.step_latency_s = {nv.step_latency_s.value, src, "NVLink rings, " + domain, res};
    p.collective_latency_s = {p.collective_latency_s.value, src, "every collective call", res};
    if (p.nccl_protocols)
      p.nccl_intra_latency_scale = {p.nccl_intra_latency_scale.value, src,
                                    "NCCL's base and NVLink/PCIe step latencies (src/graph/tuning.cc 2.27.7)", res};
  }
  if (!nvls.empty()) {
    // NVLS efficiency and per-phase latency from in-switch all-reduces (NVLink values held).
    auto apply = [](NetworkProfile& q, const std::vector<double>& v) {
      q.nvls_efficiency.value = efficiency_of(v[0]);
      q.nvls_latency_s.value = latency_of(v[1]);
    };
    const auto x = nelder_mead(
        [&](const std::vector<double>& v) {
          NetworkProfile q = p;
          apply(q, v);
          return objective(nvls, q);
        },
        {logit(0.6), std::log(10.0)}, 0.5, 300);
    apply(p, x);
    const std::string src = "fit to " + ids(nvls);
    const double res = rms_relative(nvls, p, min_bytes);
    p.nvls_efficiency = {p.nvls_efficiency.value, src, "NVLS all-reduce, " + domain, res};
    p.nvls_latency_s = {p.nvls_latency_s.value, src, "NVLS all-reduce, " + domain, res};
  }
  std::map<LinkTechnology, std::vector<const CollectiveTable*>> by_tech;
  for (const auto* t : scale_out)
    by_tech[cluster_of(*t).fabric.technology == "ethernet" ? LinkTechnology::ethernet : LinkTechnology::infiniband]
        .push_back(t);
  for (auto& [tech, set] : by_tech) {
    // Efficiency and per-step latency of the scale-out technology (NVLink values held).
    auto apply = [tech = tech](NetworkProfile& q, const std::vector<double>& v) {
      q.of(tech).bandwidth_efficiency.value = efficiency_of(v[0]);
      q.of(tech).step_latency_s.value = latency_of(v[1]);
    };
    const auto x = nelder_mead(
        [&, &set = set](const std::vector<double>& v) {
          NetworkProfile q = p;
          apply(q, v);
          return objective(set, q);
        },
        {logit(0.8), std::log(5.0)}, 0.5, 300);
    apply(p, x);
    const double res = rms_relative(set, p, min_bytes);
    auto& tp = p.of(tech);
    tp.bandwidth_efficiency = {tp.bandwidth_efficiency.value, "fit to " + ids(set), "multi-node collectives, " + domain,
                               res};
    tp.step_latency_s = {tp.step_latency_s.value, "fit to " + ids(set), "multi-node collectives, " + domain, res};
  }
  // Technologies without a table keep a documented assumption.
  auto& ib = p.of(LinkTechnology::infiniband).bandwidth_efficiency;
  if (ib.source == "ideal")
    ib = {380.0 / 400.0,
          "assumed: NVIDIA's DGX H100 figure of 380 GB/s all-reduce bus bandwidth over 8 x 400 Gb/s "
          "(calibration/data/published/collectives.json coll-0025); no table to fit",
          "multi-node collectives", 0.0};
  for (LinkTechnology t : {LinkTechnology::pcie, LinkTechnology::ethernet}) {
    auto& e = p.of(t).bandwidth_efficiency;
    if (e.source == "ideal") e = {1.0, "assumed: line rate; no table to fit", "", 0.0};
  }
  NetworkCalibration c;
  c.profile = p;
  c.errors = evaluate_network_profile(tables, p, "analytical", min_bytes);
  return c;
}

}  // namespace clustersim
