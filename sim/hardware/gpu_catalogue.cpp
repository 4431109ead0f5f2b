// The GPU catalogue and inline GPU objects.
//
// File format (sim/hardware/catalogue/<id>.json; an inline object of a cluster spec has the same keys
// and may start from a catalogue entry with "base": "<id>"). Units are in the key names and converted
// to SI (GpuSpec) here and nowhere else:
//   id, name                         strings (a catalogue file's id is its file name)
//   tensor_{fp32,tf32,fp16,bf16,fp8,mxfp8,nvfp4}_tflops, vector_fp32_tflops   dense peaks, 1e12 flop/s
//   sm_count, boost_clock_MHz
//   hbm_capacity_MiB (as nvidia-smi reports it) or hbm_capacity_GB (decimal, datasheets)
//   hbm_bandwidth_GBps, l2_MiB, l2_bandwidth_GBps
//   nvlink_bandwidth_GBps, pcie_bandwidth_GBps      per direction, 1e9 byte/s
//   tdp_W, idle_W
//   kernel model (kernel_model.cpp; a calibration profile may replace them with fitted values):
//   kernel_launch_us, gemm_launch_us                                  fixed time per kernel, 1e-6 s
//   gemm_max_efficiency, gemm_fp8_efficiency, gemm_fp8_blockwise_efficiency (0: no block-scaled fp8
//   GEMM kernels, training.fp8_recipe blockwise refused), gemm_memory_efficiency, attention_efficiency,
//   memory_efficiency, activation_efficiency, normalization_efficiency, rope_efficiency,
//   embedding_efficiency, l2_reuse                                    fractions in [0, 1]
//   gemm_tile_m, gemm_tile_n, gemm_k_half, gemm_tile_exponent         GEMM tiles and efficiency curve
//   gemm_alignment_exponent                                           efficiency of unaligned operand rows
//   row_bandwidth_GBps                                                one thread block's bandwidth
//   clock under the power cap (power_capped_clock.cpp): tensor_boost_W (power of a fully busy tensor
//   path at the boost clock, uncapped; 0: not modelled), tensor_fp8_power_ratio (the fp8 path's power
//   per busy cycle / the 16-bit path's), clock_power_exponent, power_response_us
//   sources: {"<key>": "where the figure comes from"}
// Catalogue entries give a source for every non-zero figure (checked by the tests). Inline figures
// without a source are recorded as given in the cluster spec, at their JSON path.
#include "sim/hardware/gpu_catalogue.hpp"

#include <climits>
#include <optional>
#include <set>
#include <span>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/spec_document.hpp"
#include "sim/core/units.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> gpu_catalogue_resources();  // generated from sim/hardware/catalogue/*.json
}  // namespace resources_detail

