// Fitting the kernel model (kernel_model.cpp) to measured kernel times.
//
// The measurements are split into kernel families whose times depend on disjoint parameters, fitted
// one after the other (kFamilies):
//   gemm (16-bit)  gemm_max_efficiency, gemm_k_half, gemm_tile_exponent, gemm_memory_efficiency,
//                  gemm_launch_us (the clock under the power cap at the catalogue's values)
//   gemm clock     where the catalogue models the clock under the power cap (power_capped_clock.cpp):
//                  tensor_boost_W, and power_response_us with enough measurements, on the 16-bit
//                  GEMMs timed as sustained throughput (back-to-back calls: the published TFLOP/s
//                  tables and the project's benchmarks, names "published." and "bench."), the shape
//                  parameters the 16-bit fit's. Kernel times from a model's trace (Vidur) do not enter:
//                  each kernel runs between others, its clock set by what ran before, so thousands of
//                  them would outvote the few sustained loads that show the throttled clock.
//                  clock_power_exponent stays the catalogue's: with the boost power it is not
//                  separable on kernel times.
//   gemm (fp8)     the 8-bit and narrower GEMMs (fp8, and the block-scaled mxfp8 and nvfp4, which the
//                  kernel model times with the same efficiency at their own peaks): gemm_fp8_efficiency
//                  (the shape parameters are the 16-bit fit's: a fp8 GEMM differs by its rate, which
//                  k_half already scales with). Where no 16-bit GEMM was measured (a GPU whose only
//                  published GEMM tables are fp8 / FP4, as GB200), also gemm_launch_us (the per-call
//                  cost, otherwise the 16-bit fit's) and, where the catalogue models the power cap,
//                  tensor_fp8_power_ratio (the clock of sustained low-precision GEMMs under it), in
//                  that order, one more per kMeasurementsPerParameter measurements.
//   attention      attention_efficiency
//   memory-bound   kernel_launch_us, the efficiency of every role measured (memory_efficiency,
//                  activation_efficiency, normalization_efficiency, rope_efficiency,
//                  embedding_efficiency), row_bandwidth_GBps when row-wise kernels were measured,
//                  l2_reuse when some kernels' bytes fit in L2 (and the GPU has an L2 bandwidth).
//                  STREAM measurements (published.stream: one kernel over arrays far larger than the
//                  L2, the one direct measurement of how fast a kernel streams HBM) are not part of
//                  the least-squares fit: after it, they set memory_efficiency in closed form, the
//                  median of their bandwidths over the datasheet's. The operator tables alone drive
//                  it to 1 (the datasheet peak, which no kernel streams at: their element-wise
//                  kernels mostly hit L2), and it is the efficiency of every kernel of the
//                  memory_efficiency role beyond the L2 (the optimizer step's gigabytes).
// A family with fewer than kMeasurementsPerParameter measurements per parameter fits its efficiency
// only. The fit minimizes sum_i ln(t_model_i / t_measured_i)^2 (relative errors: kernel times span
// microseconds to milliseconds) with Levenberg-Marquardt (forward-difference Jacobian, Eigen's LDLT
// for the damped normal equations). Parameters are fitted in an unbounded space: fractions through
// the logistic function (so efficiencies stay in (0, 1)), positive values through exp. The GEMM
// family starts from a small grid of (k_half, tile exponent) as well as the catalogue values (its
// model is piecewise: min over tiles, max of two rooflines) and keeps the best fit. Everything is
// deterministic: fixed starts, fixed iteration limits.
#include "sim/hardware/kernel_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <Eigen/Dense>

#include "sim/core/error.hpp"
#include "sim/core/quantile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_accuracy.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/hardware/power_capped_clock.hpp"

