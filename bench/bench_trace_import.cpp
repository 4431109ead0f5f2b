// Speed and memory of importing a PyTorch profiler trace (run by hand: bench/bench_trace_import.py
// writes a ~50 MB trace and runs this). Prints the import's wall time, the process's peak RSS and
// the ops read. Issue 17's target: a 50 MB Kineto trace in <= 5 s and <= 1 GB.
#include <chrono>
#include <cstdio>
#include <exception>

#include <sys/resource.h>

#include "workloads/trace_format.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_trace_import TRACE(.json|.json.gz|directory)\n");
    return 2;
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const clustersim::ExecutionGraph g = clustersim::read_pytorch_trace(argv[1]);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    std::printf("import_wall_s %.3f\npeak_rss_bytes %.0f\nops %zu\nranks %d\n", wall_s,
                static_cast<double>(u.ru_maxrss) * 1024.0, g.op_count(), g.world_size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
