// fp8 training as Transformer Engine runs it (workloads/fp8_recipe.cpp, the fp8 part of
// transformer_generator.cpp): which GEMMs run in fp8, the per-tensor cast / amax kernels and their
// bytes, delayed vs current scaling, weight-cast caching, the step time against bf16, the recipe
// checked against the GPU, the fp8 weight copies in memory, and the fp8 GEMM rate on H100.
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "../transformer_fixture.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/hardware/memory_model.hpp"
#include "sim/hardware/precision_support.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

using testing::spec_error_of;

// One GPU, no parallelism: h 1024, 8 heads, ffn 4096, seq 512, micro-batch 2 (T = 1024 tokens),
// 2 layers, global batch 6 = 3 micro-batches.
WorkloadSpec model(Precision p, double hidden = 1024, int layers = 2) {
  WorkloadSpec s = testing::transformer_workload("fp8",
                                                 {.layers = layers,
                                                  .hidden = static_cast<int>(hidden),
                                                  .heads = 8,
                                                  .ffn_hidden = static_cast<int>(4 * hidden),
                                                  .seq_len = 512,
                                                  .vocab = 1024},
                                                 6, 2);
  s.training.precision = p;
  s.parallelism.dp = 1;
  return s;
}

constexpr double kT = 1024.0;  // tokens per micro-batch

const OpTable& ops_of(const ExecutionGraph& g) {
  return g.classes().at(0).ops;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The first op named `name` (asserts there is one).
OpId find(const OpTable& ops, std::string_view name) {
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.name(i) == name) return i;
  ADD_FAILURE() << "no op " << name;
  return 0;
}

// One step (one GPU) of the fp8 workload `s` under the recipe `recipe`.
ExecutionGraph step_under(WorkloadSpec s, Fp8Recipe recipe) {
  s.training.fp8_recipe = recipe;
  return generate_transformer_training(s, 1);
}

int count(const OpTable& ops, std::string_view name) {
  int n = 0;
  for (OpId i = 0; i < ops.size(); ++i)
    n += ops.name(i) == name ? 1 : 0;
  return n;
}

bool linear_gemm(std::string_view name) {
  for (const char* l : {".qkv", ".attn_out", ".mlp_up", ".mlp_down"})
    for (const char* suffix : {"", ".dgrad", ".wgrad"})
      if (ends_with(name, std::string(l) + suffix)) return true;
  return false;
}

bool fp8_kernel(std::string_view name) {  // casts, amax passes, scale updates, torchao's eager transposes
  return name.find(".cast_") != std::string_view::npos || name.find(".amax_") != std::string_view::npos ||
         ends_with(name, "fp8.scale_update") || ends_with(name, ".fp8_transpose");
}

TEST(Fp8Training, OnlyTheLinearLayersGemmsRunInFp8) {
  const ExecutionGraph g = generate_transformer_training(model(Precision::fp8), 1);
  const OpTable& ops = ops_of(g);
  int fp8_gemms = 0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) != OpKind::compute) continue;
    const std::string_view name = ops.name(i);
    if (ops.kernel(i) == KernelClass::gemm && linear_gemm(name)) {
      EXPECT_EQ(ops.precision(i), Precision::fp8) << name;
      ++fp8_gemms;
    } else if (ops.kernel(i) == KernelClass::optimizer) {
      EXPECT_EQ(ops.precision(i), Precision::fp32) << name;
    } else {
      // attention, softmax/loss, norms, activations, residuals, the output layer, the casts: bf16
      EXPECT_EQ(ops.precision(i), Precision::bf16) << name;
    }
  }
  // 4 linear layers x (forward, dgrad, wgrad) x 2 layers x 3 micro-batches
  EXPECT_EQ(fp8_gemms, 4 * 3 * 2 * 3);
  EXPECT_EQ(ops.precision(find(ops, "fwd.attention")), Precision::bf16);
  EXPECT_EQ(ops.precision(find(ops, "fwd.logits")), Precision::bf16);
  EXPECT_EQ(ops.precision(find(ops, "bwd.logits.wgrad")), Precision::bf16);
  EXPECT_EQ(ops.precision(find(ops, "fwd.ln1")), Precision::bf16);
  EXPECT_EQ(ops.kernel(find(ops, "optimizer.adam")), KernelClass::optimizer);
}

