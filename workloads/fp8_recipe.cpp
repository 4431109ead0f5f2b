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
//   tensorwise  torchao's Float8Linear with dynamic tensorwise scaling (torchtitan's Float8, its
//            default recipe; torchao @ eab345c, the commit of torchtitan's Dec 2024 performance runs):
//            every operand (X, W, dY) gets the scale of its own current amax; fp8 E4M3 forward, E5M2
//            for dY; one fp32 scale per tensor. torchtitan keeps the output layer in bf16
//            (filter_fqns "output"). Under FSDP the weight is cast from the all-gathered bf16 weight
//            in every forward (and recompute) pass: no cache across micro-batches
//            (training.fp8_weight_cache false in the torchtitan rows). Bytes per element of each
//            operand (fp8_cast_bytes):
//              torch.compile (training.torch_compile): torchao/float8/roofline_utils.py @ eab345c,
//                get_tensor_memory_traffic_bytes("dynamic", model_torch_compile_limitations=True) as
//                get_float8_mem_sympy applies it: the amax pass reads the bf16 tensor (2) except where
//                Inductor fuses it into the kernel that produced the tensor (X and dY: fuse_with_prev
//                True; W: False); one cast kernel reads bf16 (2) and writes the row-major and the
//                column-major fp8 copies (2 x 1), plus the extra fp8 read of the compiled kernel
//                (pytorch issue 130015: 1). X, dY: 0 + 5; W: 2 + 5.
//              eager: torchao/float8/float8_utils.py tensor_to_amax = torch.max(torch.abs(x)) (abs:
//                reads 2, writes 2; max: reads 2) = 6; float8_tensor.py _ToFloat8ConstrFunc:
//                tensor.to(float32) (2 + 4), * scale (4 + 4), to_fp8_saturated's clamp (4 + 4) and
//                .to(float8) (4 + 1) = 27, the row-major copy only; float8_ops.py preprocess_addmm
//                copies an operand that is not in the layout _scaled_mm wants (a_data.contiguous(),
//                b_data.t().contiguous().t(): reads 1, writes 1): W for dgrad (dY @ W), dY^T and X for
//                wgrad (dY^T @ X, float8_linear.py manual_float8_matmul_with_args_in_float8): 2 each.
//   blockwise  DeepSeek-V3's fine-grained fp8 (DeepSeek-AI, "DeepSeek-V3 Technical Report",
//            arXiv:2412.19437, sec. 3.3.2): E4M3 for every operand (dY included), scaled per 1x128 tile
//            of activations (X, dY: one fp32 scale per token and 128 channels, 4/128 bytes per element)
//            and per 128x128 block of weights (4/16384), from the current amax of the tile computed
//            inside the cast kernel (online quantization, no history, no amax pass). The backward's
//            column-wise copies of X and dY (the 128x1 tiles of wgrad) are quantized separately; W^T
//            keeps its 128x128 blocks. The paper's casts are fused with the kernel before the GEMM
//            (the cast of the attention output before attn_out, of the SwiGLU output before mlp_down,
//            of the MoE dispatch input before the all-to-all); the model keeps TE's separate
//            cast-transpose kernel per operand (2 bytes read, both copies written) as for the other
//            recipes (not modelled: that fusion, which saves the cast's 2-byte read). The GEMMs promote
//            the tensor cores' partial sums to fp32 CUDA-core registers every 128 K-elements (4 WGMMAs)
//            and apply the scales there: their rate is the GPU's gemm_fp8_blockwise_efficiency
//            (DeepGEMM's published H800 TFLOP/s against the catalogue's fp8 peak; Hopper and Blackwell
//            only). What stays in bf16 / fp32 (paper): embedding, output head, MoE gating, norms,
//            attention (as for the other recipes here). element 1, scales 4/128 (weights 4/16384).
// mxfp8 and nvfp4 GEMMs run at the datasheet peak of their dtype times the fp8 GEMM efficiency of the
// GPU: flagged datasheet_only until measured.
#include "workloads/fp8_recipe.hpp"

