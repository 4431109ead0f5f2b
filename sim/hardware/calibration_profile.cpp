// Calibration profiles: reading, writing, applying, and checking ops against the fitted domain.
//
// File format (calibration/profiles/<gpu-id>.json, written by `clustersim calibrate`):
//   {
//     "gpu": "a100-sxm4-80gb",                        catalogue id
//     "description": "...",
//     "fitted_on": ["vidur/compute/a100/Llama-2-7b-hf/mlp.csv", ...],   measurement files of the fit
//     "held_out": ["vidur/compute/a100/Llama-2-70b-hf/mlp.csv", ...],   kept out, for --report
//     "parameters": {
//       "<catalogue key>": {                          e.g. "gemm_max_efficiency", "kernel_launch_us"
//         "value": 0.81,                              in the key's unit (gpu_catalogue.cpp)
//         "source": "fitted to 4,176 gemm kernel times of ...",
//         "domain": [{"role": "gemm", "dtypes": ["fp16"], "m": [1, 4096], "n": [128, 22016],
//                     "k": [512, 4096], "bytes": [1.6e7, 2.3e8]}],
//         "residual": {"measurements": 4176, "rms_log_error": 0.1, "median_abs_error": 0.07,
//                      "p90_abs_error": 0.18}
//       }, ...
//     }
//   }
// File paths in fitted_on / held_out are relative to the measurement folder (calibration/data) and
// may end in "#<selector>" (kernel_measurement.hpp).
#include "sim/hardware/calibration_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/spec_document.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> calibration_profile_resources();  // generated from calibration/profiles/*.json
}  // namespace resources_detail

namespace {

// The dtypes a fitted domain names: every GEMM dtype a measurement can have (the block-scaled mxfp8 and
// nvfp4 GEMMs are fitted with fp8 ones: kernel_fit.cpp).
constexpr Precision kPrecisions[] = {Precision::fp32, Precision::tf32,  Precision::fp16, Precision::bf16,
                                     Precision::fp8,  Precision::mxfp8, Precision::nvfp4};

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// A [min, max] pair at `key`, when present.
std::optional<ValueRange> read_range(JsonReader& r, std::string_view key) {
  if (!r.has(key)) return std::nullopt;
  const nlohmann::json& v = r.raw(key);
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() ||
      v[0].get<double>() > v[1].get<double>())
    r.fail(key, "expected [min, max] with min <= max, got " + describe_json(v));
  return ValueRange{v[0].get<double>(), v[1].get<double>()};
}

FittedDomain read_domain(JsonReader r) {
  FittedDomain d;
  d.role = r.string("role");
  if (r.has("dtypes")) {
    const nlohmann::json& list = r.array("dtypes");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto it = std::find_if(std::begin(kPrecisions), std::end(kPrecisions), [&](Precision p) {
        return list[i].is_string() && list[i].get<std::string>() == to_string(p);
      });
      if (it == std::end(kPrecisions))
        throw SpecError(r.file(), r.path_of("dtypes") + "/" + std::to_string(i),
                        "expected one of fp32, tf32, fp16, bf16, fp8, mxfp8, nvfp4, got " + describe_json(list[i]));
      d.precisions.push_back(*it);
    }
  }
  d.m = read_range(r, "m");
  d.n = read_range(r, "n");
  d.k = read_range(r, "k");
  d.bytes = read_range(r, "bytes");
  r.finish();
  return d;
}

FitResidual read_residual(JsonReader r) {
  FitResidual f;
  f.measurements = static_cast<std::size_t>(r.integer("measurements", 0));
  f.rms_log_error = r.number("rms_log_error", NumberRange::non_negative());
  f.median_abs_error = r.number("median_abs_error", NumberRange::non_negative());
  f.p90_abs_error = r.number("p90_abs_error", NumberRange::non_negative());
  r.finish();
  return f;
}