TEST(Fp8Training, CastKernelsAndFp8GemmBytesArePerTensor) {
  const double h = 1024, f = 4096;
  const ExecutionGraph g = generate_transformer_training(model(Precision::fp8), 1);
  const OpTable& ops = ops_of(g);
  // a cast-transpose reads the bf16 tensor (2 bytes) and writes the fp8 copy and its transpose (1 + 1)
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.qkv.cast_input")), kT * h * 4.0);      // X
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.qkv.cast_weight")), h * 3 * h * 4.0);  // W
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "bwd.qkv.cast_grad")), kT * 3 * h * 4.0);   // dY
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.mlp_down.cast_input")), kT * f * 4.0);
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.mlp_down.cast_weight")), f * h * 4.0);
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "bwd.mlp_down.cast_grad")), kT * h * 4.0);
  // the fp8 GEMM reads 1-byte operands and writes bf16
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.qkv")), (kT * h + h * 3 * h) * 1.0 + kT * 3 * h * 2.0);
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "bwd.qkv.wgrad")), (h * kT + kT * 3 * h) * 1.0 + h * 3 * h * 2.0);
  // delayed scaling (the default): the amax is taken inside the cast, no amax pass; one history
  // update per forward and backward unit: 2 layers x 4 GEMMs x slots x 1024 fp32, read and written
  EXPECT_EQ(count(ops, "fwd.qkv.amax_input"), 0);
  EXPECT_EQ(count(ops, "fwd.fp8.scale_update"), 3);
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.fp8.scale_update")), 2 * 4 * 3 * 1024.0 * 4 * 2);
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "bwd.fp8.scale_update")), 2 * 4 * 2 * 1024.0 * 4 * 2);
  // bf16: no cast kernels at all
  const ExecutionGraph b = generate_transformer_training(model(Precision::bf16), 1);
  for (OpId i = 0; i < ops_of(b).size(); ++i)
    EXPECT_FALSE(fp8_kernel(ops_of(b).name(i))) << ops_of(b).name(i);
}

TEST(Fp8Training, CurrentScalingAddsAnAmaxPassBeforeEachCast) {
  const ExecutionGraph gd = step_under(model(Precision::fp8), Fp8Recipe::delayed);
  const ExecutionGraph gc = step_under(model(Precision::fp8), Fp8Recipe::current);
  const OpTable& d = ops_of(gd);
  const OpTable& c = ops_of(gc);
  int casts = 0, amaxes = 0;
  for (OpId i = 0; i < c.size(); ++i) {
    const std::string_view name = c.name(i);
    if (name.find(".cast_") != std::string_view::npos) {
      ++casts;
      // the op just before a cast is the amax pass over the same tensor: it reads it once (2 bytes)
      ASSERT_GT(i, 0u);
      std::string amax(name);
      amax.replace(amax.find(".cast_"), 6, ".amax_");
      EXPECT_EQ(c.name(i - 1), amax);
      EXPECT_DOUBLE_EQ(c.bytes(i - 1), c.bytes(i) / 4.0 * 2.0);
    }
    amaxes += name.find(".amax_") != std::string_view::npos ? 1 : 0;
  }
  EXPECT_EQ(amaxes, casts);
  EXPECT_EQ(count(c, "fwd.fp8.scale_update"), 0);  // no history
  // the same casts and GEMMs otherwise
  EXPECT_EQ(count(c, "fwd.qkv.cast_input"), count(d, "fwd.qkv.cast_input"));
  EXPECT_DOUBLE_EQ(c.bytes(find(c, "fwd.qkv")), d.bytes(find(d, "fwd.qkv")));
}

