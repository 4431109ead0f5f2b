// NCCL's and RCCL's channels, per-channel caps, chunks and the ring's pipeline fill. Sources:
//
// NCCL 2.27.7 (github.com/NVIDIA/nccl, tag v2.27.7-1):
//   src/include/device.h   MAXCHANNELS 64; NCCL_STEPS 8; NCCL_{LL,SIMPLE}_MAX_NTHREADS 512,
//                          NCCL_LL128_MAX_NTHREADS 640; NCCL_LL_LINES_PER_THREAD 8; NCCL_LL128_ELEMS_PER_THREAD
//                          120; an LL128 line of 128 bytes holds 120 of data (NCCL_LL128_DATAELEMS / LINEELEMS).
//   src/include/comm.h     NCCL_LL_THREAD_THRESHOLD 8, NCCL_LL128_THREAD_THRESHOLD 8,
//                          NCCL_SIMPLE_THREAD_THRESHOLD 64; tuning.cc multiplies the ring's LL one by nRanks.
//   src/include/collectives.h  ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS NCCL_STEPS/2 (4),
//                          BROADCAST/REDUCE_CHUNKSTEPS 1.
//   src/init.cc            DEFAULT_BUFFSIZE 4 MiB (Simple), DEFAULT_LL_BUFFSIZE 8 x 512 x 8 x 16 B (512 KiB),
//                          DEFAULT_LL128_BUFFSIZE 120 x 640 x 8 x 8 B (4,915,200 B).
//   src/enqueue.cc         stepSize = buffSize / NCCL_STEPS; chunkSize = stepSize x chunkSteps (Simple ring),
//                          LL: / 2, LL128: x 120/128. Simple ring all-reduce: 512 KiB x 4 = 2 MiB; LL128:
//                          614,400 x 15/16 = 576,000 B; LL: 65,536 / 2 = 32 KiB. Channel tuning: see the header.
//   src/graph/tuning.cc    perChMaxRingLL128Bws, perChMaxTreeBws, perChMaxTreeLL128Bws (GB/s, rows Volta,
//                          Ampere, Hopper, Blackwell; columns 1, 2, 4+ nodes), below.
// RCCL (github.com/ROCm/rccl, develop at 0cbce2a, NCCL 2.21.5 base; the same rules, its own sizes):
//   src/include/device.h   MAXCHANNELS 128; NCCL_MAX_NTHREADS 256 for every protocol (LL, LL128, Simple);
//                          NCCL_LL128_LINESIZE 64 (7 of 8 words data), NCCL_LL128_ELEMS_PER_THREAD 28.
//   src/init.cc            DEFAULT_BUFFSIZE 4 MiB: Simple ring chunk 2 MiB; LL: 8 x 256 x 8 x 16 B / 8 / 2 =
//                          16 KiB; LL128: 28 x 256 x 8 x 8 B / 8 x 7/8 = 50,176 B.
//   src/enqueue.cc         getChannnelThreadInfo: the same channel tuning (without halving the threads).
//
// The pipeline fill is checked against AMD's 8 x MI300X all_reduce_perf table (calibration/network
// datasets.json amd-mi300x-rccl-allreduce): the measured time exceeds the asymptote by 22 us at 1 MiB,
// growing to ~60 us at 16 MiB and flat beyond, where S/N reaches 2 MiB, the Simple ring's chunk:
// t = a + 2(N-1)/N S/B + (N-1) min(S/N, 2 MiB)/B fits the 15 rows from 1 MiB to 16 GiB within 3 %
// (B 326.5 GB/s, a 18.5 us). The fill runs at the ring's rate, one chunk at a time: the data supports the
// chunk of one channel crossing the hops, not nChannels chunks at once.
#include "sim/collectives/nccl_channels.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {
namespace {

constexpr NcclLibraryConstants kLibraries[] = {
    {NcclLibrary::nccl, "NCCL", 64, {512, 640, 512}, {8, 8, 64}, {32768.0, 576000.0, 2097152.0}, 524288.0, false},
    {NcclLibrary::rccl, "RCCL", 128, {256, 256, 256}, {8, 8, 64}, {16384.0, 50176.0, 2097152.0}, 524288.0, true},
};

// tuning.cc (v2.27.7-1), GB/s of bus bandwidth per channel; rows Volta, Ampere, Hopper, Blackwell,
// columns 1, 2, 4+ nodes (index2 = nNodes <= 2 ? nNodes - 1 : 2).
constexpr double kPerChMaxRingLL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {2 * 36.7, 2 * 36.7, 2 * 36.7}};
constexpr double kPerChMaxTreeLL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {2 * 36.7, 2 * 36.7, 2 * 29.0}};
constexpr double kPerChMaxTree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {2 * 38.7, 2 * 41.4, 2 * 36.0}};