namespace clustersim {
namespace {

constexpr std::size_t kMeasurementsPerParameter = 5;
constexpr int kMaxIterations = 200;
constexpr double kDerivativeStep = 1e-6;
constexpr double kMaxTransformed = 30.0;  // |x| bound in the unbounded space (exp(30) ~ 1e13)

enum class Transform { fraction, positive };

struct FreeParameter {
  std::string key;  // catalogue key
  Transform transform;
};

double to_value(Transform t, double x) {
  x = std::clamp(x, -kMaxTransformed, kMaxTransformed);
  return t == Transform::fraction ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x);
}

double to_unbounded(Transform t, double v) {
  if (t == Transform::fraction) {
    v = std::clamp(v, 1e-4, 1.0 - 1e-4);
    return std::log(v / (1.0 - v));
  }
  return std::log(std::max(v, 1e-12));
}

struct Family {
  std::string name;
  std::vector<const KernelMeasurement*> data;
  std::vector<FreeParameter> parameters;
  std::vector<std::map<std::string, double>> extra_starts;  // besides the current values
};

class LeastSquares {
 public:
  LeastSquares(const GpuSpec& base, const Family& family) : base_(base), family_(family) {}

  GpuSpec spec(const Eigen::VectorXd& x) const {
    GpuSpec g = base_;
    for (std::size_t i = 0; i < family_.parameters.size(); ++i) {
      const FreeParameter& p = family_.parameters[i];
      set_gpu_number(g, p.key, to_value(p.transform, x[Eigen::Index(i)]));
    }
    return g;
  }

  Eigen::VectorXd residuals(const Eigen::VectorXd& x) const {
    const GpuSpec g = spec(x);
    Eigen::VectorXd r(Eigen::Index(family_.data.size()));
    for (std::size_t i = 0; i < family_.data.size(); ++i) {
      const KernelMeasurement& m = *family_.data[i];
      const double t = kernel_time(g, m.op(), m.timing).time_s;
      r[Eigen::Index(i)] = std::isfinite(t) && t > 0.0 ? std::log(t / m.time_s) : 1e3;
    }
    return r;
  }

  // Levenberg-Marquardt from x0; returns the best point found.
  Eigen::VectorXd minimize(Eigen::VectorXd x) const {
    Eigen::VectorXd r = residuals(x);
    double cost = r.squaredNorm();
    double lambda = 1e-3;
    const Eigen::Index n = x.size();
    for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
      Eigen::MatrixXd jacobian(r.size(), n);
      for (Eigen::Index j = 0; j < n; ++j) {
        Eigen::VectorXd xh = x;
        xh[j] += kDerivativeStep;
        jacobian.col(j) = (residuals(xh) - r) / kDerivativeStep;
      }
      const Eigen::MatrixXd a = jacobian.transpose() * jacobian;
      const Eigen::VectorXd g = jacobian.transpose() * r;
      bool improved = false;
      double new_cost = cost;
      while (lambda < 1e12) {
        Eigen::MatrixXd damped = a;
        for (Eigen::Index j = 0; j < n; ++j)
          damped(j, j) += lambda * a(j, j) + 1e-12;
        const Eigen::VectorXd step = damped.ldlt().solve(-g);
        Eigen::VectorXd candidate = (x + step).cwiseMax(-kMaxTransformed).cwiseMin(kMaxTransformed);
        const Eigen::VectorXd rc = residuals(candidate);
        new_cost = rc.squaredNorm();
        if (std::isfinite(new_cost) && new_cost < cost) {
          x = candidate;
          r = rc;
          lambda = std::max(lambda / 3.0, 1e-9);
          improved = true;
          break;
        }
        lambda *= 4.0;
      }
      if (!improved) break;
      const double decrease = cost - new_cost;
      cost = new_cost;
      if (decrease < 1e-12 * std::max(cost, 1e-30)) break;
    }
    return x;
  }

 private:
  const GpuSpec& base_;
  const Family& family_;
};

FitResidual residual_of(const GpuSpec& gpu, const std::vector<const KernelMeasurement*>& data) {
  FitResidual f;
  f.measurements = data.size();
  std::vector<double> abs_errors;
  double squares = 0.0;
  for (const KernelMeasurement* m : data) {
    const double t = kernel_time(gpu, m->op(), m->timing).time_s;
    squares += std::pow(std::log(t / m->time_s), 2);
    abs_errors.push_back(std::abs(t / m->time_s - 1.0));
  }
  f.rms_log_error = data.empty() ? 0.0 : std::sqrt(squares / double(data.size()));
  f.median_abs_error = quantile(abs_errors, 0.5);
  f.p90_abs_error = quantile(abs_errors, 0.9);
  return f;
}

