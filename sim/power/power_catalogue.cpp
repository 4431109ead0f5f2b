// The power catalogue: sim/power/catalogue/gpus/<gpu id>.json and sim/power/catalogue/network.json,
// compiled into the library. Lookups by line rate take the nearest catalogued speed (and say so in
// the source when it is not exact); switches are scaled linearly from the catalogued radix.
#include "sim/power/power_catalogue.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/nearest_speed.hpp"
#include "sim/core/resource_json.hpp"
#include "sim/core/resources.hpp"
#include "sim/hardware/power_capped_clock.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> power_gpu_resources();      // generated from sim/power/catalogue/gpus/*.json
std::span<const Resource> power_network_resources();  // generated from sim/power/catalogue/network.json
}  // namespace resources_detail

namespace {

// Ratios of the catalogue's H100 SXM figures to its TDP, for GPUs without an entry.
constexpr double kWaitingPerIdle = 1.5;
constexpr double kTensorPerTdp = 0.985;
constexpr double kVectorPerTdp = 0.65;
constexpr double kCommunicationPerTdp = 0.36;
constexpr double kOverlapPerTdp = 0.085;
constexpr double kHostPerTdp = 225.0 / 700.0;

const nlohmann::json& network_document() {
  static const nlohmann::json doc = resource_json(resources_detail::power_network_resources(), "network",
                                                  "power catalogue: sim/power/catalogue/network.json is missing");
  return doc;
}

std::string speed_note(double wanted, double got) {
  if (wanted == got) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, " (nearest catalogued speed %.0f Gb/s for %.0f Gb/s)", got, wanted);
  return buf;
}

DevicePower device_power(const nlohmann::json& e, double wanted_Gbps) {
  return {e.at("static_w").get<double>(), e.at("max_w").get<double>(),
          e.at("source").get<std::string>() + speed_note(wanted_Gbps, e.at("speed_Gbps").get<double>())};
}

// Power of a large GEMM (the tensor cores busy gemm_max_efficiency of the cycles) at the clock the
// GPU's tensor power budget allows (the TDP in a sustained loop; the step's budget in a simulated
// step: sim/power/step_clock.cpp): the same rule that sets the kernels' clock (power_capped_clock.cpp).
double capped_tensor_w(const GpuSpec& gpu) {
  return large_gemm_power_w(gpu, Precision::bf16);
}

// The power of fp8 (mxfp8, nvfp4) tensor kernels. With the clock under the cap modelled: a large fp8
// GEMM at the clock the budget allows, by the same rule (its power per busy cycle w(fp8) =
// tensor_fp8_power_ratio of the 16-bit path's, its utilization gemm_fp8_efficiency). Otherwise the
// catalogue's tensor figure with its dynamic part (above idle) scaled by the same w(fp8).
double low_precision_tensor_w(const GpuSpec& gpu, double tensor_w, double idle_w) {
  if (models_power_cap(gpu)) return large_gemm_power_w(gpu, Precision::fp8);
  return idle_w + std::max(0.0, tensor_w - idle_w) * tensor_power_weight(gpu, Precision::fp8);
}

constexpr const char* kCappedTensorSource =
    "; tensor_w: a large GEMM at the clock its power budget allows (sim/hardware/power_capped_clock.cpp, "
    "sim/power/step_clock.cpp)";

}  // namespace

