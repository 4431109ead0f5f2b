#pragma once
// nccl-tests' vocabulary: the names of its collectives and its bus bandwidth, algbw (bytes / time)
// times a factor of the collective and the rank count, so that every collective's figure compares
// with the link bandwidth (nccl-tests, doc/PERFORMANCE.md). Used to read measured tables
// (sim/network/collective_tables), to rate collective algorithms (sim/collectives) and by the
// simulated nccl-tests (sim/collective_sweep).
#include <string>

#include "workloads/execution_graph.hpp"

namespace clustersim {

// all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce 1 (and
// send/recv 1).
double bus_factor(CollectiveKind kind, int ranks);

// The kind named as nccl-tests and clustersim name it ("all_reduce", "allreduce", ...). Throws
// SpecError("--op <text>", "", ...) naming the accepted names.
CollectiveKind parse_collective_kind(const std::string& text);

}  // namespace clustersim
