#include "sim/hardware/precision_support.hpp"

#include <string>

#include "sim/core/error.hpp"
#include "workloads/fp8_recipe.hpp"

namespace clustersim {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names)
    s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The GPU has the recipe's tensor-core path (and, for block-scaled GEMMs, the kernels: a rate for them).
bool runs_recipe(const GpuSpec& gpu, const Fp8RecipeInfo& recipe) {
  if (!gpu.has_tensor_path(recipe.gemm_precision)) return false;
  return !recipe.block_scaled_gemm || gpu.gemm_fp8_blockwise_efficiency > 0.0;
}

}  // namespace

void check_precision_support(const WorkloadSpec& spec, const GpuSpec& gpu) {
  const TrainingSpec& t = spec.training;
  if (spec.is_trace() || t.precision != Precision::fp8) return;
  if (!gpu.has_tensor_path(Precision::fp8)) {
    std::vector<std::string> allowed;
    for (Precision p : training_precisions())
      if (!low_precision(p)) allowed.emplace_back(to_string(p));
    throw SpecError(
        spec.source_file, "/training/precision",
        "the GPU " + gpu.id + " has no fp8 tensor cores: expected one of " + join(allowed) + ", got \"fp8\"");
  }
  const Fp8RecipeInfo& recipe = fp8_recipe_info(t.fp8_recipe);
  if (runs_recipe(gpu, recipe)) return;
  std::vector<std::string> allowed;
  for (const std::string& name : fp8_recipe_names())
    if (runs_recipe(gpu, fp8_recipe_info(fp8_recipe_from_name(name)))) allowed.push_back(name);
  const std::string missing = gpu.has_tensor_path(recipe.gemm_precision)
                                  ? std::string(
                                        "block-scaled fp8 GEMM kernels (gemm_fp8_blockwise_efficiency 0: "
                                        "DeepGEMM runs on Hopper and Blackwell)")
                                  : std::string(to_string(recipe.gemm_precision)) + " tensor cores";
  throw SpecError(spec.source_file, "/training/fp8_recipe",
                  "the GPU " + gpu.id + " has no " + missing + ": expected one of " + join(allowed) +
                      " (the recipes it runs), got \"" + std::string(recipe.name) + "\"");
}

}  // namespace clustersim
