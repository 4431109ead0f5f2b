// Eager RMSNorm and rotary embedding (stack fused.rmsnorm / fused.rope false): the bytes per element
// worked by hand from torchtitan's source, and the ops the generator emits for a Llama-style model
// (and not for a GPT-style one).
#include "workloads/eager_pytorch_ops.hpp"

#include <string>

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

TEST(EagerPytorchOps, RmsNormBytesByHandForBf16) {
  // forward, bf16 x: float() 2+4, pow 4+4, mean 4, mul rsqrt 4+4, type_as 4+2, mul weight 2+2 = 36
  EXPECT_DOUBLE_EQ(eager_rmsnorm_forward_bytes_per_element(2.0), 36.0);
  // backward: weight 2+2 + 2+2+2 + 2 = 12, type_as 6, mul rsqrt 8 + 12 + 4 = 24, mean 4, pow 12,
  // accumulate 12, float() 6 = 76
  EXPECT_DOUBLE_EQ(eager_rmsnorm_backward_bytes_per_element(2.0), 76.0);
  // T x h = 16384 x 4096 (torchtitan's 8B at micro-batch 2 x 8192): 2.416 GB forward, 5.100 GB backward
  const double elements = 16384.0 * 4096.0;
  EXPECT_DOUBLE_EQ(eager_rmsnorm_forward_bytes_per_element(2.0) * elements, 2415919104.0);
  EXPECT_DOUBLE_EQ(eager_rmsnorm_backward_bytes_per_element(2.0) * elements, 5100273664.0);
  // fp32 activations: every cast still moves its bytes: 4 x 4 + 28 and 8 x 4 + 60
  EXPECT_DOUBLE_EQ(eager_rmsnorm_forward_bytes_per_element(4.0), 44.0);
  EXPECT_DOUBLE_EQ(eager_rmsnorm_backward_bytes_per_element(4.0), 92.0);
}

TEST(EagerPytorchOps, RopeBytesByHandForBf16) {
  // float() 2+4, complex multiply 4+4, type_as 4+2
  EXPECT_DOUBLE_EQ(eager_rope_bytes_per_element(2.0), 20.0);
}

TEST(EagerPytorchOps, SwigluBytesByHandForBf16) {
  // forward: F.silu(a) read a 2, write s 2; s * u read 2 + 2, write 2 = 10 (fused: read a, u, write y = 6)
  EXPECT_DOUBLE_EQ(eager_swiglu_forward_bytes_per_element(2.0), 10.0);
  // backward: ds = g * u 2+2+2, du = g * s 2+2+2, silu_backward(ds, a) 2+2+2 = 18 (fused: 3 reads + 2 writes = 10)
  EXPECT_DOUBLE_EQ(eager_swiglu_backward_bytes_per_element(2.0), 18.0);
  // torchtitan's 8B at micro-batch 2 x 8192, ffn 14336: T x f = 16384 x 14336 = 234,881,024 elements;
  // 4 + 8 more bytes per element than fused: 0.94 GB forward (and again in the selective recompute),
  // 1.88 GB backward per layer
  const double elements = 16384.0 * 14336.0;
  EXPECT_DOUBLE_EQ((eager_swiglu_forward_bytes_per_element(2.0) - 6.0) * elements, 939524096.0);
  EXPECT_DOUBLE_EQ((eager_swiglu_backward_bytes_per_element(2.0) - 10.0) * elements, 1879048192.0);
  // fp32 activations: 5 x 4 and 9 x 4
  EXPECT_DOUBLE_EQ(eager_swiglu_forward_bytes_per_element(4.0), 20.0);
  EXPECT_DOUBLE_EQ(eager_swiglu_backward_bytes_per_element(4.0), 36.0);
}

WorkloadSpec small_model(const std::string& activation) {
  WorkloadSpec s = testing::transformer_workload(
      "small", {.layers = 2, .hidden = 256, .heads = 4, .ffn_hidden = 512, .seq_len = 128, .vocab = 1000}, 2, 2);
  s.model.kv_heads = 2;
  s.model.activation = activation;
  s.parallelism.dp = 1;
  return s;
}

struct Found {
  int count = 0;
  double bytes = 0.0;
  KernelClass kernel = KernelClass::gemm;
};
Found find(const ExecutionGraph& g, const std::string& name) {
  const OpTable& ops = g.classes().at(0).ops;
  Found f;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.name(i) != name) continue;
    ++f.count;
    f.bytes = ops.bytes(i);
    f.kernel = ops.kernel(i);
  }
  return f;
}