namespace clustersim {
namespace {

// blockwise: one fp32 scale (4 bytes) per 1x128 activation tile and per 128x128 weight block.
constexpr double kFp32ScaleBytes = 4.0;
constexpr double kActivationTileElements = 128.0;
constexpr double kWeightBlockElements = 128.0 * 128.0;

constexpr Fp8RecipeInfo kRecipes[] = {
    {Fp8Recipe::delayed, "delayed", Precision::fp8, 0.0, 0.0, false, true, false, false},
    {Fp8Recipe::current, "current", Precision::fp8, 0.0, 0.0, true, false, false, false},
    {Fp8Recipe::mxfp8, "mxfp8", Precision::mxfp8, 1.0 / 32.0, 1.0 / 32.0, false, false, true, false},
    {Fp8Recipe::nvfp4, "nvfp4", Precision::nvfp4, 1.0 / 16.0, 1.0 / 16.0, true, false, true, false},
    {Fp8Recipe::tensorwise, "tensorwise", Precision::fp8, 0.0, 0.0, true, false, false, false},
    {Fp8Recipe::blockwise, "blockwise", Precision::fp8, kFp32ScaleBytes / kActivationTileElements,
     kFp32ScaleBytes / kWeightBlockElements, false, false, false, true},
};

constexpr double kBf16Bytes = 2.0;
constexpr double kFp8Bytes = 1.0;
// torchao tensorwise, compiled (roofline_utils.py @ eab345c): read bf16, write row- and column-major
// fp8, and the compiled kernel's extra fp8 read.
constexpr double kCompiledCast = kBf16Bytes + 2.0 * kFp8Bytes + kFp8Bytes;
// torchao tensorwise, eager: abs (2 + 2) and max (2); to(float32) (2 + 4), mul (4 + 4), clamp (4 + 4),
// to(float8) (4 + 1); one fp8 transpose copy (1 + 1).
constexpr double kEagerAmax = 2.0 * kBf16Bytes + kBf16Bytes;
constexpr double kEagerCast = (kBf16Bytes + 4.0) + (4.0 + 4.0) + (4.0 + 4.0) + (4.0 + kFp8Bytes);
constexpr double kEagerTranspose = 2.0 * kFp8Bytes;

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

double quantized_element_bytes(Fp8Recipe recipe, Fp8Operand operand) {
  const Fp8RecipeInfo& r = fp8_recipe_info(recipe);
  return bytes_per_element(r.gemm_precision) +
         (operand == Fp8Operand::weight ? r.weight_scale_bytes_per_element : r.scale_bytes_per_element);
}

double quantized_copies_bytes(Fp8Recipe recipe) {
  return quantized_copies_bytes(recipe, Fp8Operand::input);
}

double quantized_copies_bytes(Fp8Recipe recipe, Fp8Operand operand) {
  return 2.0 * quantized_element_bytes(recipe, operand);
}

Fp8CastBytes fp8_cast_bytes(Fp8Recipe recipe, Fp8Operand operand, bool torch_compile) {
  const Fp8RecipeInfo& r = fp8_recipe_info(recipe);
  if (recipe != Fp8Recipe::tensorwise)  // Transformer Engine: [amax pass], one cast-transpose kernel
    return {r.amax_pass ? kBf16Bytes : 0.0, kBf16Bytes + quantized_copies_bytes(recipe, operand), 0.0};
  if (!torch_compile) return {kEagerAmax, kEagerCast, kEagerTranspose};
  const bool amax_fused_with_producer = operand != Fp8Operand::weight;
  return {amax_fused_with_producer ? 0.0 : kBf16Bytes, kCompiledCast, 0.0};
}

Precision linear_gemm_precision(const TrainingSpec& t) {
  return t.precision == Precision::fp8 ? fp8_recipe_info(t.fp8_recipe).gemm_precision : t.precision;
}

Precision activation_precision(const TrainingSpec& t) {
  return t.precision == Precision::fp8 ? Precision::bf16 : t.precision;
}

}  // namespace clustersim
