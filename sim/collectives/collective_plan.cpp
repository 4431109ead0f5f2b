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
  const double link_latency_s = ctx.cluster.max_link_latency_s();
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
  // Sorted by the key src x G + dst (G: one more than the largest GPU index), equal keys in their
  // original order: a least-significant-digit radix sort (16-bit digits) for large plans, a
  // comparison sort of (key, position) for small ones. Equal pairs merge in their original order.
  const std::size_t n = transfers.size();
  std::uint64_t gpus = 1;
  for (const Transfer& t : transfers)
    gpus = std::max<std::uint64_t>(gpus, static_cast<std::uint64_t>(std::max(t.src_gpu, t.dst_gpu)) + 1);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Transfer& t = transfers[i];
    order[i] = {static_cast<std::uint64_t>(t.src_gpu) * gpus + static_cast<std::uint64_t>(t.dst_gpu),
                static_cast<std::uint32_t>(i)};
  }
  constexpr std::size_t k_radix_from = 4096;
  if (n < k_radix_from) {
    std::sort(order.begin(), order.end());
  } else {
    constexpr int k_digit_bits = 16;
    constexpr std::size_t k_buckets = std::size_t{1} << k_digit_bits;
    const std::uint64_t largest = gpus * gpus;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> scratch(n);
    std::vector<std::size_t> start(k_buckets + 1);
    for (int shift = 0; shift < 64 && (largest >> shift) != 0; shift += k_digit_bits) {
      std::fill(start.begin(), start.end(), 0);
      for (const auto& o : order)
        ++start[((o.first >> shift) & (k_buckets - 1)) + 1];
      for (std::size_t b = 0; b < k_buckets; ++b)
        start[b + 1] += start[b];
      for (const auto& o : order)
        scratch[start[(o.first >> shift) & (k_buckets - 1)]++] = o;
      order.swap(scratch);
    }
  }
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