// torchao's Float8Linear, dynamic tensorwise scaling (fp8_recipe.cpp, torchao @ eab345c): bytes per
// element of each operand, compiled (roofline_utils.py) and eager (the eager kernels of its source).
TEST(Fp8Training, TensorwiseCastsMoveTorchaosBytesCompiledOrEager) {
  const double h = 1024, f = 4096;
  WorkloadSpec s = model(Precision::fp8);
  s.training.fp8_recipe = Fp8Recipe::tensorwise;
  s.training.fp8_weight_cache = false;
  s.training.torch_compile = true;
  const ExecutionGraph gc = generate_transformer_training(s, 1);
  const OpTable& c = ops_of(gc);
  // compiled: X's and dY's amax fused into the kernels that produce them; W's read once (2 bytes);
  // one cast kernel reads bf16 (2), writes row- and column-major fp8 (1 + 1), reads fp8 once more (1)
  EXPECT_EQ(count(c, "fwd.qkv.amax_input"), 0);
  EXPECT_EQ(count(c, "bwd.qkv.amax_grad"), 0);
  EXPECT_DOUBLE_EQ(c.bytes(find(c, "fwd.qkv.cast_input")), kT * h * 5.0);
  EXPECT_DOUBLE_EQ(c.bytes(find(c, "fwd.qkv.amax_weight")), h * 3 * h * 2.0);
  EXPECT_DOUBLE_EQ(c.bytes(find(c, "fwd.qkv.cast_weight")), h * 3 * h * 5.0);
  EXPECT_DOUBLE_EQ(c.bytes(find(c, "bwd.mlp_down.cast_grad")), kT * h * 5.0);
  EXPECT_EQ(count(c, "fwd.fp8.scale_update"), 0);     // no amax history
  EXPECT_EQ(count(c, "bwd.qkv.fp8_transpose"), 0);    // the cast writes both layouts
  EXPECT_EQ(count(c, "fwd.qkv.cast_weight"), 2 * 3);  // FSDP: cast every micro-batch
  // eager: abs + max (2 + 2 + 2), to(float32) / mul / clamp / to(float8) (6 + 8 + 8 + 5), and in the
  // backward one fp8 transposed copy (1 + 1) each of dY, X and W
  s.training.torch_compile = false;
  const ExecutionGraph ge = generate_transformer_training(s, 1);
  const OpTable& e = ops_of(ge);
  EXPECT_DOUBLE_EQ(e.bytes(find(e, "fwd.qkv.amax_input")), kT * h * 6.0);
  EXPECT_DOUBLE_EQ(e.bytes(find(e, "fwd.qkv.cast_input")), kT * h * 27.0);
  EXPECT_DOUBLE_EQ(e.bytes(find(e, "bwd.qkv.amax_grad")), kT * 3 * h * 6.0);
  // qkv (column-parallel): dY T x 3h, X T x h, W h x 3h; mlp_down (row-parallel): dY T x h, X T x f, W f x h
  EXPECT_DOUBLE_EQ(e.bytes(find(e, "bwd.qkv.fp8_transpose")), 2.0 * (kT * 3 * h + kT * h + h * 3 * h));
  EXPECT_DOUBLE_EQ(e.bytes(find(e, "bwd.mlp_down.fp8_transpose")), 2.0 * (kT * h + kT * f + f * h));
  EXPECT_EQ(count(e, "bwd.qkv.fp8_transpose"), 2 * 3);
  // the fp8 GEMMs are the same either way
  EXPECT_DOUBLE_EQ(e.bytes(find(e, "fwd.qkv")), c.bytes(find(c, "fwd.qkv")));
}

TEST(Fp8Training, WeightsAreCastOncePerStepWhenCached) {
  WorkloadSpec cached = model(Precision::fp8);
  WorkloadSpec uncached = cached;
  uncached.training.fp8_weight_cache = false;
  const ExecutionGraph gc = generate_transformer_training(cached, 1);
  const ExecutionGraph gu = generate_transformer_training(uncached, 1);
  for (const char* w :
       {"fwd.qkv.cast_weight", "fwd.attn_out.cast_weight", "fwd.mlp_up.cast_weight", "fwd.mlp_down.cast_weight"}) {
    EXPECT_EQ(count(ops_of(gc), w), 2) << w;      // 2 layers, first micro-batch only
    EXPECT_EQ(count(ops_of(gu), w), 2 * 3) << w;  // every one of the 3 micro-batches
  }
  // inputs and gradients are cast every micro-batch either way
  EXPECT_EQ(count(ops_of(gc), "fwd.qkv.cast_input"), 2 * 3);
  EXPECT_EQ(count(ops_of(gc), "bwd.qkv.cast_grad"), 2 * 3);
  // full recompute: the recompute pass casts its input again, its weight only when not cached
  cached.training.recompute = uncached.training.recompute = "full";
  EXPECT_EQ(count(ops_of(generate_transformer_training(cached, 1)), "recompute.qkv.cast_weight"), 0);
  EXPECT_EQ(count(ops_of(generate_transformer_training(cached, 1)), "recompute.qkv.cast_input"), 2 * 3);
  EXPECT_EQ(count(ops_of(generate_transformer_training(uncached, 1)), "recompute.qkv.cast_weight"), 2 * 3);
}

GpuSpec calibrated_h100() {
  GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "");
  apply_calibration_profile(gpu);
  return gpu;
}

double op_s(const GpuSpec& gpu, const OpTable& ops, OpId i) {
  return kernel_time(gpu, ops.compute_op(i)).time_s;
}

