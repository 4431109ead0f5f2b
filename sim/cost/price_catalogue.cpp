#include "sim/cost/price_catalogue.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/nearest_speed.hpp"
#include "sim/core/resource_json.hpp"
#include "sim/core/resources.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> price_catalogue_resources();  // generated from sim/cost/catalogue/*.json
}  // namespace resources_detail

namespace {

constexpr std::string_view kReferenceGpu = "h100-sxm5-80gb";
constexpr double kReferenceTdpW = 700.0;

const nlohmann::json& prices() {
  static const nlohmann::json doc = resource_json(resources_detail::price_catalogue_resources(), "prices",
                                                  "price catalogue: sim/cost/catalogue/prices.json is missing");
  return doc;
}

Price price_of(const nlohmann::json& e) {
  return {e.at("usd").get<double>(), e.at("source").get<std::string>() + " (" + e.at("date").get<std::string>() + ")"};
}

// The entry of prices()[list] with the nearest speed among those `accept` keeps (nullptr if none).
template <typename Accept>
const nlohmann::json* nearest(std::string_view list, double speed_Gbps, Accept accept) {
  return nearest_by_speed(prices().at(std::string(list)), speed_Gbps, accept);
}

Price by_speed(std::string_view list, double speed_Gbps) {
  const nlohmann::json* e = nearest(list, speed_Gbps, [](const auto&) { return true; });
  Price p = price_of(*e);
  const double got = e->at("speed_Gbps").get<double>();
  if (got != speed_Gbps && got > 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "; nearest catalogued speed %.0f Gb/s for %.0f Gb/s", got, speed_Gbps);
    p.source += buf;
  }
  return p;
}

}  // namespace

Price server_price_per_gpu(std::string_view gpu_id, double tdp_w) {
  const nlohmann::json* reference = nullptr;
  for (const auto& e : prices().at("server_per_gpu")) {
    if (e.at("gpu").get<std::string>() == gpu_id) return price_of(e);
    if (e.at("gpu").get<std::string>() == kReferenceGpu) reference = &e;
  }
  Price p = price_of(*reference);
  const double scale = tdp_w > 0 ? tdp_w / kReferenceTdpW : 1.0;
  p.usd *= scale;
  p.source = "no price for GPU '" + std::string(gpu_id) + "': the H100 SXM server price scaled by TDP; " + p.source;
  return p;
}

Price nic_price(double speed_Gbps) {
  return by_speed("nic", speed_Gbps);
}

Price switch_price_per_port(std::string_view technology, double speed_Gbps) {
  const nlohmann::json* e = nearest("switch_per_port", speed_Gbps, [&](const nlohmann::json& x) {
    return x.at("technology").get<std::string>() == technology;
  });
  if (e == nullptr) {
    Price p = by_speed("switch_per_port", speed_Gbps);
    p.source += "; no " + std::string(technology) + " switch catalogued: the nearest of another technology";
    return p;
  }
  Price p = price_of(*e);
  if (e->at("speed_Gbps").get<double>() != speed_Gbps) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "; nearest catalogued speed %.0f Gb/s for %.0f Gb/s",
                  e->at("speed_Gbps").get<double>(), speed_Gbps);
    p.source += buf;
  }
  return p;
}

Price copper_cable_price(double speed_Gbps) {
  return by_speed("copper_cable", speed_Gbps);
}

Price optical_cable_price(double speed_Gbps) {
  return price_of(*nearest("optical_cable", speed_Gbps, [](const auto&) { return true; }));
}

Price transceiver_price(double speed_Gbps) {
  return by_speed("transceiver", speed_Gbps);
}

}  // namespace clustersim
