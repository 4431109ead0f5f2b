// Times the serving iteration model (sim/serving/iteration_model.hpp): its construction (the token
// grids' tables) and one iteration_time call, in ns, for decode batches and chunked-prefill batches.
// Run by hand: bench_serving_iteration [CALLS] (default 2,000,000 per batch).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/serving/iteration_model.hpp"
#include "topologies/cluster_spec.hpp"

namespace {

using clustersim::IterationEntry;
using Clock = std::chrono::steady_clock;

clustersim::ModelSpec llama(bool seventy) {
  clustersim::ModelSpec m;
  m.layers = seventy ? 80 : 32;
  m.hidden = seventy ? 8192 : 4096;
  m.heads = seventy ? 64 : 32;
  m.kv_heads = 8;
  m.ffn_hidden = seventy ? 28672 : 14336;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.activation = "swiglu";
  return m;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run(const char* name, const clustersim::ReplicaConfig& replica, long calls) {
  clustersim::GpuSpec gpu = clustersim::find_gpu("h100-sxm5-80gb", "bench", "");
  clustersim::apply_calibration_profile(gpu);
  const clustersim::ClusterSpec cluster = clustersim::load_cluster_spec("dgx-h100");
  const auto start = Clock::now();
  const auto model = clustersim::make_iteration_model(replica, gpu, cluster);
  const double build_s = seconds_since(start);
  std::vector<IterationEntry> decode(256, IterationEntry{1, 1500});
  std::vector<IterationEntry> chunked(255, IterationEntry{1, 1500});
  chunked.push_back(IterationEntry{512, 1024});
  for (auto* batch : {&decode, &chunked}) {
    double sink = 0.0;
    const auto t0 = Clock::now();
    for (long i = 0; i < calls; ++i) {
      (*batch)[0].context_tokens = 1500 + (i & 1023);
      sink += model->iteration_time(*batch).time_s;
    }
    const double per_call_ns = seconds_since(t0) / double(calls) * 1e9;
    std::printf("%-28s build %6.1f ms  %-34s %8.0f ns/call (%.0f ns/entry)  iteration %.3f ms  [%g]\n", name,
                build_s * 1e3, batch == &decode ? "decode 256 x ctx 1500" : "chunked: 255 decodes + 512-token chunk",
                per_call_ns, per_call_ns / double(batch->size()), model->iteration_time(*batch).time_s * 1e3,
                sink > 0 ? 1.0 : 0.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  clustersim::ReplicaConfig r;
  r.model = llama(false);
  run("Llama-3-8B tp1 H100", r, calls);
  r.model = llama(true);
  r.tp = 4;
  run("Llama-3-70B tp4 H100", r, calls);
  r.tp = 8;
  r.max_batch_tokens = 32768;
  run("Llama-3-70B tp8 32k tokens", r, calls / 4);
  return 0;
}