std::vector<std::string> read_strings(JsonReader& r, std::string_view key) {
  std::vector<std::string> out;
  if (!r.has(key)) return out;
  const nlohmann::json& list = r.array(key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      throw SpecError(r.file(), r.path_of(key) + "/" + std::to_string(i),
                      "expected a string, got " + describe_json(list[i]));
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

nlohmann::ordered_json range_json(const ValueRange& r) {
  return nlohmann::ordered_json::array({r.min, r.max});
}

nlohmann::ordered_json domain_json(const FittedDomain& d) {
  nlohmann::ordered_json j{{"role", d.role}};
  if (!d.precisions.empty()) {
    j["dtypes"] = nlohmann::ordered_json::array();
    for (Precision p : d.precisions)
      j["dtypes"].push_back(to_string(p));
  }
  if (d.m) j["m"] = range_json(*d.m);
  if (d.n) j["n"] = range_json(*d.n);
  if (d.k) j["k"] = range_json(*d.k);
  if (d.bytes) j["bytes"] = range_json(*d.bytes);
  return j;
}

std::string range_text(const char* name, const std::optional<ValueRange>& r) {
  if (!r) return "";
  return std::string(" ") + name + " " + format_number(r->min) + ".." + format_number(r->max);
}

std::string describe_op(const ComputeOp& op) {
  std::string s = std::string(op.name.empty() ? kernel_role(op) : op.name) + " (" + to_string(op.precision);
  if (op.m > 0) s += " m=" + std::to_string(op.m);
  if (op.n > 0) s += " n=" + std::to_string(op.n);
  if (op.k > 0) s += " k=" + std::to_string(op.k);
  if (op.kernel != KernelClass::gemm && op.kernel != KernelClass::attention) s += " bytes=" + format_number(op.bytes);
  return s + ")";
}

}  // namespace

// fp16 and bf16 run on the same tensor-core path at the same rate (every catalogue GPU with both has
// equal peaks): a fit on one holds for the other.
bool same_tensor_path(Precision a, Precision b) {
  auto half = [](Precision p) { return p == Precision::fp16 || p == Precision::bf16; };
  return a == b || (half(a) && half(b));
}

bool FittedDomain::contains(const ComputeOp& op) const {
  if (kernel_role(op) != role) return false;
  if (!precisions.empty() && std::none_of(precisions.begin(), precisions.end(),
                                          [&](Precision p) { return same_tensor_path(p, op.precision); }))
    return false;
  if (m && !m->contains(op.m)) return false;
  if (n && !n->contains(op.n)) return false;
  if (k && !k->contains(op.k)) return false;
  if (bytes && !bytes->contains(op.bytes)) return false;
  return true;
}

std::string FittedDomain::describe() const {
  std::string s = role;
  for (Precision p : precisions)
    s += std::string(p == precisions.front() ? " " : "/") + to_string(p);
  return s + range_text("m", m) + range_text("n", n) + range_text("k", k) + range_text("bytes", bytes);
}

const FittedParameter* CalibrationProfile::find(std::string_view parameter) const {
  for (const auto& p : parameters) {
    if (p.name == parameter) return &p;
  }
  return nullptr;
}

std::vector<std::string> calibration_profile_names() {
  return resource_names(resources_detail::calibration_profile_resources());
}

std::optional<CalibrationProfile> find_calibration_profile(std::string_view gpu_id) {
  const Resource* entry = find_resource(resources_detail::calibration_profile_resources(), gpu_id);
  if (entry == nullptr) return std::nullopt;
  CalibrationProfile p = parse_calibration_profile(entry->text, entry->path);
  if (p.gpu != entry->name)
    throw SpecError(entry->path, "/gpu",
                    "the profile is for '" + p.gpu + "' but its file is named '" + entry->name + "'");
  p.name = entry->name;
  return p;
}

CalibrationProfile shipped_calibration_profile(std::string_view gpu_id) {
  std::optional<CalibrationProfile> profile = find_calibration_profile(gpu_id);
  if (!profile) {
    std::string known;
    for (const auto& n : calibration_profile_names())
      known += (known.empty() ? "" : ", ") + n;
    throw SpecError("--gpu", "", "no calibration profile for '" + std::string(gpu_id) + "'; profiles: " + known);
  }
  return *std::move(profile);
}

CalibrationProfile parse_calibration_profile(std::string_view json_text, const std::string& file) {
  const SpecDocument doc = parse_spec_text(json_text, file);
  JsonReader r(doc.json, file);
  CalibrationProfile p;
  p.gpu = r.string("gpu");
  p.name = p.gpu + " (" + file + ")";
  p.description = r.optional_string("description").value_or("");
  p.fitted_on = read_strings(r, "fitted_on");
  p.held_out = read_strings(r, "held_out");
  JsonReader params = r.object("parameters");
  for (auto it = doc.json.at("parameters").begin(); it != doc.json.at("parameters").end(); ++it) {
    JsonReader pr = params.object(it.key());
    FittedParameter f;
    f.name = it.key();
    GpuSpec probe;
    if (!gpu_number(probe, f.name)) pr.fail_here("not a kernel-model parameter of the GPU catalogue format");
    f.value = pr.number("value");
    f.source = pr.string("source");
    if (pr.has("domain")) {
      const nlohmann::json& list = pr.array("domain");
      for (std::size_t i = 0; i < list.size(); ++i)
        f.domain.push_back(read_domain(pr.element("domain", i)));
    }
    if (auto res = pr.optional_object("residual")) f.residual = read_residual(*res);
    pr.finish();
    p.parameters.push_back(std::move(f));
  }
  params.finish();
  r.finish();
  return p;
}

std::string calibration_profile_to_json(const CalibrationProfile& profile) {
  nlohmann::ordered_json j{{"gpu", profile.gpu},
                           {"description", profile.description},
                           {"fitted_on", profile.fitted_on},
                           {"held_out", profile.held_out}};
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& f : profile.parameters) {
    nlohmann::ordered_json domain = nlohmann::ordered_json::array();
    for (const auto& d : f.domain)
      domain.push_back(domain_json(d));
    params[f.name] = {{"value", f.value},
                      {"source", f.source},
                      {"domain", domain},
                      {"residual",
                       {{"measurements", f.residual.measurements},
                        {"rms_log_error", f.residual.rms_log_error},
                        {"median_abs_error", f.residual.median_abs_error},
                        {"p90_abs_error", f.residual.p90_abs_error}}}};
  }
  j["parameters"] = params;
  return j.dump(2) + "\n";
}

