#include "sim/api/spec_overrides.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "sim/core/error.hpp"
#include "topologies/cluster_schema.hpp"
#include "workloads/workload_schema.hpp"

namespace clustersim {
namespace {

// The cluster spec's top-level keys read outside its schema (cluster_spec.cpp).
constexpr std::array<std::string_view, 2> kClusterKeys = {"gpu", "nodes"};

// A section of the workload spec: the first key of a nested field of the schema (model, training, ...).
bool is_workload_section(std::string_view k) {
  for (const WorkloadField& f : workload_schema()) {
    const std::string_view section = f.section();
    if (!section.empty() && section.substr(0, section.find('.')) == k) return true;
  }
  return false;
}

}  // namespace

bool is_cluster_key(std::string_view k) {
  if (std::find(kClusterKeys.begin(), kClusterKeys.end(), k) != kClusterKeys.end()) return true;
  for (const SpecField& f : cluster_schema()) {
    const std::string_view section = f.section();
    if (!section.empty() && section.substr(0, section.find('.')) == k) return true;
  }
  return false;
}

ClusterAndOtherOverrides split_cluster_and(const std::vector<std::string>& settings, std::string_view other,
                                           std::string_view example, bool (*is_other_key)(std::string_view)) {
  ClusterAndOtherOverrides out;
  const std::string prefix(other);
  for (const std::string& s : settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw SpecError("--set " + s, "", "expected key.path=value (e.g. " + std::string(example) + ")");
    const std::string key = s.substr(0, eq);
    const std::string value = s.substr(eq + 1);
    const std::string first = key.substr(0, key.find('.'));
    const std::string rest = key.find('.') == std::string::npos ? "" : key.substr(key.find('.') + 1);
    if (first == "cluster" && !rest.empty()) {
      out.cluster.emplace_back(rest, value);
    } else if (first == prefix && !rest.empty()) {
      out.other.emplace_back(rest, value);
    } else if (is_cluster_key(first)) {
      out.cluster.emplace_back(key, value);
    } else if (is_other_key(first)) {
      out.other.emplace_back(key, value);
    } else {
      throw SpecError("--set " + s, "",
                      "cannot tell which spec '" + first + "' belongs to; prefix it with cluster. or " + prefix +
                          ". (e.g. " + prefix + "." + key + ")");
    }
  }
  return out;
}

SplitOverrides split_overrides(const std::vector<std::string>& settings) {
  ClusterAndOtherOverrides split =
      split_cluster_and(settings, "workload", "fabric.oversubscription=2", &is_workload_section);
  return {std::move(split.cluster), std::move(split.other)};
}

}  // namespace clustersim