// A GEMM-bound layer (h 8192, one layer): fp8 is faster than bf16, by less than the GEMM speed-up,
// and the difference is exactly the GEMM time saved minus the modelled cast and amax kernels.
TEST(Fp8Training, Fp8IsFasterThanBf16ByTheGemmSpeedUpLessTheCastTraffic) {
  const GpuSpec gpu = calibrated_h100();
  const ExecutionGraph gb = generate_transformer_training(model(Precision::bf16, 8192, 1), 1);
  const std::pair<Fp8Recipe, bool> cases[] = {{Fp8Recipe::delayed, false},
                                              {Fp8Recipe::current, false},
                                              {Fp8Recipe::tensorwise, true},
                                              {Fp8Recipe::tensorwise, false}};
  for (const auto& [recipe, compiled] : cases) {
    SCOPED_TRACE(std::string(to_string(recipe)) + (compiled ? " compiled" : " eager"));
    WorkloadSpec s = model(Precision::fp8, 8192, 1);
    s.training.fp8_recipe = recipe;
    s.training.torch_compile = compiled;
    if (recipe == Fp8Recipe::tensorwise) s.training.fp8_weight_cache = false;
    const ExecutionGraph gf = generate_transformer_training(s, 1);
    const OpTable& b = ops_of(gb);
    const OpTable& f = ops_of(gf);
    double bf16_s = 0, fp8_s = 0, bf16_linear_s = 0, fp8_linear_s = 0, casts_s = 0, cast_bytes = 0;
    OpId j = 0;  // walks the bf16 ops alongside, skipping the fp8-only kernels
    for (OpId i = 0; i < f.size(); ++i) {
      if (f.kind(i) != OpKind::compute) continue;
      const double t = op_s(gpu, f, i);
      fp8_s += t;
      if (fp8_kernel(f.name(i))) {
        casts_s += t;
        cast_bytes += f.bytes(i);
        continue;
      }
      while (b.kind(j) != OpKind::compute)
        ++j;
      ASSERT_EQ(b.name(j), f.name(i));
      const double tb = op_s(gpu, b, j);
      if (f.kernel(i) == KernelClass::gemm && linear_gemm(f.name(i))) {
        bf16_linear_s += tb;
        fp8_linear_s += t;
      } else {
        EXPECT_DOUBLE_EQ(t, tb) << f.name(i);  // everything else stays bf16: the same time
      }
      ++j;
    }
    for (OpId k = 0; k < b.size(); ++k)
      if (b.kind(k) == OpKind::compute) bf16_s += op_s(gpu, b, k);
    const double gemm_speedup = bf16_linear_s / fp8_linear_s;
    const double step_speedup = bf16_s / fp8_s;
    EXPECT_GT(gemm_speedup, 1.5);
    EXPECT_LT(gemm_speedup, 2.0);  // not the 2x of the datasheet peaks
    if (recipe == Fp8Recipe::tensorwise && !compiled) {
      // torchao's eager casts (35 bytes per element of every operand) cost more than the fp8 GEMMs
      // save on this layer: eager Float8 is slower than bf16 (torchao recommends torch.compile)
      EXPECT_LT(step_speedup, 1.0);
    } else {
      EXPECT_GT(step_speedup, 1.0);
    }
    EXPECT_LT(step_speedup, gemm_speedup);
    EXPECT_NEAR(bf16_s - fp8_s, (bf16_linear_s - fp8_linear_s) - casts_s, 1e-12 * bf16_s);
    EXPECT_GT(cast_bytes, 0.0);
    if (recipe == Fp8Recipe::delayed) {
      // the casts of one micro-batch of this layer (T = 1024, h = 8192, f = 32768): inputs T (h + h + h + f),
      // gradients T (3h + h + 4h + h), weights h (3h + h + 4h) + f h, 4 bytes per element; plus the two scale
      // updates: 4 GEMMs x (3 + 2) slots x 1024 x 8 bytes
      const double h = 8192, ff = 32768;
      const double elements = kT * (3 * h + ff) + kT * (9 * h) + h * 8 * h + ff * h;
      const int micro_batches = 3;
      const double weights = h * 8 * h + ff * h;
      EXPECT_DOUBLE_EQ(cast_bytes,
                       micro_batches * (elements - weights) * 4.0 + weights * 4.0 + micro_batches * 4 * 5 * 1024.0 * 8);
    }
    if (recipe == Fp8Recipe::tensorwise) {
      // torchao, every micro-batch (no weight cache), the same element counts: compiled, X and dY 5 bytes
      // (amax fused into their producer), W 2 + 5; eager, every operand 6 + 27 + 2 (transposed copy)
      const double h = 8192, ff = 32768;
      const double inputs = kT * (3 * h + ff), grads = kT * (9 * h), weights = h * 8 * h + ff * h;
      const double per_micro_batch =
          compiled ? (inputs + grads) * 5.0 + weights * 7.0 : (inputs + grads + weights) * 35.0;
      EXPECT_DOUBLE_EQ(cast_bytes, 3 * per_micro_batch);
    }
  }
}