// tuning.cc's compCapIndex by NVLink generation; other scale-up fabrics (PCIe, xGMI): Ampere's row
// (assumed, as nccl_protocol.cpp's llMaxBw).
int compute_capability_index(std::string_view g) {
  if (g == "nvlink2") return 0;
  if (g == "nvlink4") return 2;
  if (g == "nvlink5") return 3;
  return 1;
}

}  // namespace

const NcclLibraryConstants& nccl_library(NcclLibrary id) {
  return kLibraries[static_cast<std::size_t>(id)];
}

int nccl_channels_for_size(const NcclLibraryConstants& lib, bool ring, NcclProtocol p, double bytes, int ranks,
                           int max_channels) {
  const auto pi = static_cast<std::size_t>(p);
  const double threshold =
      static_cast<double>(lib.thread_threshold[pi]) * (ring && p == NcclProtocol::ll ? std::max(1, ranks) : 1);
  const double per_channel = static_cast<double>(lib.max_threads[pi]) * threshold;
  int nc = std::clamp(max_channels, 1, lib.max_channels);
  while (nc >= 2 && bytes < nc * per_channel)
    --nc;
  return nc;
}

double nccl_per_channel_cap_Bps(std::string_view algorithm, NcclProtocol p, CollectiveKind kind,
                                std::string_view scale_up_generation, int nodes) {
  const int row = compute_capability_index(scale_up_generation);
  const int col = nodes <= 2 ? std::max(1, nodes) - 1 : 2;
  double cap_GBps = 0.0;
  if (algorithm == "ring" && p == NcclProtocol::ll128) cap_GBps = kPerChMaxRingLL128[row][col];
  if (algorithm == "tree" && kind == CollectiveKind::all_reduce) cap_GBps = kPerChMaxTree[row][col];
  if (algorithm == "tree" && p == NcclProtocol::ll128)
    cap_GBps = cap_GBps > 0.0 ? std::min(cap_GBps, kPerChMaxTreeLL128[row][col]) : kPerChMaxTreeLL128[row][col];
  return cap_GBps * 1e9;
}

double pipeline_time_s(int stages, double chunks, double chunk_bytes, double rate_Bps) {
  if (!(rate_Bps > 0.0) || chunks <= 0.0) return 0.0;
  return (chunks + std::max(1, stages) - 1) * chunk_bytes / rate_Bps;
}

double ring_pipeline_fill_s(const NcclLibraryConstants& lib, NcclProtocol p, CollectiveKind kind, int ranks,
                            double bytes, double rank_rate_Bps) {
  if (!lib.ring_pipeline_fill || ranks <= 1 || !(bytes > 0.0) || !(rank_rate_Bps > 0.0)) return 0.0;
  const bool chain = kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce;
  const double chunk_max = chain && p == NcclProtocol::simple ? lib.chain_chunk_bytes_simple
                                                              : lib.ring_chunk_bytes[static_cast<std::size_t>(p)];
  const double step_bytes = chain ? bytes : bytes / ranks;
  const double chunk = std::min(step_bytes, chunk_max);
  // The ring as a pipeline of N stages (its N ranks; the first chunk crosses N-1 hops): what
  // pipeline_time_s adds to its steady state C c / r, (N - 1) c / r.
  return (ranks - 1) * chunk / rank_rate_Bps;
}

}  // namespace clustersim
