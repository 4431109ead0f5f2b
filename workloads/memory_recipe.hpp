#pragma once
// How a training framework allocates the memory that lives only part of a step: the fp32 main
// gradients (training.grad_buffer), the loss over the vocabulary (training.cross_entropy, also the
// bytes its kernels move) and what selective recompute keeps (training.selective_recompute). Three
// registries, by the names the workload keys take, one set of operations for all three (memory_recipes,
// memory_recipe_names, memory_recipe); equations and sources in memory_recipe.cpp.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/named_table.hpp"

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
  static constexpr std::string_view kind = "gradient buffer recipe";  // in messages
};

struct CrossEntropyRecipe {
  const char* name;
  const char* summary;
  double peak_bytes_per_logit;  // bytes alive at the loss's peak per logit element (s b V / t of them)
  // Bytes the loss's kernels read and write per logit element in the forward and in the backward pass
  // (the per-token loss, maxima and sums not counted): the loss ops' traffic in the generator.
  double forward_bytes_per_logit;
  double backward_bytes_per_logit;
  static constexpr std::string_view kind = "cross-entropy recipe";
};

// What training.recompute "selective" keeps of a layer for the backward pass (training.selective_recompute).
struct SelectiveRecomputeRecipe {
  const char* name;
  const char* summary;
  static constexpr std::string_view kind = "selective recompute recipe";
};

// The recipes of one kind (GradBufferRecipe, CrossEntropyRecipe or SelectiveRecomputeRecipe) in their
// registry's order.
template <class Recipe>
std::span<const Recipe> memory_recipes();
template <>
std::span<const GradBufferRecipe> memory_recipes();
template <>
std::span<const CrossEntropyRecipe> memory_recipes();
template <>
std::span<const SelectiveRecomputeRecipe> memory_recipes();

// Their names: the choices of the workload key.
template <class Recipe>
std::vector<std::string> memory_recipe_names() {
  return names_of(memory_recipes<Recipe>());
}

// The recipe called `name`: one of memory_recipe_names<Recipe>() (the workload parser checks it).
template <class Recipe>
const Recipe& memory_recipe(std::string_view name) {
  return find_named(memory_recipes<Recipe>(), name, Recipe::kind);
}

}  // namespace clustersim
