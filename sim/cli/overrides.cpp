#include "sim/cli/overrides.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "sim/core/error.hpp"

namespace clustersim::cli {
namespace {

constexpr std::array<std::string_view, 6> kClusterKeys = {"gpu", "nodes", "node", "fabric", "power", "cost"};
constexpr std::array<std::string_view, 4> kWorkloadKeys = {"model", "training", "parallelism", "trace"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& keys, std::string_view k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

}  // namespace

SplitOverrides split_overrides(const std::vector<std::string>& settings) {
  SplitOverrides out;
  for (const std::string& s : settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw SpecError("--set " + s, "", "expected key.path=value (e.g. fabric.oversubscription=2)");
    std::string key = s.substr(0, eq);
    const std::string value = s.substr(eq + 1);
    const std::string first = key.substr(0, key.find('.'));
    const std::string rest = key.find('.') == std::string::npos ? "" : key.substr(key.find('.') + 1);
    if (first == "cluster" && !rest.empty()) {
      out.cluster.emplace_back(rest, value);
    } else if (first == "workload" && !rest.empty()) {
      out.workload.emplace_back(rest, value);
    } else if (contains(kClusterKeys, first)) {
      out.cluster.emplace_back(key, value);
    } else if (contains(kWorkloadKeys, first)) {
      out.workload.emplace_back(key, value);
    } else {
      throw SpecError("--set " + s, "",
                      "cannot tell which spec '" + first +
                          "' belongs to; prefix it with cluster. or workload. (e.g. workload." + key + ")");
    }
  }
  return out;
}

}  // namespace clustersim::cli
