// nccl_sweep: NCCL collective times over sizes for the GPUs of one node, as clustersim measurement JSON.
//
// One process drives every visible GPU (ncclCommInitAll). For each operation and each size from 8 bytes
// to --max-bytes (default 1 GiB) in steps of 2 (nccl-tests' -b 8 -e 1G -f 2), warm-up calls, then
// `repetitions` calls timed on the host between synchronizations. "bytes" is the per-rank buffer as
// nccl-tests' size column counts it: all_reduce the buffer; all_gather the output (ranks x input);
// reduce_scatter the input (ranks x output); all_to_all the send buffer (ranks chunks); send_recv the
// message (rank i sends to i + 1 and receives from i - 1, as sendrecv_perf). algbw = bytes / time and
// busbw = algbw x 2 (n - 1) / n (all_reduce), (n - 1) / n (all_gather, reduce_scatter, all_to_all),
// 1 (send_recv), nccl-tests' definitions. Records: kernel "collective" (for the network fit of
// sim/network; `clustersim calibrate` skips them), collective, ranks, bytes, time_s, repetitions,
// algbw_GBps, busbw_GBps.
#include <algorithm>
#include <chrono>

#include <nccl.h>

#include "bench_common.hpp"

namespace {

using namespace clustersim_bench;

const char* kUsage =
    "usage: nccl_sweep [--out FILE] [--max-bytes B] [--reps N]\n\n"
    "Times NCCL all_reduce, all_gather, reduce_scatter, all_to_all and send/recv over sizes 8 B .. B\n"
    "(default 1 GiB) across every GPU of this node (one process, ncclCommInitAll; CUDA_VISIBLE_DEVICES\n"
    "selects them) and writes clustersim measurement JSON (calibration/README.md), with nccl-tests'\n"
    "algorithm and bus bandwidths. Needs 2 or more GPUs.\n";

#define CHECK_NCCL(call) BENCH_CHECK_STATUS(call, ncclSuccess, ncclGetErrorString)

struct Operation {
  const char* name;
  double bus_factor_numerator;  // busbw = algbw * numerator * (n - 1) / n, or 1 for send_recv
};
const Operation kOperations[] = {
    {"all_reduce", 2.0}, {"all_gather", 1.0}, {"reduce_scatter", 1.0}, {"all_to_all", 1.0}, {"send_recv", 0.0}};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv, kUsage);
  int n = 0;
  BENCH_CHECK_CUDA(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::fprintf(stderr, "nccl_sweep needs at least 2 GPUs, found %d\n", n);
    return 1;
  }
  const size_t max_bytes = size_t(o.max_bytes > 0 ? o.max_bytes : double(1ull << 30));
  std::vector<int> devices(n);
  for (int i = 0; i < n; ++i)
    devices[i] = i;
  std::vector<ncclComm_t> comms(n);
  CHECK_NCCL(ncclCommInitAll(comms.data(), n, devices.data()));
  std::vector<cudaStream_t> streams(n);
  std::vector<void*> send(n), recv(n);
  for (int i = 0; i < n; ++i) {
    BENCH_CHECK_CUDA(cudaSetDevice(i));
    BENCH_CHECK_CUDA(cudaStreamCreate(&streams[i]));
    BENCH_CHECK_CUDA(cudaMalloc(&send[i], max_bytes));
    BENCH_CHECK_CUDA(cudaMalloc(&recv[i], max_bytes));
    BENCH_CHECK_CUDA(cudaMemset(send[i], 0, max_bytes));
  }
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  std::string device = device_json(0, n);
  device.insert(device.size() - 1, ", \"nccl\": " + json_string(std::to_string(nccl_version)));
  MeasurementWriter writer("nccl_sweep", device);

  auto sync_all = [&] {
    for (int i = 0; i < n; ++i) {
      BENCH_CHECK_CUDA(cudaSetDevice(i));
      BENCH_CHECK_CUDA(cudaStreamSynchronize(streams[i]));
    }
  };
  for (const Operation& op : kOperations) {
    const std::string name = op.name;
    for (size_t bytes = 8; bytes <= max_bytes; bytes *= 2) {
      // elements of the per-rank buffer; all_gather / reduce_scatter / all_to_all split it in n parts
      const bool split = name == "all_gather" || name == "reduce_scatter" || name == "all_to_all";
      const size_t unit = split ? size_t(n) * sizeof(float) : sizeof(float);
      if (bytes < unit || bytes % unit != 0) continue;
      const size_t count = bytes / sizeof(float), part = split ? count / n : count;
      auto call = [&] {
        CHECK_NCCL(ncclGroupStart());
        for (int i = 0; i < n; ++i) {
          if (name == "all_reduce") {
            CHECK_NCCL(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
          } else if (name == "all_gather") {
            CHECK_NCCL(ncclAllGather(send[i], recv[i], part, ncclFloat, comms[i], streams[i]));
          } else if (name == "reduce_scatter") {
            CHECK_NCCL(ncclReduceScatter(send[i], recv[i], part, ncclFloat, ncclSum, comms[i], streams[i]));
          } else if (name == "all_to_all") {
            for (int peer = 0; peer < n; ++peer) {
              CHECK_NCCL(ncclSend(static_cast<char*>(send[i]) + peer * part * sizeof(float), part, ncclFloat, peer,
                                  comms[i], streams[i]));
              CHECK_NCCL(ncclRecv(static_cast<char*>(recv[i]) + peer * part * sizeof(float), part, ncclFloat, peer,
                                  comms[i], streams[i]));
            }
          } else {  // send_recv: a ring of pairs
            CHECK_NCCL(ncclSend(send[i], count, ncclFloat, (i + 1) % n, comms[i], streams[i]));
            CHECK_NCCL(ncclRecv(recv[i], count, ncclFloat, (i + n - 1) % n, comms[i], streams[i]));
          }
        }
        CHECK_NCCL(ncclGroupEnd());
      };
      for (int w = 0; w < 5; ++w)
        call();
      sync_all();
      auto timed = [&](int reps) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < reps; ++r)
          call();
        sync_all();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
      };
      const int reps = repetitions_for(timed(1), o.repetitions, 0.1, 20, 1000);
      const double t = timed(reps);
      const double algbw = double(bytes) / t;
      const double factor = op.bus_factor_numerator > 0 ? op.bus_factor_numerator * (n - 1) / n : 1.0;
      writer.add("\"kernel\": \"collective\", \"collective\": " + json_string(name) +
                 ", \"ranks\": " + std::to_string(n) + ", \"bytes\": " + std::to_string(bytes) +
                 ", \"time_s\": " + number(t) + ", \"repetitions\": " + std::to_string(reps) +
                 ", \"algbw_GBps\": " + number(algbw / 1e9) + ", \"busbw_GBps\": " + number(algbw * factor / 1e9));
      std::fprintf(stderr, "%-15s %12zu bytes  %10.2f us  busbw %8.2f GB/s\n", op.name, bytes, t * 1e6,
                   algbw * factor / 1e9);
    }
  }
  writer.write(o.out);
  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    cudaFree(send[i]);
    cudaFree(recv[i]);
    cudaStreamDestroy(streams[i]);
    ncclCommDestroy(comms[i]);
  }
  return 0;
}
