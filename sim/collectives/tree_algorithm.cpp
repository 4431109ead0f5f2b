// NCCL's double binary tree all-reduce (Sanders, Speck, Traeff 2009; NCCL 2.4).
//
// The data is split in two halves, each reduced up one binary tree and broadcast back down it, the
// two pipelined so that reduction and broadcast run concurrently. The second tree is the first with
// every position shifted by one, so that a rank interior in one tree is (mostly) a leaf in the other
// and no rank sends much more than 2S. Across nodes the trees join one GPU per node (one per channel,
// on that channel's rail), and inside each node the GPUs form a chain below it, as NCCL does.
//
// Per tree edge and direction a flow of S/2 per channel-share, marked pipelined: the flow backend moves
// the flows of equal size together, at the pace of the most contended of them, as the chunk steps of
// the pipeline do (and in a few solver events rather than one per flow: ~98k flows at 16k GPUs). On
// an idle fabric with bandwidth B:
//     t = (max bytes through one port) / B + 2 h a,
// h the tree height in edges (plus the intra-node chain length), a the per-step latency. For
// m = 2^k - 1 single-GPU units the busiest port carries exactly 2S: t = 2S/B + 2 h a.
#include "sim/collectives/tree_algorithm.hpp"

#include <algorithm>
#include <cmath>

#include "sim/collectives/ring_algorithm.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

// Parent position of each position of an in-order binary tree over [0, m): -1 for the root.
void in_order_tree(int lo, int hi, int parent, std::vector<int>& parents) {
  if (lo > hi) return;
  const int mid = (lo + hi) / 2;
  parents[static_cast<std::size_t>(mid)] = parent;
  in_order_tree(lo, mid - 1, mid, parents);
  in_order_tree(mid + 1, hi, mid, parents);
}

int tree_height(int m) {
  return m <= 1 ? 0 : static_cast<int>(std::ceil(std::log2(m + 1.0))) - 1;
}

}  // namespace

CollectivePlan plan_tree(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan;
  const auto& ranks = *request.ranks;
  if (ranks.size() <= 1 || request.bytes <= 0.0) return plan;
  const auto segments = node_segments(ctx.cluster, ranks);
  // Units joined by the trees: nodes across nodes (a chain inside each), else single GPUs.
  const bool multi_node = segments.size() > 1;
  const int m = multi_node ? static_cast<int>(segments.size()) : static_cast<int>(ranks.size());
  plan.channels = multi_node ? ring_channels(ctx.cluster, ranks) : 1;
  std::vector<int> parents(static_cast<std::size_t>(m), -1);
  in_order_tree(0, m - 1, -1, parents);

  CollectivePhase phase;
  phase.name = "reduce + broadcast (pipelined)";
  const double half = request.bytes / 2.0 / plan.channels;
  std::size_t longest_chain = 0;
  for (int c = 0; c < plan.channels; ++c) {
    // The GPU of unit u that joins the trees for channel c (rotated inside each node).
    auto head = [&](int u) {
      if (!multi_node) return ranks[static_cast<std::size_t>(u)];
      const auto& seg = segments[static_cast<std::size_t>(u)];
      return seg[static_cast<std::size_t>(c) % seg.size()];
    };
    for (int tree = 0; tree < 2; ++tree) {
      for (int pos = 0; pos < m; ++pos) {
        const int parent_pos = parents[static_cast<std::size_t>(pos)];
        if (parent_pos < 0) continue;
        // Tree 1 places unit u at position (u + 1) mod m, i.e. position p holds unit (p - 1) mod m.
        const int child = tree == 0 ? pos : (pos + m - 1) % m;
        const int parent = tree == 0 ? parent_pos : (parent_pos + m - 1) % m;
        phase.transfers.push_back({head(child), head(parent), half});  // reduce
        phase.transfers.push_back({head(parent), head(child), half});  // broadcast
      }
    }
  }
  // Inside each node, a chain below the head of each channel, the same for both trees: reduce toward
  // the head and broadcast away from it. Channel c's chain starts at the node's GPU c and follows the
  // node's order, so it covers every edge i -> i + 1 (mod n) of the node's ring except the one into
  // GPU c: each edge carries half per tree for every channel whose chain uses it.
  for (const auto& seg : segments) {
    if (!multi_node || seg.size() < 2) continue;
    const std::size_t n = seg.size();
    longest_chain = std::max(longest_chain, n - 1);
    std::vector<int> uses(n, 0);  // uses[i]: chains through the edge seg[i] - seg[(i + 1) % n]
    for (int c = 0; c < plan.channels; ++c) {
      const std::size_t first = static_cast<std::size_t>(c) % n;
      for (std::size_t i = 0; i + 1 < n; ++i)
        ++uses[(first + i) % n];
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (uses[i] == 0) continue;
      const int a = seg[i], b = seg[(i + 1) % n];
      const double bytes = 2.0 * uses[i] * half;
      phase.transfers.push_back({b, a, bytes});
      phase.transfers.push_back({a, b, bytes});
    }
  }
  sort_and_merge_transfers(phase.transfers);
  // The trees are pipelined (chunk by chunk, every edge at once): their flows are one steady state.
  for (Transfer& t : phase.transfers)
    t.pipelined = true;
  phase.steps = 2 * (tree_height(m) + static_cast<int>(longest_chain));
  phase.latency_s = phase.steps * max_hop_latency_s(ctx, phase.transfers);
  plan.phases.push_back(std::move(phase));
  return plan;
}

}  // namespace clustersim
