#include "sim/collectives/collective_plan.hpp"

#include <algorithm>

#include "topologies/cluster.hpp"

namespace clustersim {

double CollectivePlan::latency_s() const {
  double t = 0.0;
  for (const auto& p : phases)
    t += p.latency_s;
  return t;
}

double hop_latency_s(const CollectiveContext& ctx, int src_gpu, int dst_gpu) {
  std::vector<int> route;
  ctx.cluster.route(src_gpu, dst_gpu, 0, route);
  double step = 0.0;
  const auto links = ctx.cluster.links();
  for (int l : route) {
    step = std::max(step, ctx.profile.of(links[static_cast<std::size_t>(l)].technology).step_latency_s.value);
  }
  return ctx.cluster.route_latency_s(route) + step;
}

// A route of h links takes at most h x (the largest link latency) + (the largest step latency): a
// transfer whose bound does not exceed the worst found so far is not routed (most of a ring's
// transfers at scale: same result, a fraction of the routing).
double max_hop_latency_s(const CollectiveContext& ctx, const std::vector<Transfer>& transfers) {
  double link_latency_s = 0.0;
  for (const Link& l : ctx.cluster.links())
    link_latency_s = std::max(link_latency_s, l.latency_s);
  double step_s = 0.0;
  for (const LinkTechnology t :
       {LinkTechnology::nvlink, LinkTechnology::pcie, LinkTechnology::infiniband, LinkTechnology::ethernet})
    step_s = std::max(step_s, ctx.profile.of(t).step_latency_s.value);
  double worst = 0.0;
  for (const Transfer& t : transfers) {
    if (t.src_gpu == t.dst_gpu) continue;
    const double bound_s = ctx.cluster.route_hops(t.src_gpu, t.dst_gpu) * link_latency_s + step_s;
    if (bound_s > worst) worst = std::max(worst, hop_latency_s(ctx, t.src_gpu, t.dst_gpu));
  }
  return worst;
}

void sort_and_merge_transfers(std::vector<Transfer>& transfers) {
  // Sorted as (src, dst) keys with the position as tie-break (integer pairs sort several times faster
  // than the transfers themselves); equal pairs merge in their original order.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    order[i] = {(std::uint64_t{static_cast<std::uint32_t>(t.src_gpu)} << 32) | static_cast<std::uint32_t>(t.dst_gpu),
                static_cast<std::uint32_t>(i)};
  }
  std::sort(order.begin(), order.end());
  std::vector<Transfer> merged;
  merged.reserve(transfers.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Transfer& t = transfers[order[k].second];
    if (k > 0 && order[k].first == order[k - 1].first)
      merged.back().bytes += t.bytes;
    else
      merged.push_back(t);
  }
  transfers = std::move(merged);
}

std::vector<std::vector<int>> node_segments(const Cluster& cluster, const std::vector<int>& ranks) {
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

}  // namespace clustersim
