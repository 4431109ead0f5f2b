#pragma once
// How a collective becomes network work: a sequence of phases, each a set of concurrent transfers,
// plus a latency term.
//
// A collective is not decomposed into its 2N(N-1) chunk messages: that would cost too much and add
// nothing on a flow model. Each phase holds the concurrent flows of the algorithm's steady state, one
// per (source, destination) pair with all the bytes that pair exchanges during the phase (merged over
// steps and channels). The phase ends when its slowest flow ends, which is how a synchronized ring
// behaves: it moves at the pace of its slowest hop. The latency term (steps x per-step latency) is
// added once the bandwidth phases are done.
#include <string>
#include <vector>

#include "sim/network/network_backend.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

class Cluster;

struct CollectivePhase {
  std::vector<Transfer> transfers;
};

struct CollectivePlan {
  std::string algorithm;  // "ring", ...
  std::vector<CollectivePhase> phases;
  double latency_s = 0.0;  // added after the last phase
  int channels = 1;        // parallel rings (NCCL channels) the bytes were spread over
};

// What an algorithm is asked to plan.
struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::all_reduce;
  const std::vector<int>* ranks = nullptr;  // the group, in ring order (global ranks == GPU ranks)
  double bytes = 0.0;                       // the buffer size per rank (nccl-tests convention)
};

}  // namespace clustersim