// h100-device (calibration/validation/data/h100_device.json, measured by the clustersim project on
// one H100 SXM5 80GB, 2026-11-24, cuBLASLt square GEMMs): bf16 8192^3 725 TFLOP/s, fp8 1235-1290.
// Azure's cuBLASLt table (calibration/data/published/microbench.json micro-0022, H100 80GB): fp8 8192^3 1290.1.
// The calibrated model's fp8 rate at 8192^3 is within 6 % of the top of the measured range, and its
// fp8 / bf16 ratio is 1.6-1.8, not the datasheet's 2.
TEST(Fp8Training, Fp8GemmRateOnH100IsAboutOnePointSevenTimesBf16) {
  const GpuSpec gpu = calibrated_h100();
  ComputeOp op;
  op.kernel = KernelClass::gemm;
  op.m = op.n = op.k = 8192;
  op.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  op.precision = Precision::bf16;
  op.bytes = 3.0 * 8192.0 * 8192.0 * 2.0;
  const double bf16_tflops = op.flops / kernel_time(gpu, op).time_s / 1e12;
  op.precision = Precision::fp8;
  op.bytes = 2.0 * 8192.0 * 8192.0 + 8192.0 * 8192.0 * 2.0;
  const double fp8_tflops = op.flops / kernel_time(gpu, op).time_s / 1e12;
  EXPECT_NEAR(fp8_tflops, 1290.0, 0.06 * 1290.0);
  // The measured H100 gives 1.70-1.78 (bf16 725, fp8 1235-1290 at 8192^3). Both run at the clock the
  // power cap allows, fp8 at its lower power per busy cycle (tensor_fp8_power_ratio, fitted on Azure's
  // sustained fp8 table: power_capped_clock.cpp), so fp8 throttles less than bf16: the ratio is within
  // 10 % of the measured range, and the fp8 rate itself within 6 % of the measurement above.
  EXPECT_GT(fp8_tflops / bf16_tflops, 1.70 * 0.9);
  EXPECT_LT(fp8_tflops / bf16_tflops, 1.78 * 1.1);
}

TEST(Fp8Training, TheRecipeMustBeOneTheGpuRuns) {
  WorkloadSpec s = model(Precision::fp8);
  s.source_file = "w.json";
  // fp8 on A100 / V100: no fp8 tensor cores
  for (const char* id : {"a100-sxm4-80gb", "v100-sxm2-32gb"}) {
    const SpecError e = spec_error_of([&] { check_precision_support(s, find_gpu(id, "test", "")); });
    EXPECT_EQ(e.file(), "w.json");
    EXPECT_EQ(e.json_path(), "/training/precision");
    EXPECT_EQ(e.message(), std::string("the GPU ") + id +
                               " has no fp8 tensor cores: expected one of fp32, tf32, fp16, bf16, got \"fp8\"");
  }
  // mxfp8 / nvfp4 on Hopper: no block-scaled tensor cores
  const GpuSpec h100 = find_gpu("h100-sxm5-80gb", "test", "");
  for (Fp8Recipe r : {Fp8Recipe::mxfp8, Fp8Recipe::nvfp4}) {
    s.training.fp8_recipe = r;
    const SpecError e = spec_error_of([&] { check_precision_support(s, h100); });
    EXPECT_EQ(e.json_path(), "/training/fp8_recipe");
    EXPECT_EQ(
        e.message(),
        std::string("the GPU h100-sxm5-80gb has no ") + to_string(r) +
            " tensor cores: expected one of delayed, current, tensorwise, blockwise (the recipes it runs), got \"" +
            to_string(r) + "\"");
  }
  // Blackwell runs all four; Hopper delayed and current
  const GpuSpec b200 = find_gpu("b200", "test", "");
  for (Fp8Recipe r : {Fp8Recipe::delayed, Fp8Recipe::current, Fp8Recipe::mxfp8, Fp8Recipe::nvfp4}) {
    s.training.fp8_recipe = r;
    EXPECT_NO_THROW(check_precision_support(s, b200));
  }
  s.training.fp8_recipe = Fp8Recipe::current;
  EXPECT_NO_THROW(check_precision_support(s, h100));
  // bf16 on A100 is fine
  EXPECT_NO_THROW(check_precision_support(model(Precision::bf16), find_gpu("a100-sxm4-80gb", "test", "")));
}

TEST(Fp8Training, BlockScaledRecipesOnBlackwell) {
  const GpuSpec b200 = find_gpu("b200", "test", "");
  EXPECT_DOUBLE_EQ(b200.peak_flops(Precision::mxfp8), 4500e12);
  EXPECT_DOUBLE_EQ(b200.peak_flops(Precision::nvfp4), 9000e12);
  EXPECT_NE(b200.sources.at("tensor_nvfp4_tflops").find("datasheet-based"), std::string::npos);
  EXPECT_TRUE(fp8_recipe_info(Fp8Recipe::nvfp4).datasheet_only);
  EXPECT_FALSE(fp8_recipe_info(Fp8Recipe::delayed).datasheet_only);
  // cast bytes per element: 2 read + row-wise and column-wise copies with their block scales
  EXPECT_DOUBLE_EQ(quantized_copies_bytes(Fp8Recipe::delayed), 2.0);
  EXPECT_DOUBLE_EQ(quantized_copies_bytes(Fp8Recipe::mxfp8), 2.0 * (1.0 + 1.0 / 32.0));
  EXPECT_DOUBLE_EQ(quantized_copies_bytes(Fp8Recipe::nvfp4), 2.0 * (0.5 + 1.0 / 16.0));
  WorkloadSpec s = model(Precision::fp8);
  s.training.fp8_recipe = Fp8Recipe::nvfp4;
  const ExecutionGraph g = generate_transformer_training(s, 1);
  const OpTable& ops = ops_of(g);
  const OpId qkv = find(ops, "fwd.qkv");
  EXPECT_EQ(ops.precision(qkv), Precision::nvfp4);
  EXPECT_DOUBLE_EQ(ops.bytes(qkv), (kT * 1024 + 1024 * 3072.0) * (0.5 + 1.0 / 16.0) + kT * 3072 * 2.0);
  EXPECT_EQ(count(ops, "fwd.qkv.amax_input"), 2 * 3);  // nvfp4's per-tensor scale needs the global amax
}

