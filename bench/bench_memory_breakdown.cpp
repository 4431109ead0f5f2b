// Prints, for every row of a validation dataset, the memory model's lines at the row's peak (GiB per
// GPU): which line makes a row not fit. Run by hand: bench_memory_breakdown DATASET [DATASET...]
#include <cstdio>
#include <exception>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/memory_model.hpp"
#include "sim/validation/validation_dataset.hpp"

namespace {

using namespace clustersim;

GpuSpec gpu_of(const ClusterSpec& cluster) {
  if (!cluster.gpu_inline_json.empty()) return parse_gpu_spec(cluster.gpu_inline_json, cluster.source_file, "/gpu");
  return find_gpu(cluster.gpu_id, cluster.source_file, "/gpu");
}

void print_dataset(const char* name) {
  const ValidationDataset d = load_validation_dataset(name);
  std::printf("# %s (GiB per GPU)\n", d.name.c_str());
  std::printf("%-22s %-44s %5s %-9s %6s %6s %6s %6s %6s %6s %6s %6s %6s %6s %7s %6s %s\n", "id", "config", "stage",
              "phase", "wts", "grads", "optim", "acts", "logits", "trans", "bufs", "wksp", "resv", "ctx", "peak", "cap",
              "fits");
  for (const ValidationCase& c : d.cases) {
    if (!c.workload || !c.cluster) continue;
    WorkloadSpec w = *c.workload;
    resolve_parallelism(w, c.cluster->gpu_count());
    const MemoryFootprint f = estimate_memory(w, gpu_of(*c.cluster));
    const double g = units::kGiB;
    std::printf(
        "%-22s %-44s %5d %-9s %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %7.2f %6.2f %s  [%s rc=%s "
        "sp=%d zero=%d mb=%d nmb=%ld %s %s %s]\n",
        c.id.c_str(), c.label.c_str(), f.stage, to_string(f.phase), f.weights_bytes / g, f.gradients_bytes / g,
        f.optimizer_bytes / g, f.activations_bytes / g, f.logits_bytes / g, f.transient_bytes / g,
        f.communication_buffers_bytes / g, f.workspace_bytes / g, f.allocator_reserve_bytes / g,
        f.cuda_context_bytes / g, f.peak_bytes / g, f.capacity_bytes / g, f.fits ? "yes" : "NO",
        to_string(w.training.precision), w.training.recompute.c_str(), w.parallelism.sequence_parallel ? 1 : 0,
        w.parallelism.zero_stage, w.training.micro_batch, long(w.micro_batches()), w.training.effective_stack().c_str(),
        w.training.grad_buffer.c_str(), w.training.cross_entropy.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    for (int i = 1; i < argc; ++i)
      print_dataset(argv[i]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_memory_breakdown: %s\n", e.what());
    return 2;
  }
  return 0;
}