// The domain of a set of measurements of one role.
FittedDomain domain_of(std::string_view role, const std::vector<const KernelMeasurement*>& data) {
  FittedDomain d;
  d.role = std::string(role);
  std::set<Precision> precisions;
  auto widen = [](std::optional<ValueRange>& r, double v) {
    if (!r)
      r = ValueRange{v, v};
    else
      r = ValueRange{std::min(r->min, v), std::max(r->max, v)};
  };
  const bool shaped = role == "gemm" || role == "attention";
  for (const KernelMeasurement* m : data) {
    if (shaped) {
      precisions.insert(m->precision);  // tensor-core paths differ by dtype; memory-bound kernels do not
      widen(d.m, m->m);
      widen(d.n, m->n);
      widen(d.k, m->k);
    }
    widen(d.bytes, m->bytes);
  }
  d.precisions.assign(precisions.begin(), precisions.end());
  return d;
}

std::string files_of(const std::vector<const KernelMeasurement*>& data) {
  std::set<std::string> files;
  for (const KernelMeasurement* m : data)
    files.insert(m->file);
  std::string s;
  for (const auto& f : files)
    s += (s.empty() ? "" : ", ") + f;
  return s;
}

bool is_gemm16(const KernelMeasurement& m) {
  return m.kernel == KernelClass::gemm && !low_precision(m.precision);
}
bool is_sustained_gemm16(const KernelMeasurement& m) {
  const std::string_view name = m.name;
  return is_gemm16(m) && (name.starts_with("published.") || name.starts_with("bench."));
}
bool is_gemm8(const KernelMeasurement& m) {
  return m.kernel == KernelClass::gemm && low_precision(m.precision);
}
bool is_attention(const KernelMeasurement& m) {
  return m.kernel == KernelClass::attention;
}
bool is_memory_bound(const KernelMeasurement& m) {
  return !is_gemm16(m) && !is_gemm8(m) && !is_attention(m);
}
bool is_stream(const KernelMeasurement& m) {
  return m.name == "published.stream";
}

// The HBM streaming efficiency the STREAM measurements among `data` show: the median of their
// bandwidths (bytes / time) over the datasheet's. 0 when there is none.
double stream_efficiency(const GpuSpec& gpu, const std::vector<const KernelMeasurement*>& data) {
  std::vector<double> efficiencies;
  for (const KernelMeasurement* m : data) {
    if (is_stream(*m) && m->time_s > 0.0) efficiencies.push_back(m->bytes / m->time_s / gpu.hbm_bandwidth_Bps);
  }
  return efficiencies.empty() ? 0.0 : std::min(1.0, quantile(efficiencies, 0.5));
}

// The families, in fitting order (later families use earlier results).
struct FamilyDefinition {
  const char* name;
  bool (*member)(const KernelMeasurement&);
};
constexpr FamilyDefinition kFamilies[] = {
    {"gemm", is_gemm16},         {"gemm clock", is_sustained_gemm16}, {"gemm fp8", is_gemm8},
    {"attention", is_attention}, {"memory-bound", is_memory_bound},
};

std::vector<FreeParameter> parameters_of(std::string_view family, const GpuSpec& base,
                                         const std::vector<const KernelMeasurement*>& data, bool gemm16_measured) {
  std::vector<FreeParameter> p;
  if (family == "gemm") {
    p = {{"gemm_max_efficiency", Transform::fraction},
         {"gemm_k_half", Transform::positive},
         {"gemm_tile_exponent", Transform::positive},
         {"gemm_memory_efficiency", Transform::fraction},
         {"gemm_launch_us", Transform::positive}};
  } else if (family == "gemm clock") {
    if (!models_power_cap(base)) return p;
    p = {{"tensor_boost_W", Transform::positive}, {"power_response_us", Transform::positive}};
  } else if (family == "gemm fp8") {
    p = {{"gemm_fp8_efficiency", Transform::fraction}};
    if (!gemm16_measured) p.push_back({"gemm_launch_us", Transform::positive});
    if (!gemm16_measured && models_power_cap(base)) p.push_back({"tensor_fp8_power_ratio", Transform::positive});
    p.resize(std::clamp<std::size_t>(data.size() / kMeasurementsPerParameter, 1, p.size()));
    return p;
  } else if (family == "attention") {
    p = {{"attention_efficiency", Transform::fraction}};
  } else {
    std::vector<std::string> efficiencies;
    bool rows = false, fits_l2 = false;
    for (const KernelMeasurement* m : data) {
      const std::string key(efficiency_parameter(m->op()));
      if (std::find(efficiencies.begin(), efficiencies.end(), key) == efficiencies.end()) efficiencies.push_back(key);
      rows = rows || m->m > 0;
      fits_l2 = fits_l2 || (m->bytes > 0.0 && m->bytes <= base.l2_bytes);
    }
    for (const auto& key : efficiencies)
      p.push_back({key, Transform::fraction});
    const std::size_t efficiency_count = p.size();
    p.push_back({"kernel_launch_us", Transform::positive});
    if (rows) p.push_back({"row_bandwidth_GBps", Transform::positive});
    if (fits_l2 && base.l2_bandwidth_Bps > 0.0) p.push_back({"l2_reuse", Transform::fraction});
    if (data.size() < kMeasurementsPerParameter * p.size()) p.resize(efficiency_count);
    return p;
  }
  if (data.size() < kMeasurementsPerParameter * p.size()) p.resize(1);
  return p;
}

