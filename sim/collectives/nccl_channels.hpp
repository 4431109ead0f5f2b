#pragma once
// NCCL's (and RCCL's) channels: how many a call runs by its size, what one channel may carry under each
// protocol, the chunk a ring moves per step, and the ring's pipeline fill. Every figure is the library's
// own (nccl_channels.cpp names the file and tag of each).
//
//   channels by size   NCCL lowers a call's channel count while bytes < nc x nThreads x threadThreshold
//                      (enqueue.cc, topoGetAlgoInfo: "Ring/Tree channel tuning"), so a small call runs on
//                      few channels, each with enough work for its threads.
//   per-channel caps   its tuner caps a protocol's bus bandwidth at nChannels x a per-channel maximum
//                      (tuning.cc: perChMaxRingLL128Bw, perChMaxTreeBw, perChMaxTreeLL128Bw): one channel
//                      is one thread block, whose copy loop cannot go faster whatever the links allow.
//   pipeline fill      a ring moves its data in chunks (NCCL's chunkSize); the first chunk crosses N-1 hops
//                      before the last rank receives, so a pipeline of k stages and C chunks of c bytes at
//                      rate r takes (C + k - 1) c / r: (k - 1) c / r more than its steady state (a ring of
//                      N ranks: k = N).
#include <string_view>

#include "sim/collectives/nccl_protocol.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

// The library a node's collectives run on: NCCL (NVIDIA) or RCCL (AMD Instinct, its port).
enum class NcclLibrary { nccl, rccl };

struct NcclLibraryConstants {
  NcclLibrary id;
  std::string_view name;
  int max_channels;                 // MAXCHANNELS: the most channels a call can run on
  int max_threads[3];               // NCCL_{LL,LL128,SIMPLE}_MAX_NTHREADS, indexed by NcclProtocol
  int thread_threshold[3];          // NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD (the ring's LL x ranks)
  double ring_chunk_bytes[3];       // a ring all-reduce's chunkSize per protocol (bytes)
  double chain_chunk_bytes_simple;  // broadcast / reduce under Simple (chunkSteps 1: one step)
  // Whether a ring run pays its pipeline fill (ring_pipeline_fill_s): checked against the library's
  // published tables (nccl_channels.cpp says which, and why NCCL's do not take it).
  bool ring_pipeline_fill;
};

const NcclLibraryConstants& nccl_library(NcclLibrary id);

// The channels NCCL runs a ring or tree call of `bytes` (per rank, nccl-tests' size) on under `p`, over
// `ranks` ranks, when the communicator has `max_channels` (enqueue.cc: nc = comm->nChannels; while
// (nBytes < nc * nt * threadThreshold && nc >= 2) nc--). At least 1.
int nccl_channels_for_size(const NcclLibraryConstants& lib, bool ring, NcclProtocol p, double bytes, int ranks,
                           int max_channels);

// NCCL's per-channel cap of bus bandwidth (B/s) for `algorithm` ("ring", "tree") under `p` on GPUs of
// `scale_up_generation` ("nvlink2" .. "nvlink5") over `nodes` nodes; 0 where NCCL has none (ring LL and
// Simple, tree LL: capped by llMaxBw instead, nccl_protocol.hpp).
double nccl_per_channel_cap_Bps(std::string_view algorithm, NcclProtocol p, CollectiveKind kind,
                                std::string_view scale_up_generation, int nodes);

// A pipeline of `stages` hops moving `chunks` chunks of `chunk_bytes` each at `rate_Bps`: (C + k - 1) c / r.
double pipeline_time_s(int stages, double chunks, double chunk_bytes, double rate_Bps);

// The ring's pipeline fill: the ring as a pipeline of N stages (its ranks), the first chunk crossing N-1
// hops before the last rank receives: pipeline_time_s(N, C, c, r) - C c / r = (N-1) c / r, with c the chunk of one
// step, min(chunkSize, S/N) (broadcast, reduce: min(chunkSize, S)), and r the rate at which a rank sends (its bytes
// over the ring's bandwidth time). 0 for N <= 1.
double ring_pipeline_fill_s(const NcclLibraryConstants& lib, NcclProtocol p, CollectiveKind kind, int ranks,
                            double bytes, double rank_rate_Bps);

}  // namespace clustersim
