#pragma once
// The timeline of a simulated step as a Chrome / Perfetto trace (chrome://tracing, ui.perfetto.dev):
// a process per recorded rank class (named after its ranks), a thread per stream, a slice per op
// (compute: kernel class, flops, bytes; collectives: communicator, bytes, algorithm; send/recv:
// communicator, peer offset, bytes) and a flow arrow from each send to its matching recv.
#include <string>

#include "sim/replay/replay_engine.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

// Timestamps in microseconds (the format's unit). Deterministic: same inputs, same bytes.
std::string timeline_to_chrome_json(const ExecutionGraph& graph, const ReplayResult& result);

}  // namespace clustersim