namespace {

enum class Range { non_negative, positive, fraction };

NumberRange to_number_range(Range r) {
  switch (r) {
    case Range::positive:
      return NumberRange::positive();
    case Range::fraction:
      return NumberRange{0.0, 1.0, true};
    case Range::non_negative:
      break;
  }
  return NumberRange::non_negative();
}

struct NumberField {
  const char* key;
  double GpuSpec::*member;
  double to_si;  // multiply the file's value by this
  Range range;
};
constexpr NumberField kNumberFields[] = {
    {"tensor_fp32_tflops", &GpuSpec::tensor_fp32_flops, units::kTFLOPs, Range::non_negative},
    {"tensor_tf32_tflops", &GpuSpec::tensor_tf32_flops, units::kTFLOPs, Range::non_negative},
    {"tensor_fp16_tflops", &GpuSpec::tensor_fp16_flops, units::kTFLOPs, Range::non_negative},
    {"tensor_bf16_tflops", &GpuSpec::tensor_bf16_flops, units::kTFLOPs, Range::non_negative},
    {"tensor_fp8_tflops", &GpuSpec::tensor_fp8_flops, units::kTFLOPs, Range::non_negative},
    {"tensor_mxfp8_tflops", &GpuSpec::tensor_mxfp8_flops, units::kTFLOPs, Range::non_negative},
    {"tensor_nvfp4_tflops", &GpuSpec::tensor_nvfp4_flops, units::kTFLOPs, Range::non_negative},
    {"vector_fp32_tflops", &GpuSpec::vector_fp32_flops, units::kTFLOPs, Range::positive},
    {"boost_clock_MHz", &GpuSpec::boost_clock_hz, 1e6, Range::non_negative},
    {"hbm_capacity_MiB", &GpuSpec::hbm_capacity_bytes, units::kMiB, Range::positive},
    {"hbm_capacity_GB", &GpuSpec::hbm_capacity_bytes, units::kGB, Range::positive},
    {"hbm_bandwidth_GBps", &GpuSpec::hbm_bandwidth_Bps, units::kGBpsToBps, Range::positive},
    {"l2_MiB", &GpuSpec::l2_bytes, units::kMiB, Range::non_negative},
    {"l2_bandwidth_GBps", &GpuSpec::l2_bandwidth_Bps, units::kGBpsToBps, Range::non_negative},
    {"nvlink_bandwidth_GBps", &GpuSpec::nvlink_bandwidth_Bps, units::kGBpsToBps, Range::non_negative},
    {"pcie_bandwidth_GBps", &GpuSpec::pcie_bandwidth_Bps, units::kGBpsToBps, Range::non_negative},
    {"host_memory_GB", &GpuSpec::host_memory_bytes, units::kGB, Range::non_negative},
    {"host_memory_bandwidth_GBps", &GpuSpec::host_memory_bandwidth_Bps, units::kGBpsToBps, Range::non_negative},
    {"tdp_W", &GpuSpec::tdp_w, 1.0, Range::non_negative},
    {"idle_W", &GpuSpec::idle_w, 1.0, Range::non_negative},
    {"kernel_launch_us", &GpuSpec::kernel_launch_s, units::kUsToS, Range::non_negative},
    {"gemm_launch_us", &GpuSpec::gemm_launch_s, units::kUsToS, Range::non_negative},
    {"gemm_max_efficiency", &GpuSpec::gemm_max_efficiency, 1.0, Range::fraction},
    {"gemm_fp8_efficiency", &GpuSpec::gemm_fp8_efficiency, 1.0, Range::fraction},
    {"gemm_fp8_blockwise_efficiency", &GpuSpec::gemm_fp8_blockwise_efficiency, 1.0, Range::fraction},
    {"gemm_k_half", &GpuSpec::gemm_k_half, 1.0, Range::non_negative},
    {"gemm_tile_exponent", &GpuSpec::gemm_tile_exponent, 1.0, Range::non_negative},
    {"gemm_memory_efficiency", &GpuSpec::gemm_memory_efficiency, 1.0, Range::fraction},
    {"gemm_alignment_exponent", &GpuSpec::gemm_alignment_exponent, 1.0, Range::non_negative},
    {"attention_efficiency", &GpuSpec::attention_efficiency, 1.0, Range::fraction},
    {"memory_efficiency", &GpuSpec::memory_efficiency, 1.0, Range::fraction},
    {"activation_efficiency", &GpuSpec::activation_efficiency, 1.0, Range::fraction},
    {"normalization_efficiency", &GpuSpec::normalization_efficiency, 1.0, Range::fraction},
    {"rope_efficiency", &GpuSpec::rope_efficiency, 1.0, Range::fraction},
    {"embedding_efficiency", &GpuSpec::embedding_efficiency, 1.0, Range::fraction},
    {"row_bandwidth_GBps", &GpuSpec::row_bandwidth_Bps, units::kGBpsToBps, Range::non_negative},
    {"l2_reuse", &GpuSpec::l2_reuse, 1.0, Range::fraction},
    {"tensor_boost_W", &GpuSpec::tensor_boost_w, 1.0, Range::non_negative},
    {"tensor_fp8_power_ratio", &GpuSpec::tensor_fp8_power_ratio, 1.0, Range::positive},
    {"clock_power_exponent", &GpuSpec::clock_power_exponent, 1.0, Range::positive},
    {"power_response_us", &GpuSpec::power_response_s, units::kUsToS, Range::non_negative},
};

struct IntField {
  const char* key;
  int GpuSpec::*member;
};
constexpr IntField kIntFields[] = {
    {"sm_count", &GpuSpec::sm_count},
    {"gemm_tile_m", &GpuSpec::gemm_tile_m},
    {"gemm_tile_n", &GpuSpec::gemm_tile_n},
};

// Keys an object must give when it does not start from a catalogue entry.
constexpr const char* kRequired[] = {"vector_fp32_tflops", "sm_count", "hbm_bandwidth_GBps"};

std::string known_ids() {
  std::string list;
  for (const auto& id : gpu_catalogue_ids())
    list += (list.empty() ? "" : ", ") + id;
  return list;
}

// Reads the object's "sources" into g.sources; returns the keys it gave a source for.
std::set<std::string> read_sources(JsonReader& r, GpuSpec& g) {
  std::set<std::string> given;
  auto sources = r.optional_object("sources");
  if (!sources) return given;
  auto read = [&](const char* key) {
    if (auto s = sources->optional_string(key)) {
      g.sources[key] = *s;
      given.insert(key);
    }
  };
  for (const auto& f : kNumberFields)
    read(f.key);
  for (const auto& f : kIntFields)
    read(f.key);
  sources->finish();
  return given;
}

// `catalogue`: a catalogue file (id required, no "base"); otherwise an inline object.
GpuSpec parse_object(JsonReader r, bool catalogue) {
  GpuSpec g;
  bool has_base = false;
  if (!catalogue) {
    if (auto base = r.optional_string("base")) {
      g = find_gpu(*base, r.file(), r.path_of("base"));
      has_base = true;
    }
  }
  if (catalogue) {
    g.id = r.string("id");
  } else if (auto id = r.optional_string("id")) {
    g.id = *id;
  } else if (!has_base) {
    g.id = "custom";
  }
  if (auto name = r.optional_string("name"))
    g.name = *name;
  else if (!has_base)
    g.name = g.id;

  const std::set<std::string> own_sources = read_sources(r, g);
  // A figure an inline object gives without a source of its own is recorded as given there (it
  // replaces the base entry's figure and source).
  auto given = [&](const char* key) {
    if (!catalogue && own_sources.count(key) == 0 && r.has(key))
      g.sources[key] = "given in " + r.file() + " at " + r.path_of(key);
  };
  for (const auto& f : kNumberFields) {
    given(f.key);
    if (auto v = r.optional_number(f.key, to_number_range(f.range))) g.*f.member = *v * f.to_si;
  }
  for (const auto& f : kIntFields) {
    given(f.key);
    if (auto v = r.optional_integer(f.key, 1, INT_MAX)) g.*f.member = static_cast<int>(*v);
  }
  if (r.has("hbm_capacity_MiB") && r.has("hbm_capacity_GB"))
    r.fail("hbm_capacity_GB", "give hbm_capacity_MiB or hbm_capacity_GB, not both");
  if (!has_base) {
    for (const char* key : kRequired) {
      if (!r.has(key)) r.fail(key, "required key is missing");
    }
    if (!r.has("hbm_capacity_MiB") && !r.has("hbm_capacity_GB"))
      r.fail("hbm_capacity_MiB", "required key is missing (or give hbm_capacity_GB)");
  }
  r.finish();
  return g;
}

}  // namespace

