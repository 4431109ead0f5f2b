#include "sim/network/network_profile.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/spec_document.hpp"

namespace clustersim {
namespace resources_detail {
std::span<const Resource> network_profile_resources();  // sim/network/profiles/*.json
}  // namespace resources_detail

namespace {

constexpr LinkTechnology kTechnologies[] = {LinkTechnology::nvlink, LinkTechnology::pcie, LinkTechnology::infiniband,
                                            LinkTechnology::ethernet};

FittedValue parse_fitted(JsonReader r, NumberRange range) {
  FittedValue v;
  v.value = r.number("value", range);
  v.source = r.string("source");
  v.domain = r.optional_string("domain").value_or("");
  v.residual = r.number_or("residual", 0.0, NumberRange::non_negative());
  r.finish();
  return v;
}

nlohmann::ordered_json fitted_json(const FittedValue& v) {
  return {{"value", v.value}, {"source", v.source}, {"domain", v.domain}, {"residual", v.residual}};
}

}  // namespace

NetworkProfile ideal_network_profile() {
  NetworkProfile p;
  p.name = "ideal";
  p.description = "raw link rates, wire latencies only: the textbook alpha-beta model";
  return p;
}

NetworkProfile parse_network_profile(std::string_view json_text, const std::string& file) {
  const SpecDocument doc = parse_spec_text(json_text, file);
  JsonReader r(doc.json, file);
  NetworkProfile p;
  p.name = r.string("name");
  p.description = r.optional_string("description").value_or("");
  if (r.has("gpus")) {
    const auto& gpus = r.array("gpus");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (!gpus[i].is_string()) r.fail("gpus", "expected an array of GPU catalogue ids");
      p.gpus.push_back(gpus[i].get<std::string>());
    }
  }
  p.nccl_protocols = r.boolean_or("nccl_protocols", false);
  if (auto c = r.optional_object("collective_latency_s"))
    p.collective_latency_s = parse_fitted(*c, NumberRange::non_negative());
  if (auto c = r.optional_object("nvls_efficiency")) p.nvls_efficiency = parse_fitted(*c, {0.0, 1.0, true});
  if (auto c = r.optional_object("nvls_latency_s")) p.nvls_latency_s = parse_fitted(*c, NumberRange::non_negative());
  if (auto c = r.optional_object("nccl_intra_latency_scale"))
    p.nccl_intra_latency_scale = parse_fitted(*c, NumberRange::non_negative());
  if (auto techs = r.optional_object("technologies")) {
    for (LinkTechnology t : kTechnologies) {
      auto tr = techs->optional_object(to_string(t));
      if (!tr) continue;
      TechnologyProfile& tp = p.of(t);
      if (auto e = tr->optional_object("bandwidth_efficiency"))
        tp.bandwidth_efficiency = parse_fitted(*e, {0.0, 1.0, true});
      if (auto l = tr->optional_object("step_latency_s"))
        tp.step_latency_s = parse_fitted(*l, NumberRange::non_negative());
      tr->finish();
    }
    techs->finish();
  }
  r.finish();
  return p;
}

NetworkProfile load_network_profile(std::string_view name_or_path) {
  if (name_or_path == "ideal") return ideal_network_profile();
  const SpecDocument doc =
      load_spec_document(name_or_path, resources_detail::network_profile_resources(), "network profile");
  return parse_network_profile(doc.json.dump(), doc.file);
}

std::string network_profile_to_json(const NetworkProfile& p) {
  nlohmann::ordered_json techs;
  for (LinkTechnology t : kTechnologies) {
    techs[to_string(t)] = {{"bandwidth_efficiency", fitted_json(p.of(t).bandwidth_efficiency)},
                           {"step_latency_s", fitted_json(p.of(t).step_latency_s)}};
  }
  nlohmann::ordered_json j{{"name", p.name},
                           {"description", p.description},
                           {"gpus", p.gpus},
                           {"nccl_protocols", p.nccl_protocols},
                           {"collective_latency_s", fitted_json(p.collective_latency_s)},
                           {"nvls_efficiency", fitted_json(p.nvls_efficiency)},
                           {"nvls_latency_s", fitted_json(p.nvls_latency_s)},
                           {"nccl_intra_latency_scale", fitted_json(p.nccl_intra_latency_scale)},
                           {"technologies", techs}};
  return j.dump(2);
}

std::string network_profile_for_gpu(std::string_view gpu_id) {
  for (const Resource& r : resources_detail::network_profile_resources()) {
    const NetworkProfile p = parse_network_profile(r.text, r.path);
    if (std::find(p.gpus.begin(), p.gpus.end(), gpu_id) != p.gpus.end()) return p.name;
  }
  return "ideal";
}

std::vector<std::string> network_profile_names() {
  std::vector<std::string> names = resource_names(resources_detail::network_profile_resources());
  names.insert(names.begin(), "ideal");
  return names;
}

}  // namespace clustersim
