#pragma once
// fp8 training as Transformer Engine (and torchao's Float8Linear) runs it (training.precision "fp8"):
// which recipe scales the tensors of the linear layers' GEMMs, and what its quantized copies cost.
// Sources in fp8_recipe.cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/workload_spec.hpp"

namespace clustersim {

struct Fp8RecipeInfo {
  Fp8Recipe recipe;
  std::string_view name;                  // the spec's value of training.fp8_recipe
  Precision gemm_precision;               // dtype of the GEMM operands: the tensor-core path the GPU must have
  double scale_bytes_per_element;         // block scales stored with each quantized element (0: one scale per tensor)
  double weight_scale_bytes_per_element;  // the same for the weights (blockwise: 128x128 blocks)
  bool amax_pass;          // each tensor is read once by an amax kernel before its cast (current scaling)
  bool scale_update;       // one amax-history and scale update kernel after each forward and backward (delayed)
  bool datasheet_only;     // its GEMM rate is the datasheet peak times the fp8 efficiency: not measured yet
  bool block_scaled_gemm;  // GEMMs with per-block scales promoted to CUDA cores (blockwise, DeepGEMM):
                           // the GPU needs gemm_fp8_blockwise_efficiency, which times them
};

const Fp8RecipeInfo& fp8_recipe_info(Fp8Recipe recipe);
const char* to_string(Fp8Recipe recipe);
std::vector<std::string> fp8_recipe_names();
Fp8Recipe fp8_recipe_from_name(const std::string& name);  // a name of fp8_recipe_names()

// The three bf16 tensors each fp8 linear layer quantizes: its input X, its weight W, the gradient of
// its output dY.
enum class Fp8Operand : std::uint8_t { input, weight, grad_output };

// Bytes of one quantized element of an operand in a GEMM: the element and its block scale.
double quantized_element_bytes(Fp8Recipe recipe, Fp8Operand operand);

// Bytes written per element of a bf16 tensor that a cast kernel quantizes: the row-wise and the
// column-wise (transposed) copy, with their block scales (the activations' scales where the recipe
// scales weights otherwise: quantized_copies_bytes(recipe, Fp8Operand::weight)).
double quantized_copies_bytes(Fp8Recipe recipe);
double quantized_copies_bytes(Fp8Recipe recipe, Fp8Operand operand);

// Bytes per element of one bf16 operand moved by the kernels that quantize it: an amax pass before the
// cast (0: none, or fused into the kernel that produced the tensor), the cast kernel(s), and fp8
// transposes copied in the backward (torchao eager: the column-major copies _scaled_mm needs).
struct Fp8CastBytes {
  double amax = 0.0;
  double cast = 0.0;
  double transpose = 0.0;
  double total() const { return amax + cast + transpose; }
};
// `torch_compile`: training.torch_compile (torchao's casts fused by Inductor; only tensorwise depends
// on it).
Fp8CastBytes fp8_cast_bytes(Fp8Recipe recipe, Fp8Operand operand, bool torch_compile);

// The dtype of the linear layers' GEMMs (the recipe's under fp8, else the training precision), and of
// everything else: activations, attention, norms, communication (bf16 under fp8).
Precision linear_gemm_precision(const TrainingSpec& t);
Precision activation_precision(const TrainingSpec& t);

}  // namespace clustersim
