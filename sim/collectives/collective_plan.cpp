#include "sim/collectives/collective_plan.hpp"

#include <algorithm>
#include <array>

#include "sim/core/stable_key_sort.hpp"
#include "sim/core/units.hpp"
#include "topologies/cluster.hpp"
#include "topologies/fabric_transport.hpp"

namespace clustersim {

double CollectivePlan::latency_s() const {
  double t = 0.0;
  for (const auto& p : phases)
    t += p.latency_s;
  return t;
}

namespace {

// The per-step latency of a hop over a link of technology `t`: the profile's, plus the fabric
// transport's per-message latency on the fabric's links (fabric_transport.hpp: EFA's).
double step_latency_s(const CollectiveContext& ctx, LinkTechnology t) {
  double s = ctx.profile.of(t).step_latency_s.value;
  if (t == LinkTechnology::infiniband || t == LinkTechnology::ethernet) {
    if (const FabricTransport* tr = find_fabric_transport(ctx.cluster.spec().fabric.transport_in_effect()))
      s += tr->message_latency_us * units::kUsToS;
  }
  return s;
}

// The per-step latency of the hop src -> dst (its route into `route`).
double hop_latency_s(const CollectiveContext& ctx, int src_gpu, int dst_gpu, std::vector<int>& route) {
  route.clear();
  ctx.cluster.route(src_gpu, dst_gpu, 0, route);
  double step = 0.0;
  const auto links = ctx.cluster.links();
  for (int l : route) {
    step = std::max(step, step_latency_s(ctx, links[static_cast<std::size_t>(l)].technology));
  }
  return ctx.cluster.route_latency_s(route) + step;
}

}  // namespace

// A route of h links takes at most h x (the largest latency of a link it may hold) + (the largest step
// latency of their technologies), Cluster::route_bound: a transfer whose bound does not exceed the
// worst found so far is not routed (most of the transfers of a plan at scale: same result, a fraction
// of the routing).
double max_hop_latency_s(const CollectiveContext& ctx, const std::vector<Transfer>& transfers) {
  std::array<double, 4> step_s{};  // per LinkTechnology
  for (const LinkTechnology t :
       {LinkTechnology::nvlink, LinkTechnology::pcie, LinkTechnology::infiniband, LinkTechnology::ethernet})
    step_s[static_cast<std::size_t>(t)] = step_latency_s(ctx, t);
  double worst = 0.0;
  std::vector<int> route;
  for (const Transfer& t : transfers) {
    if (t.src_gpu == t.dst_gpu) continue;
    const int hops = ctx.cluster.route_hops(t.src_gpu, t.dst_gpu);
    const Cluster::RouteBound b = ctx.cluster.route_bound(hops);
    double bound_step_s = 0.0;
    for (std::size_t k = 0; k < step_s.size(); ++k)
      if ((b.technologies >> k) & 1u) bound_step_s = std::max(bound_step_s, step_s[k]);
    if (hops * b.link_latency_s + bound_step_s > worst)
      worst = std::max(worst, hop_latency_s(ctx, t.src_gpu, t.dst_gpu, route));
  }
  return worst;
}

void sort_and_merge_transfers(std::vector<Transfer>& transfers) {
  // Sorted by the key src x G + dst (G: one more than the largest GPU index), equal keys in their
  // original order: equal pairs merge in their original order.
  const std::size_t n = transfers.size();
  std::uint64_t gpus = 1;
  for (const Transfer& t : transfers)
    gpus = std::max<std::uint64_t>(gpus, static_cast<std::uint64_t>(std::max(t.src_gpu, t.dst_gpu)) + 1);
  std::vector<KeyedItem> order(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Transfer& t = transfers[i];
    order[i] = {static_cast<std::uint64_t>(t.src_gpu) * gpus + static_cast<std::uint64_t>(t.dst_gpu),
                static_cast<std::uint32_t>(i)};
  }
  stable_sort_by_key(order);
  std::vector<Transfer> merged;
  merged.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Transfer& t = transfers[order[k].second];
    if (k > 0 && order[k].first == order[k - 1].first)
      merged.back().bytes += t.bytes;
    else
      merged.push_back(t);
  }
  transfers = std::move(merged);
}

void stripe_over_nics(const Cluster& cluster, std::vector<Transfer>& transfers) {
  const int k = cluster.spec().node.nics_per_gpu();
  if (k <= 1) return;
  std::vector<Transfer> out;
  out.reserve(transfers.size());
  for (const Transfer& t : transfers) {
    if (t.lane >= 0 || cluster.node_of_gpu(t.src_gpu) == cluster.node_of_gpu(t.dst_gpu)) {
      out.push_back(t);
      continue;
    }
    for (int lane = 0; lane < k; ++lane) {
      Transfer part = t;
      part.bytes = t.bytes / k;
      part.lane = lane;
      out.push_back(part);
    }
  }
  transfers = std::move(out);
}

namespace {

// Every rank of the group inside one NVLink domain of several nodes (NCCL's MNNVL clique).
bool within_one_rack_scale_domain(const Cluster& cluster, const std::vector<int>& ranks) {
  const ClusterSpec& spec = cluster.spec();
  if (ranks.empty() || spec.node.scale_up.type != "nvswitch") return false;
  const int per_domain = spec.nodes_per_domain();
  if (per_domain <= 1) return false;
  const int domain = cluster.node_of_gpu(ranks.front()) / per_domain;
  return std::all_of(ranks.begin(), ranks.end(), [&](int r) { return cluster.node_of_gpu(r) / per_domain == domain; });
}

}  // namespace

std::vector<std::vector<int>> node_segments(const Cluster& cluster, const std::vector<int>& ranks) {
  if (within_one_rack_scale_domain(cluster, ranks)) return {ranks};
  std::vector<std::vector<int>> segments;
  int current_node = -1;
  for (int r : ranks) {
    const int node = cluster.node_of_gpu(r);
    if (segments.empty() || node != current_node) segments.emplace_back();
    segments.back().push_back(r);
    current_node = node;
  }
  return segments;
}

bool within_one_node(const Cluster& cluster, const std::vector<int>& ranks) {
  if (within_one_rack_scale_domain(cluster, ranks)) return true;
  return std::all_of(ranks.begin(), ranks.end(),
                     [&](int r) { return cluster.node_of_gpu(r) == cluster.node_of_gpu(ranks.front()); });
}

}  // namespace clustersim
