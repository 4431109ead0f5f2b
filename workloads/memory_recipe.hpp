#pragma once
// How a training framework allocates the memory that lives only part of a step: the fp32 main
// gradients (training.grad_buffer) and the loss over the vocabulary (training.cross_entropy, also the
// bytes its kernels move). Two registries, by the names the workload keys take; equations and sources in
// memory_recipe.cpp.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct GradBufferRecipe {
  const char* name;
  const char* summary;
  // true: allocated once before the first step and alive all step; false: each parameter's main
  // gradient is allocated at its first gradient of the step and freed after the optimizer step.
  bool persistent;
  // true: the buffer holds the gradients in the 16-bit parameter dtype (2 bytes in mixed precision),
  // and the optimizer step makes an fp32 copy of its shard; false: fp32 main gradients (4 bytes).
  bool parameter_dtype;
};

struct CrossEntropyRecipe {
  const char* name;
  const char* summary;
  double peak_bytes_per_logit;  // bytes alive at the loss's peak per logit element (s b V / t of them)
  // Bytes the loss's kernels read and write per logit element in the forward and in the backward pass
  // (the per-token loss, maxima and sums not counted): the loss ops' traffic in the generator.
  double forward_bytes_per_logit;
  double backward_bytes_per_logit;
};

// What training.recompute "selective" keeps of a layer for the backward pass (training.selective_recompute).
struct SelectiveRecomputeRecipe {
  const char* name;
  const char* summary;
};

std::span<const GradBufferRecipe> grad_buffer_recipes();
std::vector<std::string> grad_buffer_names();
// The recipe called `name`: one of grad_buffer_names() (the workload parser checks it).
const GradBufferRecipe& grad_buffer_recipe(std::string_view name);

std::span<const CrossEntropyRecipe> cross_entropy_recipes();
std::vector<std::string> cross_entropy_names();
const CrossEntropyRecipe& cross_entropy_recipe(std::string_view name);

std::span<const SelectiveRecomputeRecipe> selective_recompute_recipes();
std::vector<std::string> selective_recompute_names();

}  // namespace clustersim