GpuPowerModel gpu_power_model(const GpuSpec& gpu) {
  GpuPowerModel m;
  m.id = gpu.id;
  if (const Resource* r = find_resource(resources_detail::power_gpu_resources(), gpu.id)) {
    const nlohmann::json doc = nlohmann::json::parse(r->text);
    JsonReader reader(doc, r->path);
    reader.string("id");
    m.tdp_w = reader.number("tdp_w", NumberRange::positive());
    m.idle_w = reader.number("idle_w", NumberRange::non_negative());
    m.waiting_w = reader.number("waiting_w", NumberRange::non_negative());
    // A GPU whose clock under the power cap is modelled takes its tensor power from that model.
    if (models_power_cap(gpu)) {
      reader.accept("tensor_w");
      m.tensor_w = capped_tensor_w(gpu);
    } else {
      m.tensor_w = reader.number("tensor_w", NumberRange::non_negative());
    }
    m.low_precision_tensor_w = low_precision_tensor_w(gpu, m.tensor_w, m.idle_w);
    m.vector_w = reader.number("vector_w", NumberRange::non_negative());
    m.communication_w = reader.number("communication_w", NumberRange::non_negative());
    m.overlap_communication_w = reader.number("overlap_communication_w", NumberRange::non_negative());
    m.host_w_per_gpu = reader.number("host_w_per_gpu", NumberRange::non_negative());
    reader.accept("sources");
    reader.finish();
    m.source = std::string(r->path) + (models_power_cap(gpu) ? kCappedTensorSource : "");
    // The power limit is the GPU's (GpuSpec::tdp_w): a cluster spec may set one below the catalogue's
    // TDP (torchtitan's Grand Teton H100s ran at 500 W), and the step clock and the energy must hold
    // the GPU to it. No activity draws more than the limit.
    if (gpu.tdp_w > 0.0 && gpu.tdp_w != m.tdp_w) {
      m.tdp_w = gpu.tdp_w;
      for (double* w : {&m.waiting_w, &m.tensor_w, &m.low_precision_tensor_w, &m.vector_w, &m.communication_w})
        *w = std::min(*w, m.tdp_w);
      m.source += "; power limit " + std::to_string(static_cast<int>(std::lround(m.tdp_w))) +
                  " W from the GPU spec (activities capped at it)";
    }
    return m;
  }
  m.tdp_w = gpu.tdp_w;
  m.idle_w = gpu.idle_w;
  m.waiting_w = kWaitingPerIdle * gpu.idle_w;
  m.tensor_w = models_power_cap(gpu) ? capped_tensor_w(gpu) : kTensorPerTdp * gpu.tdp_w;
  m.low_precision_tensor_w = low_precision_tensor_w(gpu, m.tensor_w, m.idle_w);
  m.vector_w = kVectorPerTdp * gpu.tdp_w;
  m.communication_w = kCommunicationPerTdp * gpu.tdp_w;
  m.overlap_communication_w = kOverlapPerTdp * gpu.tdp_w;
  m.host_w_per_gpu = kHostPerTdp * gpu.tdp_w;
  m.source =
      "derived from the GPU's tdp_W and idle_W with the ratios of the H100 SXM entry "
      "(sim/power/catalogue/gpus/h100-sxm5-80gb.json)";
  return m;
}

DevicePower nvswitch_chip_power(std::string_view generation) {
  const nlohmann::json& list = network_document().at("nvswitch_chip");
  for (const auto& e : list)
    if (e.at("generation").get<std::string>() == generation)
      return {e.at("static_w").get<double>(), e.at("max_w").get<double>(), e.at("source").get<std::string>()};
  const nlohmann::json& newest = list.back();
  return {newest.at("static_w").get<double>(), newest.at("max_w").get<double>(),
          newest.at("source").get<std::string>() + " (the scale-up domain names no generation: the newest is used)"};
}

DevicePower nic_power(double speed_Gbps) {
  const nlohmann::json* e =
      nearest_by_speed(network_document().at("nic"), speed_Gbps, [](const auto&) { return true; });
  return device_power(*e, speed_Gbps);
}

DevicePower switch_power(std::string_view technology, double speed_Gbps, int radix) {
  const nlohmann::json& list = network_document().at("switch");
  const nlohmann::json* e = nearest_by_speed(
      list, speed_Gbps, [&](const nlohmann::json& x) { return x.at("technology").get<std::string>() == technology; });
  std::string note;
  if (e == nullptr) {
    e = nearest_by_speed(list, speed_Gbps, [](const auto&) { return true; });
    note = " (no " + std::string(technology) + " switch catalogued: the nearest of another technology)";
  }
  DevicePower p = device_power(*e, speed_Gbps);
  const double scale = radix > 0 ? radix / e->at("radix").get<double>() : 1.0;
  p.static_w *= scale;
  p.max_w *= scale;
  if (scale != 1.0) p.source += "; scaled to " + std::to_string(radix) + " ports";
  p.source += note;
  return p;
}

DevicePower transceiver_power(double speed_Gbps) {
  const nlohmann::json* e =
      nearest_by_speed(network_document().at("transceiver"), speed_Gbps, [](const auto&) { return true; });
  const double w = e->at("w").get<double>();
  return {w, w, e->at("source").get<std::string>() + speed_note(speed_Gbps, e->at("speed_Gbps").get<double>())};
}

}  // namespace clustersim