void apply_calibration_profile(GpuSpec& gpu, const CalibrationProfile& profile) {
  for (const auto& f : profile.parameters) {
    const auto source = gpu.sources.find(f.name);
    if (source != gpu.sources.end() && source->second.rfind("given in ", 0) == 0) continue;
    set_gpu_number(gpu, f.name, f.value);
    gpu.sources[f.name] = "fitted (calibration profile " + profile.name + "): " + f.source;
  }
}

CalibrationInfo apply_calibration_profile(GpuSpec& gpu) {
  CalibrationInfo info;
  std::optional<CalibrationProfile> profile = find_calibration_profile(gpu.id);
  if (!profile) {
    // Uncalibrated: say how many of the entry's figures are assumptions (their source starts with
    // "assumed:") and which were fitted to a published measurement, so that a reader of the report
    // knows the prediction rests on them.
    int assumed = 0;
    std::string fitted;
    for (const auto& [key, source] : gpu.sources) {
      if (source.rfind("assumed:", 0) == 0)
        ++assumed;
      else if (source.rfind("fitted to", 0) == 0)
        fitted += (fitted.empty() ? "" : ", ") + key;
    }
    info.description = "catalogue entry " + gpu.id +
                       " (datasheet peaks; kernel efficiencies assumed: no calibration profile for this GPU); "
                       "UNCALIBRATED: " +
                       std::to_string(assumed) + " of its " + std::to_string(gpu.sources.size()) +
                       " figures are assumptions" +
                       (fitted.empty() ? std::string() : ", fitted to one published measurement each: " + fitted);
    return info;
  }
  apply_calibration_profile(gpu, *profile);
  std::vector<std::string> kept;
  for (const auto& f : profile->parameters) {
    const auto source = gpu.sources.find(f.name);
    if (source != gpu.sources.end() && source->second.rfind("given in ", 0) == 0) kept.push_back(f.name);
  }
  info.profile = profile->name;
  const std::size_t files = profile->fitted_on.size();
  info.description = "calibration profile " + profile->name + " (datasheet peaks; " +
                     std::to_string(profile->parameters.size() - kept.size()) + " kernel-model parameters fitted to " +
                     (files == 0 ? std::string("measurements") : profile->fitted_on.front()) +
                     (files > 1 ? " and " + std::to_string(files - 1) + " more measurement file(s)" : "") +
                     "; the rest assumed)";
  if (!kept.empty()) {
    std::string list;
    for (const auto& k : kept)
      list += (list.empty() ? "" : ", ") + k;
    info.description += "; given in the cluster spec, kept: " + list;
  }
  info.applied = std::move(profile);
  return info;
}

