#pragma once
// The catalogue lookup the power and price catalogues share: among a JSON list of entries with a
// `speed_Gbps`, the one nearest a link speed on a log scale (a 400 Gb/s port takes the 400 Gb/s
// entry, else the nearer of 200 and 800 by ratio), so that one rule picks a device's power and price.
#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace clustersim {

// The entry of `list` whose speed_Gbps is nearest `speed_Gbps` among those `accept` keeps (the first
// of equally near ones; nullptr if none is kept). Speeds below 1 Gb/s count as 1.
template <typename Accept>
const nlohmann::json* nearest_by_speed(const nlohmann::json& list, double speed_Gbps, Accept accept) {
  const nlohmann::json* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : list) {
    if (!accept(e)) continue;
    const double d =
        std::fabs(std::log(std::max(1.0, e.at("speed_Gbps").get<double>())) - std::log(std::max(1.0, speed_Gbps)));
    if (d < best_distance) {
      best_distance = d;
      best = &e;
    }
  }
  return best;
}

}  // namespace clustersim
