// The SimGrid platform exported by topologies/ (export_simgrid_xml) loads in SimGrid 3.32: one host
// per GPU, and between any two GPUs SimGrid's route has as many links as the cluster's own route. Where
// the shortest path is unique the latencies agree too; on DGX fat-trees SimGrid may take an
// equally short path that relays through a GPU (GPU -> NVSwitch -> GPU -> NIC, as NCCL's PXN does),
// whose latency differs. Each platform is loaded in a child process (SimGrid's engine is a
// process-wide singleton).
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <simgrid/s4u.hpp>

#include "sim/core/child_process.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_export.hpp"

namespace clustersim {
namespace {

namespace sg4 = simgrid::s4u;

struct Loaded {
  int hosts = 0;
  std::vector<int> route_links;  // per pair
  std::vector<double> route_latency_s;
};

// Loads `path` in a child process and measures the routes between `pairs` of host names.
Loaded load_in_child(const std::string& path, const std::vector<std::pair<std::string, std::string>>& pairs) {
  const std::string out = run_in_child_process([&] {
    int argc = 2;
    char arg0[] = "clustersim-test";
    char arg1[] = "--log=root.thresh:critical";
    char* argv[] = {arg0, arg1, nullptr};
    sg4::Engine engine(&argc, argv);
    engine.load_platform(path);
    engine.seal_platform();  // routes are computed when the platform is sealed (Engine::run does it too)
    nlohmann::json j;
    j["hosts"] = engine.get_host_count();
    for (const auto& [src, dst] : pairs) {
      std::vector<sg4::Link*> links;
      double latency = 0;
      engine.host_by_name(src)->route_to(engine.host_by_name(dst), links, &latency);
      j["links"].push_back(links.size());
      j["latency"].push_back(latency);
    }
    return j.dump();
  });
  const nlohmann::json j = nlohmann::json::parse(out);
  Loaded l;
  l.hosts = j["hosts"].get<int>();
  for (const auto& n : j["links"])
    l.route_links.push_back(n.get<int>());
  for (const auto& x : j["latency"])
    l.route_latency_s.push_back(x.get<double>());
  return l;
}

void expect_loads_with_cluster_routes(const ClusterSpec& spec, int pairs, bool unique_paths) {
  SCOPED_TRACE(spec.name);
  const Cluster cluster = Cluster::build(spec);
  const std::string path = ::testing::TempDir() + "clustersim_platform_" + spec.name + ".xml";
  std::ofstream(path, std::ios::binary) << export_simgrid_xml(cluster);

  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> gpu(0, cluster.gpu_count() - 1);
  std::vector<std::pair<int, int>> gpu_pairs;
  std::vector<std::pair<std::string, std::string>> names;
  for (int i = 0; i < pairs; ++i) {
    const int a = gpu(rng), b = gpu(rng);
    if (a == b) continue;
    gpu_pairs.emplace_back(a, b);
    names.emplace_back(cluster.devices()[static_cast<std::size_t>(a)].name,
                       cluster.devices()[static_cast<std::size_t>(b)].name);
  }
  const Loaded loaded = load_in_child(path, names);
  EXPECT_EQ(loaded.hosts, cluster.gpu_count());
  ASSERT_EQ(loaded.route_links.size(), gpu_pairs.size());
  std::vector<int> route;
  for (std::size_t i = 0; i < gpu_pairs.size(); ++i) {
    route.clear();
    cluster.route(gpu_pairs[i].first, gpu_pairs[i].second, 0, route);
    EXPECT_EQ(loaded.route_links[i], static_cast<int>(route.size())) << names[i].first << " -> " << names[i].second;
    if (unique_paths) {
      EXPECT_NEAR(loaded.route_latency_s[i], cluster.route_latency_s(route), 1e-12)
          << names[i].first << " -> " << names[i].second;
    }
  }
}

TEST(SimgridExport, RailOptimizedFatTreeLoadsWithTheClustersRoutes) {
  // 4 DGX H100 nodes: 32 hosts; routes of 2 (NVSwitch), 4 (same rail) and 6 (through a spine) links.
  expect_loads_with_cluster_routes(load_cluster_spec("dgx-h100-superpod", {{"nodes", "4"}}), 200, false);
}

TEST(SimgridExport, ThreeTierFatTreeTorusAndPcieServerLoad) {
  expect_loads_with_cluster_routes(load_cluster_spec("dgx-a100-superpod", {{"nodes", "48"}}), 100, false);
  // The torus: GPUs forward and every link has the same latency; the PCIe server: one path per pair.
  expect_loads_with_cluster_routes(load_cluster_spec("torus-3d"), 200, true);
  expect_loads_with_cluster_routes(load_cluster_spec("l4-pcie-server"), 50, true);
}

}  // namespace
}  // namespace clustersim