std::optional<double> gpu_number(const GpuSpec& gpu, std::string_view key) {
  for (const auto& f : kNumberFields) {
    if (f.key == key) return gpu.*f.member / f.to_si;
  }
  return std::nullopt;
}

bool set_gpu_number(GpuSpec& gpu, std::string_view key, double value) {
  for (const auto& f : kNumberFields) {
    if (f.key != key) continue;
    gpu.*f.member = value * f.to_si;
    return true;
  }
  return false;
}

std::vector<std::string> gpu_catalogue_ids() {
  return resource_names(resources_detail::gpu_catalogue_resources());
}

GpuSpec find_gpu(std::string_view id, const std::string& file, const std::string& json_path) {
  const Resource* entry = find_resource(resources_detail::gpu_catalogue_resources(), id);
  if (entry == nullptr)
    throw SpecError(file, json_path, "unknown GPU '" + std::string(id) + "'; known: " + known_ids());
  const SpecDocument doc = parse_spec_text(entry->text, entry->path);
  GpuSpec g = parse_object(JsonReader(doc.json, doc.file), true);
  if (g.id != entry->name)
    throw SpecError(doc.file, "/id", "the id '" + g.id + "' differs from the file name '" + entry->name + "'");
  return g;
}

GpuSpec parse_gpu_spec(std::string_view json_text, const std::string& file, const std::string& json_path) {
  const SpecDocument doc = parse_spec_text(json_text, file);
  return parse_object(JsonReader(doc.json, file, json_path), false);
}

}  // namespace clustersim
