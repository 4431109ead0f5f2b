#include "sim/serving/serving_router.hpp"

#include "sim/core/named_table.hpp"

namespace clustersim {
namespace {

std::size_t round_robin(std::span<const std::int64_t> outstanding, std::uint64_t arrival) {
  return static_cast<std::size_t>(arrival % outstanding.size());
}

std::size_t least_loaded(std::span<const std::int64_t> outstanding, std::uint64_t) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < outstanding.size(); ++i)
    if (outstanding[i] < outstanding[best]) best = i;
  return best;
}

constexpr ServingRouter kRouters[] = {
    {"round_robin", "the i-th accepted request joins replica i mod replicas", &round_robin},
    {"least_loaded", "the replica with the fewest requests queued or running (lowest index on ties)", &least_loaded},
};

}  // namespace

std::span<const ServingRouter> serving_routers() {
  return kRouters;
}

std::vector<std::string> serving_router_names() {
  return names_of(serving_routers());
}

const ServingRouter& find_serving_router(std::string_view name) {
  return find_named(serving_routers(), name, "serving router");
}

}  // namespace clustersim