// With STREAM measurements: memory_efficiency set from them (on `gpu`, after the family's fit) and
// its provenance. Nothing without them.
std::optional<FittedParameter> pin_memory_efficiency(GpuSpec& gpu,
                                                     const std::vector<const KernelMeasurement*>& streams) {
  const double efficiency = stream_efficiency(gpu, streams);
  if (efficiency <= 0.0) return std::nullopt;
  set_gpu_number(gpu, "memory_efficiency", efficiency);
  FittedParameter f;
  f.name = "memory_efficiency";
  f.value = efficiency;
  f.source = "fitted to " + std::to_string(streams.size()) + " STREAM kernels of " + files_of(streams) +
             " in closed form: the median of their bandwidths over the datasheet's hbm_bandwidth_GBps, after the "
             "least-squares fit of the other memory-bound parameters";
  f.domain.push_back(domain_of("memory_efficiency", streams));
  f.residual = residual_of(gpu, streams);
  return f;
}

// Where the fit starts a parameter the catalogue leaves unset (0: "not modelled").
double unset_start(const GpuSpec& gpu, std::string_view key) {
  if (key == "row_bandwidth_GBps") return 10.0;  // a thread block streams O(10 GB/s)
  if (key == "l2_reuse") return 0.2;
  if (key == "gemm_fp8_efficiency") return gpu.gemm_max_efficiency;
  return 1.0;
}

}  // namespace

std::vector<std::string> fit_parameter_names() {
  return {"gemm_max_efficiency", "gemm_k_half", "gemm_tile_exponent", "gemm_memory_efficiency", "gemm_launch_us",
          "tensor_boost_W", "power_response_us", "gemm_fp8_efficiency", "tensor_fp8_power_ratio",
          "attention_efficiency", "memory_efficiency",
          "activation_efficiency", "normalization_efficiency", "rope_efficiency", "embedding_efficiency",
          "kernel_launch_us", "row_bandwidth_GBps", "l2_reuse"};
}