bool in_fitted_domain(const CalibrationProfile& profile, const ComputeOp& op) {
  for (const auto& f : profile.parameters) {
    for (const auto& d : f.domain) {
      if (d.contains(op)) return true;
    }
  }
  return false;
}

std::vector<std::string> kernels_outside_fitted_domain(const CalibrationProfile& profile, const ExecutionGraph& graph) {
  // The distinct domains (parameters of one family share theirs), checked once per compute op.
  std::vector<const FittedDomain*> domains;
  std::set<std::string> seen;
  for (const auto& f : profile.parameters) {
    for (const auto& d : f.domain) {
      if (seen.insert(d.describe()).second) domains.push_back(&d);
    }
  }
  struct Outside {
    std::size_t count = 0;
    std::string example;
  };
  std::map<std::string, Outside, std::less<>> by_role;
  // A step repeats a few distinct kernels: the verdict of each distinct (name, kernel, precision, m, n,
  // k, bytes), what FittedDomain::contains reads, is worked out once per class (the domain checks of
  // every op were 3 % of a GPT-3 175B simulate). The name's pointer is its interned copy in the class.
  using Key =
      std::tuple<const char*, std::size_t, KernelClass, Precision, std::uint32_t, std::uint32_t, std::uint32_t, double>;
  for (const RankClass& rank_class : graph.classes()) {
    const OpTable& ops = rank_class.ops;
    std::map<Key, bool> inside;
    for (OpId i = 0; i < ops.size(); ++i) {
      if (ops.kind(i) != OpKind::compute) continue;
      const ComputeOp op = ops.compute_op(i);
      const Key key{op.name.data(), op.name.size(), op.kernel, op.precision, op.m, op.n, op.k, op.bytes};
      const auto check = [&] {
        return std::any_of(domains.begin(), domains.end(), [&](const FittedDomain* d) { return d->contains(op); });
      };
      bool in_domain = false;
      if (std::isnan(op.bytes)) {
        in_domain = check();
      } else {
        auto verdict = inside.find(key);
        if (verdict == inside.end()) verdict = inside.emplace(key, check()).first;
        in_domain = verdict->second;
      }
      if (in_domain) continue;
      const std::string_view role = kernel_role(op);
      auto it = by_role.find(role);
      if (it == by_role.end()) it = by_role.emplace(std::string(role), Outside{0, describe_op(op)}).first;
      ++it->second.count;
    }
  }
  std::vector<std::string> lines;
  for (const auto& [role, o] : by_role) {
    std::string fitted;
    for (const FittedDomain* d : domains) {
      if (d->role == role) fitted += (fitted.empty() ? "" : "; ") + d->describe();
    }
    lines.push_back(role + ": " + std::to_string(o.count) + " kernels outside the fitted domain of profile " +
                    profile.name + " (" + (fitted.empty() ? "no measurements of this kernel" : "fitted: " + fitted) +
                    "), e.g. " + o.example);
  }
  return lines;
}

}  // namespace clustersim