// DeepSeek-V3's fine-grained fp8 (fp8_recipe blockwise; arXiv:2412.19437 sec. 3.3.2): one fp32 scale
// per 1x128 tile of activations (X, dY: 4/128 bytes per element) and per 128x128 block of weights
// (4/16384), written by the casts beside the 1-byte elements and read by the GEMMs.
TEST(Fp8Training, BlockwiseCastsAndGemmsCarryTheirTileAndBlockScales) {
  const double h = 1024, f = 4096;
  const double act = 1.0 + 4.0 / 128.0;   // 1.03125 bytes per quantized activation element
  const double wt = 1.0 + 4.0 / 16384.0;  // 1.000244140625 bytes per quantized weight element
  EXPECT_DOUBLE_EQ(quantized_element_bytes(Fp8Recipe::blockwise, Fp8Operand::input), act);
  EXPECT_DOUBLE_EQ(quantized_element_bytes(Fp8Recipe::blockwise, Fp8Operand::grad_output), act);
  EXPECT_DOUBLE_EQ(quantized_element_bytes(Fp8Recipe::blockwise, Fp8Operand::weight), wt);
  EXPECT_DOUBLE_EQ(quantized_copies_bytes(Fp8Recipe::blockwise, Fp8Operand::weight), 2.0 * wt);
  WorkloadSpec s = model(Precision::fp8);
  s.training.fp8_recipe = Fp8Recipe::blockwise;
  const ExecutionGraph g = generate_transformer_training(s, 1);
  const OpTable& ops = ops_of(g);
  // cast-transpose: reads bf16 (2), writes the row-wise and column-wise copies with their scales
  // X (T x h): 1024 x 1024 x (2 + 2 x 1.03125) = 4,259,840 bytes
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.qkv.cast_input")), kT * h * (2.0 + 2.0 * act));
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.qkv.cast_input")), 4259840.0);
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.qkv.cast_weight")), h * 3 * h * (2.0 + 2.0 * wt));
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "bwd.qkv.cast_grad")), kT * 3 * h * (2.0 + 2.0 * act));
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.mlp_down.cast_input")), kT * f * (2.0 + 2.0 * act));
  EXPECT_DOUBLE_EQ(ops.bytes(find(ops, "fwd.mlp_down.cast_weight")), f * h * (2.0 + 2.0 * wt));
  // online scaling inside the cast: no amax pass, no amax history
  EXPECT_EQ(count(ops, "fwd.qkv.amax_input"), 0);
  EXPECT_EQ(count(ops, "fwd.fp8.scale_update"), 0);
  EXPECT_EQ(count(ops, "bwd.fp8.scale_update"), 0);
  // GEMMs: forward X [T x h] W [h x 3h]; dgrad dY [T x 3h] W^T [3h x h]; wgrad X^T [h x T] dY [T x 3h]
  const OpId fwd = find(ops, "fwd.qkv"), dgrad = find(ops, "bwd.qkv.dgrad"), wgrad = find(ops, "bwd.qkv.wgrad");
  EXPECT_DOUBLE_EQ(ops.bytes(fwd), kT * h * act + h * 3 * h * wt + kT * 3 * h * 2.0);
  EXPECT_DOUBLE_EQ(ops.bytes(dgrad), kT * 3 * h * act + 3 * h * h * wt + kT * h * 2.0);
  EXPECT_DOUBLE_EQ(ops.bytes(wgrad), h * kT * act + kT * 3 * h * act + h * 3 * h * 2.0);
  // the linear GEMMs are fp8 and block-scaled; the output layer and attention are not
  for (OpId i : {fwd, dgrad, wgrad}) {
    EXPECT_EQ(ops.precision(i), Precision::fp8);
    EXPECT_TRUE(ops.compute_op(i).fp8_blockwise);
  }
  EXPECT_FALSE(ops.compute_op(find(ops, "fwd.logits")).fp8_blockwise);
  EXPECT_EQ(ops.precision(find(ops, "fwd.logits")), Precision::bf16);
  // delayed scaling: no flag, 1-byte operands
  const ExecutionGraph gd = generate_transformer_training(model(Precision::fp8), 1);
  EXPECT_FALSE(ops_of(gd).compute_op(find(ops_of(gd), "fwd.qkv")).fp8_blockwise);
}