TEST(EagerPytorchOps, GeneratorEmitsEagerNormAndRopeForLlamaOnly) {
  StackProfile eager = find_software_stack("pytorch-fsdp2");
  ASSERT_FALSE(eager.fused.rmsnorm);
  ASSERT_FALSE(eager.fused.rope);
  StackProfile fused = eager;
  fused.fused.rmsnorm = true;
  fused.fused.rope = true;

  const WorkloadSpec llama = small_model("swiglu");
  const double T = 2.0 * 128.0;               // micro-batch x seq
  const double qk = 4.0 * 64.0 + 2.0 * 64.0;  // q width + k width (2 KV heads of d 64)
  const ExecutionGraph e = generate_transformer_training(llama, 1, eager);
  const Found ln1 = find(e, "fwd.ln1");
  EXPECT_EQ(ln1.count, 2);  // one per layer
  EXPECT_EQ(ln1.kernel, KernelClass::elementwise);
  EXPECT_DOUBLE_EQ(ln1.bytes, 36.0 * T * 256.0);
  EXPECT_DOUBLE_EQ(find(e, "bwd.ln1").bytes, 76.0 * T * 256.0);
  const Found rope = find(e, "fwd.eager_rope");
  EXPECT_EQ(rope.count, 2);
  EXPECT_DOUBLE_EQ(rope.bytes, 20.0 * T * qk);
  EXPECT_EQ(find(e, "bwd.eager_rope").count, 2);

  const ExecutionGraph f = generate_transformer_training(llama, 1, fused);
  EXPECT_EQ(find(f, "fwd.ln1").kernel, KernelClass::normalization);
  EXPECT_DOUBLE_EQ(find(f, "fwd.ln1").bytes, 2.0 * 2.0 * T * 256.0);  // read x, write y, bf16
  EXPECT_EQ(find(f, "fwd.eager_rope").count, 0);

  // torch.compile fuses them: the fused ops again
  WorkloadSpec compiled = llama;
  compiled.training.torch_compile = true;
  const ExecutionGraph c = generate_transformer_training(compiled, 1, eager);
  EXPECT_EQ(find(c, "fwd.ln1").kernel, KernelClass::normalization);
  EXPECT_EQ(find(c, "fwd.eager_rope").count, 0);

  // GPT-style (LayerNorm, learned positions, as llm-foundry's MPT): the flags do not apply
  const ExecutionGraph g = generate_transformer_training(small_model("gelu"), 1, eager);
  EXPECT_EQ(find(g, "fwd.ln1").kernel, KernelClass::normalization);
  EXPECT_EQ(find(g, "fwd.eager_rope").count, 0);
}

TEST(EagerPytorchOps, GeneratorEmitsEagerSwigluUnlessFusedOrCompiled) {
  StackProfile eager = find_software_stack("pytorch-fsdp2");
  ASSERT_FALSE(eager.fused.swiglu);
  StackProfile fused = eager;
  fused.fused.swiglu = true;

  const WorkloadSpec llama = small_model("swiglu");
  const double Tf = 2.0 * 128.0 * 512.0;  // micro-batch x seq x ffn: the product's elements
  const ExecutionGraph e = generate_transformer_training(llama, 1, eager);
  const Found fwd = find(e, "fwd.activation");
  EXPECT_EQ(fwd.count, 2);  // one per layer
  EXPECT_EQ(fwd.kernel, KernelClass::elementwise);
  EXPECT_DOUBLE_EQ(fwd.bytes, 10.0 * Tf);
  EXPECT_DOUBLE_EQ(find(e, "bwd.activation").bytes, 18.0 * Tf);

  // fused: read gate and up, write y (3 x 2 bytes); backward reads gate, up, dy, writes two (5 x 2)
  const ExecutionGraph f = generate_transformer_training(llama, 1, fused);
  EXPECT_DOUBLE_EQ(find(f, "fwd.activation").bytes, 6.0 * Tf);
  EXPECT_DOUBLE_EQ(find(f, "bwd.activation").bytes, 10.0 * Tf);

  // torch.compile fuses them
  WorkloadSpec compiled = llama;
  compiled.training.torch_compile = true;
  EXPECT_DOUBLE_EQ(find(generate_transformer_training(compiled, 1, eager), "fwd.activation").bytes, 6.0 * Tf);

  // GeLU (llm-foundry's MPT under the same stack): one input, the flag does not apply
  const ExecutionGraph g = generate_transformer_training(small_model("gelu"), 1, eager);
  EXPECT_DOUBLE_EQ(find(g, "fwd.activation").bytes, 2.0 * 2.0 * Tf);
}

TEST(EagerPytorchOps, StackProfileKeysAreOptionalAndDefaultFused) {
  EXPECT_TRUE(find_software_stack("megatron-core").fused.rmsnorm);
  EXPECT_TRUE(find_software_stack("megatron-core").fused.rope);
  const StackProfile fsdp = find_software_stack("pytorch-fsdp2");
  EXPECT_EQ(fsdp.sources.count("fused.rmsnorm"), 1u);
  EXPECT_EQ(fsdp.sources.count("fused.rope"), 1u);
  EXPECT_EQ(fsdp.sources.count("fused.swiglu"), 1u);
  EXPECT_TRUE(find_software_stack("megatron-core").fused.swiglu);
}

}  // namespace
}  // namespace clustersim
