// The offload modes of training.optimizer_offload.
//
//   none  the optimizer state in HBM, the update a GPU kernel (training_state.cpp).
//   cpu   the state in host memory and the update on the CPU, as both frameworks that offer it run it:
//         - DeepSpeed ZeRO-Offload (Ren et al. 2021, "ZeRO-Offload: Democratizing Billion-Scale Model
//           Training", USENIX ATC '21, sec. 4.1-4.2): fp32 master weights and Adam's moments in CPU
//           memory; the gradients are offloaded to the CPU, the CPU runs Adam (CPU-Adam), the updated
//           16-bit parameters are copied back to the GPU;
//         - Megatron-Core's --optimizer-cpu-offload with --optimizer-offload-fraction 1.0
//           (megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py, HybridDeviceOptimizer: the
//           CPU share of the parameters gets CPU copies of its main gradients, torch.optim.AdamW steps
//           on the CPU, the parameters are copied back to the device).
//         Per parameter of the rank's (ZeRO) shard and step: the gradient bytes of the grad buffer
//         down (parameter_state_bytes().gradients), the weight bytes up (.weights), the fused step's
//         bytes (optimizer_step_cost().bytes) through host memory. Not modelled: the overlap both
//         frameworks make of the copies with the backward pass or between parameter groups
//         (ZeRO-Offload's one-step delayed update included): the three parts run one after the other.
#include "workloads/optimizer_offload.hpp"

#include <span>
#include <stdexcept>
#include <string>

#include "sim/core/named_table.hpp"

namespace clustersim {
namespace {

constexpr OptimizerOffload kOffloads[] = {
    {"none", false, "the optimizer state in HBM, updated by a GPU kernel"},
    {"cpu", true,
     "DeepSpeed ZeRO-Offload (Ren et al., USENIX ATC '21) and Megatron-Core --optimizer-cpu-offload "
     "(megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py): state in host memory, update on the CPU"},
};

}  // namespace

std::vector<std::string> optimizer_offload_names() {
  return names_of(std::span<const OptimizerOffload>(kOffloads));
}

const OptimizerOffload& optimizer_offload(std::string_view name) {
  for (const auto& o : kOffloads)
    if (o.name == name) return o;
  // The parser accepts only the names of this table: another is a caller's error, not a default.
  throw std::invalid_argument("optimizer_offload: unknown mode \"" + std::string(name) + "\"");
}

}  // namespace clustersim