// A GEMM-bound layer (h 8192, one layer) on a calibrated H100: blockwise differs from delayed by
// exactly (1) its GEMMs' scale bytes and promotion cost (the same op timed at
// gemm_fp8_blockwise_efficiency instead of gemm_fp8_efficiency), (2) the scale bytes its casts write,
// and (3) delayed's amax-history updates, which blockwise does not run.
TEST(Fp8Training, BlockwiseDiffersFromDelayedByTheScaleBytesAndThePromotionCost) {
  const GpuSpec gpu = calibrated_h100();
  // DeepGEMM's H800 SXM5 dense GEMM (4096 x 7168 x 16384, 1426 TFLOP/s) / the fp8 peak 1978.9
  EXPECT_NEAR(gpu.gemm_fp8_blockwise_efficiency, 1426.0 / 1978.9, 1e-4);
  GpuSpec promoted = gpu;  // the delayed GEMMs timed at the blockwise efficiency
  promoted.gemm_fp8_efficiency = gpu.gemm_fp8_blockwise_efficiency;
  const ExecutionGraph gd = step_under(model(Precision::fp8, 8192, 1), Fp8Recipe::delayed);
  const ExecutionGraph gb = step_under(model(Precision::fp8, 8192, 1), Fp8Recipe::blockwise);
  const OpTable& od = ops_of(gd);
  const OpTable& ob = ops_of(gb);
  double delayed_s = 0, blockwise_s = 0, scale_update_s = 0, gemm_delta_s = 0, cast_delta_s = 0;
  double cast_extra_bytes = 0, gemm_extra_bytes = 0, blockwise_gemm_s = 0, delayed_gemm_s = 0;
  for (OpId i = 0; i < od.size(); ++i) {
    if (od.kind(i) != OpKind::compute) continue;
    const double t = op_s(gpu, od, i);
    delayed_s += t;
    if (ends_with(od.name(i), "fp8.scale_update")) scale_update_s += t;
  }
  OpId j = 0;  // walks the delayed ops alongside, skipping its scale updates
  for (OpId i = 0; i < ob.size(); ++i) {
    if (ob.kind(i) != OpKind::compute) continue;
    const double t = op_s(gpu, ob, i);
    blockwise_s += t;
    while (od.kind(j) != OpKind::compute || ends_with(od.name(j), "fp8.scale_update"))
      ++j;
    ASSERT_EQ(ob.name(i), od.name(j));
    const double td = op_s(gpu, od, j);
    if (ob.kernel(i) == KernelClass::gemm && linear_gemm(ob.name(i))) {
      ComputeOp same = od.compute_op(j);  // the delayed GEMM with blockwise's bytes, at the promoted rate
      same.bytes = ob.bytes(i);
      EXPECT_DOUBLE_EQ(t, kernel_time(promoted, same).time_s) << ob.name(i);
      gemm_delta_s += t - td;
      gemm_extra_bytes += ob.bytes(i) - od.bytes(j);
      blockwise_gemm_s += t;
      delayed_gemm_s += td;
    } else if (fp8_kernel(ob.name(i))) {
      cast_delta_s += t - td;
      cast_extra_bytes += ob.bytes(i) - od.bytes(j);
    } else {
      EXPECT_DOUBLE_EQ(t, td) << ob.name(i);
    }
    ++j;
  }
  EXPECT_NEAR(blockwise_s - delayed_s, gemm_delta_s + cast_delta_s - scale_update_s, 1e-12 * delayed_s);
  // cast scale bytes, 3 micro-batches (T 1024, h 8192, f 32768): activations (X: T (3h + f), dY: T 9h)
  // 2 copies x 4/128 each, weights (h 8h + f h, cast once per step) 2 copies x 4/16384
  const double h = 8192, ff = 32768;
  const double activations = kT * (3 * h + ff) + kT * (9 * h), weights = h * 8 * h + ff * h;
  EXPECT_DOUBLE_EQ(cast_extra_bytes, 3 * activations * 2.0 * 4.0 / 128.0 + weights * 2.0 * 4.0 / 16384.0);
  // GEMM scale bytes per micro-batch: every operand read once per GEMM; forward and dgrad read X or dY
  // (activation scales) and W (weight scales), wgrad X^T and dY (activation scales)
  const double per_micro_batch = (kT * (3 * h + ff) + kT * (9 * h)) * 4.0 / 128.0 * 2.0 + 2.0 * weights * 4.0 / 16384.0;
  EXPECT_DOUBLE_EQ(gemm_extra_bytes, 3 * per_micro_batch);
  // the promotion costs blockwise's GEMMs at most the efficiency ratio 0.747 / 0.7206 (+3.7 %) here
  EXPECT_GT(blockwise_gemm_s, delayed_gemm_s);
  EXPECT_LT(blockwise_gemm_s / delayed_gemm_s, gpu.gemm_fp8_efficiency / gpu.gemm_fp8_blockwise_efficiency * 1.001);
}