CalibrationProfile fit_kernel_model(const GpuSpec& base, std::span<const KernelMeasurement> measurements,
                                    const KernelFitOptions& options) {
  const std::vector<std::string> known = fit_parameter_names();
  for (const std::string& key : options.fixed) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw SpecError("--fixed", "", "expected a parameter of the kernel fit (" + list + "), got \"" + key + "\"");
    }
  }
  const auto is_fixed = [&](const std::string& key) {
    return std::find(options.fixed.begin(), options.fixed.end(), key) != options.fixed.end();
  };
  if (measurements.empty())
    throw SpecError(options.fitted_on.empty() ? std::string("measurements") : options.fitted_on.front(), "",
                    "no kernel measurements of " + base.id + " to fit");
  GpuSpec gpu = base;

  CalibrationProfile profile;
  profile.gpu = base.id;
  profile.name = base.id;
  profile.description = options.description;
  profile.fitted_on = options.fitted_on;
  profile.held_out = options.held_out;

  // the 16-bit GEMM family fits the per-call GEMM cost where it has measurements; else the fp8 family may
  const bool gemm16_measured =
      std::any_of(measurements.begin(), measurements.end(), [](const KernelMeasurement& m) { return is_gemm16(m); });
  for (const auto& definition : kFamilies) {
    Family family;
    family.name = definition.name;
    for (const auto& m : measurements) {
      if (definition.member(m)) family.data.push_back(&m);
    }
    if (family.data.empty()) continue;
    std::vector<const KernelMeasurement*> streams;
    if (family.name == "memory-bound") {
      std::erase_if(family.data, [&](const KernelMeasurement* m) {
        if (is_stream(*m)) streams.push_back(m);
        return is_stream(*m);
      });
    }
    family.parameters = parameters_of(family.name, gpu, family.data, gemm16_measured);
    std::erase_if(family.parameters, [&](const FreeParameter& f) { return is_fixed(f.key); });
    if (is_fixed("memory_efficiency")) streams.clear();
    if (family.parameters.empty()) {
      if (const auto pinned = pin_memory_efficiency(gpu, streams)) profile.parameters.push_back(*pinned);
      continue;
    }
    if (family.name == "gemm" && family.parameters.size() > 1) {
      for (double k_half : {1.0, 16.0, 128.0, 512.0}) {
        for (double exponent : {0.1, 0.5})
          family.extra_starts.push_back({{"gemm_k_half", k_half}, {"gemm_tile_exponent", exponent}});
      }
    }
    if (family.name == "memory-bound" && family.parameters.size() > 1) {
      for (double reuse : {0.1, 0.5}) {
        for (double efficiency : {0.5, 0.9})
          family.extra_starts.push_back({{"l2_reuse", reuse}, {"memory_efficiency", efficiency}});
      }
    }

    const LeastSquares problem(gpu, family);
    auto start = [&](const std::map<std::string, double>& overrides) {
      Eigen::VectorXd x(Eigen::Index(family.parameters.size()));
      for (std::size_t i = 0; i < family.parameters.size(); ++i) {
        const FreeParameter& p = family.parameters[i];
        const auto o = overrides.find(p.key);
        const double current = *gpu_number(gpu, p.key);
        const double value = o != overrides.end() ? o->second : current > 0.0 ? current : unset_start(gpu, p.key);
        x[Eigen::Index(i)] = to_unbounded(p.transform, value);
      }
      return x;
    };
    Eigen::VectorXd best = problem.minimize(start({}));
    double best_cost = problem.residuals(best).squaredNorm();
    for (const auto& overrides : family.extra_starts) {
      const Eigen::VectorXd x = problem.minimize(start(overrides));
      const double cost = problem.residuals(x).squaredNorm();
      if (cost < best_cost) {
        best = x;
        best_cost = cost;
      }
    }
    gpu = problem.spec(best);
    const std::optional<FittedParameter> pinned = pin_memory_efficiency(gpu, streams);
    if (pinned) profile.parameters.push_back(*pinned);

    // Provenance: per role its domain and residual; per parameter the roles it acts on.
    std::map<std::string, std::vector<const KernelMeasurement*>, std::less<>> by_role;
    for (const KernelMeasurement* m : family.data)
      by_role[std::string(kernel_role(m->op()))].push_back(m);
    const FitResidual family_residual = residual_of(gpu, family.data);
    const std::string source = "fitted to " + std::to_string(family.data.size()) + " " + family.name +
                               " kernel times of " + files_of(family.data) + " (Levenberg-Marquardt on ln time, " +
                               std::to_string(family.parameters.size()) + " parameters)";
    for (const FreeParameter& p : family.parameters) {
      if (pinned && p.key == pinned->name) continue;
      FittedParameter f;
      f.name = p.key;
      f.value = *gpu_number(gpu, p.key);
      f.source = source;
      f.residual = family_residual;
      std::vector<const KernelMeasurement*> own;
      for (const auto& [role, data] : by_role) {
        const bool shared = p.key == "kernel_launch_us" || p.key == "row_bandwidth_GBps" || p.key == "l2_reuse" ||
                            family.name != "memory-bound";
        if (!shared && efficiency_parameter(data.front()->op()) != p.key) continue;
        f.domain.push_back(domain_of(role, data));
        own.insert(own.end(), data.begin(), data.end());
      }
      if (family.name == "memory-bound" && own.size() != family.data.size()) f.residual = residual_of(gpu, own);
      profile.parameters.push_back(std::move(f));
    }
  }
  return profile;
}

}  // namespace clustersim
