// Speed of building clusters and routing on them (run by hand: build/bench/bench_topology).
// Prints, for 2,048 and 16,384 GPUs, the build time and the rate of random GPU-to-GPU routes.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "topologies/cluster.hpp"

int main() {
  using clock = std::chrono::steady_clock;
  struct Case {
    const char* name;
    clustersim::Overrides overrides;
  };
  const Case cases[] = {
      {"2,048 GPUs (256 DGX H100, 2-tier rail-optimized)", {{"nodes", "256"}}},
      {"16,384 GPUs (2,048 DGX H100, 3-tier rail-optimized)", {{"nodes", "2048"}, {"fabric.tiers", "3"}}}};
  for (const Case& c : cases) {
    const auto spec = clustersim::load_cluster_spec("dgx-h100-superpod", c.overrides);
    const auto t0 = clock::now();
    const auto cluster = clustersim::Cluster::build(spec);
    const double build_s = std::chrono::duration<double>(clock::now() - t0).count();
    std::mt19937_64 rng(1);
    std::uniform_int_distribution<int> gpu(0, cluster.gpu_count() - 1);
    std::vector<int> route;
    constexpr int kRoutes = 1000000;
    std::size_t hops = 0;
    const auto t1 = clock::now();
    for (int i = 0; i < kRoutes; ++i) {
      route.clear();
      cluster.route(gpu(rng), gpu(rng), static_cast<std::uint64_t>(i), route);
      hops += route.size();
    }
    const double route_s = std::chrono::duration<double>(clock::now() - t1).count();
    std::printf("%s: %zu devices, %zu links, built in %.3f s; %.0f routes/s (%.2f hops on average)\n", c.name,
                cluster.devices().size(), cluster.links().size(), build_s, kRoutes / route_s,
                static_cast<double>(hops) / kRoutes);
  }
}