// Blockwise needs DeepGEMM's kernels: Hopper and Blackwell (gemm_fp8_blockwise_efficiency > 0). Ada
// (L4) and CDNA 3 (MI300X) have fp8 tensor cores but no such kernels: /training/fp8_recipe, naming the
// recipes they run.
TEST(Fp8Training, BlockwiseRunsOnHopperAndBlackwellOnly) {
  WorkloadSpec s = model(Precision::fp8);
  s.source_file = "w.json";
  s.training.fp8_recipe = Fp8Recipe::blockwise;
  for (const char* id :
       {"h100-sxm5-80gb", "h100-pcie-80gb", "h200-sxm-141gb", "h200-nvl-141gb", "b200", "b300", "gb200", "gb300"})
    EXPECT_NO_THROW(check_precision_support(s, find_gpu(id, "test", ""))) << id;
  for (const char* id : {"l4", "mi300x"}) {
    const SpecError e = spec_error_of([&] { check_precision_support(s, find_gpu(id, "test", "")); });
    EXPECT_EQ(e.file(), "w.json");
    EXPECT_EQ(e.json_path(), "/training/fp8_recipe");
    EXPECT_EQ(e.message(), std::string("the GPU ") + id +
                               " has no block-scaled fp8 GEMM kernels (gemm_fp8_blockwise_efficiency 0: DeepGEMM "
                               "runs on Hopper and Blackwell): expected one of delayed, current, tensorwise (the "
                               "recipes it runs), got \"blockwise\"");
  }
  // no fp8 at all (A100): the precision is refused first
  const SpecError a100 = spec_error_of([&] { check_precision_support(s, find_gpu("a100-sxm4-80gb", "test", "")); });
  EXPECT_EQ(a100.json_path(), "/training/precision");
}

TEST(Fp8Training, MemoryKeepsTheFp8WeightCopies) {
  const GpuSpec h100 = find_gpu("h100-sxm5-80gb", "test", "");
  const MemoryFootprint b = estimate_memory(model(Precision::bf16), h100);
  const MemoryFootprint f = estimate_memory(model(Precision::fp8), h100);
  // 2 layers x linear parameters (h 1024, ffn 4096, with biases: QKV 3h^2 + 3h, out h^2 + h, up 4h^2 + 4h,
  // down 4h^2 + h) x (fp8 copy + transpose)
  const double h = 1024;
  const double linear = 12 * h * h + 9 * h;
  EXPECT_DOUBLE_EQ(f.weights_bytes - b.weights_bytes, 2 * linear * 2.0);
  EXPECT_DOUBLE_EQ(f.gradients_bytes, b.gradients_bytes);
  EXPECT_DOUBLE_EQ(f.optimizer_bytes, b.optimizer_bytes);
}

TEST(Fp8Training, RecipeKeysParseRoundTripAndNeedFp8) {
  const std::string base =
      R"({"model": {"layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "seq_len": 128, "vocab": 1000},
          "training": {"global_batch": 8, )";
  const WorkloadSpec s = parse_workload_spec(
      base + R"("precision": "fp8", "fp8_recipe": "current", "fp8_weight_cache": false}})", "w.json");
  EXPECT_EQ(s.training.fp8_recipe, Fp8Recipe::current);
  EXPECT_FALSE(s.training.fp8_weight_cache);
  EXPECT_EQ(parse_workload_spec(workload_spec_to_json(s), "w.json").training, s.training);
  const SpecError bad =
      spec_error_of([&] { parse_workload_spec(base + R"("precision": "fp8", "fp8_recipe": "e4m3"}})", "w.json"); });
  EXPECT_EQ(bad.json_path(), "/training/fp8_recipe");
  EXPECT_EQ(bad.message(), "expected one of delayed, current, mxfp8, nvfp4, tensorwise, blockwise, got \"e4m3\"");
  const SpecError not_fp8 =
      spec_error_of([&] { parse_workload_spec(base + R"("precision": "bf16", "fp8_recipe": "delayed"}})", "w.json"); });
  EXPECT_EQ(not_fp8.json_path(), "/training/fp8_recipe");
  EXPECT_EQ(not_fp8.message(), "fp8_recipe applies to precision \"fp8\" only, got precision \"bf16\"");
  // the block-scaled GEMM dtypes are not training precisions
  const SpecError mx = spec_error_of([&] { parse_workload_spec(base + R"("precision": "mxfp8"}})", "w.json"); });
  EXPECT_EQ(mx.message(), "expected one of fp32, tf32, fp16, bf16, fp8, got \"mxfp8\"");
}

}  // namespace
}  // namespace clustersim
