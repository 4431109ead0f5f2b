// fp8 recipes of Transformer Engine (TE; NVIDIA, github.com/NVIDIA/TransformerEngine, "Using FP8 with
// Transformer Engine" and transformer_engine/common/recipe). Under fp8, TE runs only the linear layers'
// GEMMs in fp8 (forward, data gradient, weight gradient); attention, softmax, norms, activations, the
// loss, the optimizer and communication stay in bf16 / fp32 (Megatron-Core's output layer is not a TE
// module: it stays bf16 too). Every fp8 GEMM reads quantized copies of its two operands:
//   forward   Y  = X W      X (tokens x in) and W (in x out) cast to fp8
//   dgrad     dX = dY W^T   dY (tokens x out) cast to fp8 (E5M2 in the hybrid format), W^T from the cast of W
//   wgrad     dW = X^T dY   X^T and dY^T: the column-wise copies written by the casts of X and dY
// so each of X, W and dY is cast once, by a cast-transpose kernel that reads the bf16 tensor (2 bytes
// per element) and writes its row-wise and column-wise copies (quantized_copies_bytes). The cast of W
// runs on the first micro-batch of the step only when the weights are cached (TE's
// is_first_microbatch, which Megatron-Core passes): the weights do not change between micro-batches.
//
// Recipes (element: bytes of one quantized element; scales: bytes of block scale per element):
//   delayed  fp8 E4M3/E5M2, one fp32 scale per tensor from the amax history of earlier steps (TE's
//            DelayedScaling, its default; NeMo: amax_history_len 1024, amax_compute_algo "max"). The
//            cast kernel records the tensor's amax as it writes; one fused amax-history and scale
//            update kernel runs after each forward and each backward unit: it reads and writes the
//            history of every fp8 tensor slot (3 per GEMM in the forward: input, weight, output; 2 in
//            the backward: output and input gradients), kAmaxHistory fp32 each.
//            element 1, scales 0.
//   current  fp8 with the scale of the tensor being cast (TE 2.x Float8CurrentScaling): an amax
//            kernel reads each tensor (2 bytes per element) before its cast; no history.
//            element 1, scales 0.
//   mxfp8    OCP Microscaling MXFP8 (OCP MX spec v1.0): blocks of 32 elements share an E8M0 scale
//            computed inside the cast kernel (TE 2.x MXFP8BlockScaling); Blackwell tensor cores only.
//            element 1, scales 1/32. Row-wise and column-wise copies are quantized separately.
//   nvfp4    NVFP4: E2M1 elements in blocks of 16 with an E4M3 scale each, plus one fp32 scale per
//            tensor from its global amax (NVIDIA, "Pretraining Large Language Models with NVFP4",
//            arXiv:2509.25149, 2025; TE 2.8 NVFP4BlockScaling): an amax pass then the cast; Blackwell
//            only. element 0.5, scales 1/16. (The paper's random Hadamard transforms of the wgrad
//            inputs and the layers it keeps in bf16 are not modelled.)
// mxfp8 and nvfp4 GEMMs run at the datasheet peak of their dtype times the fp8 GEMM efficiency of the
// GPU: flagged datasheet_only until measured.
#include "workloads/fp8_recipe.hpp"

namespace clustersim {
namespace {

constexpr Fp8RecipeInfo kRecipes[] = {
    {Fp8Recipe::delayed, "delayed", Precision::fp8, 0.0, false, true, false},
    {Fp8Recipe::current, "current", Precision::fp8, 0.0, true, false, false},
    {Fp8Recipe::mxfp8, "mxfp8", Precision::mxfp8, 1.0 / 32.0, false, false, true},
    {Fp8Recipe::nvfp4, "nvfp4", Precision::nvfp4, 1.0 / 16.0, true, false, true},
};

}  // namespace

const Fp8RecipeInfo& fp8_recipe_info(Fp8Recipe recipe) {
  for (const auto& r : kRecipes)
    if (r.recipe == recipe) return r;
  return kRecipes[0];  // unreachable: every enumerator is in the table
}

const char* to_string(Fp8Recipe recipe) {
  return fp8_recipe_info(recipe).name.data();
}

std::vector<std::string> fp8_recipe_names() {
  std::vector<std::string> names;
  for (const auto& r : kRecipes)
    names.emplace_back(r.name);
  return names;
}

Fp8Recipe fp8_recipe_from_name(const std::string& name) {
  for (const auto& r : kRecipes)
    if (r.name == name) return r.recipe;
  return Fp8Recipe::delayed;  // unreachable: the parser checked the name against fp8_recipe_names()
}

double quantized_copies_bytes(Fp8Recipe recipe) {
  const Fp8RecipeInfo& r = fp8_recipe_info(recipe);
  return 2.0 * (bytes_per_element(r.gemm_precision) + r.scale_bytes_per_element);
}

Precision linear_gemm_precision(const TrainingSpec& t) {
  return t.precision == Precision::fp8 ? fp8_recipe_info(t.fp8_recipe).gemm_precision : t.precision;
}

Precision activation_precision(const TrainingSpec& t) {
  return t.precision == Precision::fp8 ? Precision::bf16 : t.precision;
}

}  // namespace clustersim
