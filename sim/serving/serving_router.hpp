#pragma once
// Routers: which replica an arriving request joins (the serving spec's `scheduler.router`).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct ServingRouter {
  const char* name;
  const char* doc;
  // The replica for the `arrival`-th accepted request, given each replica's requests in the system
  // (queued or running). Deterministic: ties go to the lowest index.
  std::size_t (*pick)(std::span<const std::int64_t> outstanding, std::uint64_t arrival);
};

std::span<const ServingRouter> serving_routers();
std::vector<std::string> serving_router_names();
const ServingRouter& find_serving_router(std::string_view name);

}  // namespace clustersim
