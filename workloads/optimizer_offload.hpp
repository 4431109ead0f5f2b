#pragma once
// Where the optimizer state lives (training.optimizer_offload): the registry of offload modes, what
// each moves between HBM and host memory per step and where the update runs. Sources in
// optimizer_offload.cpp; the generator's ops in transformer_generator.cpp, the memory lines in
// memory_model.cpp, the transfer and update times in sim/hardware/kernel_model.cpp.
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct OptimizerOffload {
  std::string_view name;
  // true: fp32 master weights and moments live in host memory (off the GPU's memory); each step the
  // gradients go to the host, the update runs on the CPU, the 16-bit weights come back.
  bool host_states = false;
  std::string_view source;
};

std::vector<std::string> optimizer_offload_names();
// The mode called `name`: one of optimizer_offload_names() (the workload parser checks it).
const OptimizerOffload& optimizer_offload(std::string_view name);

}  // namespace clustersim
