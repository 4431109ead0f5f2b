// Parameter and flop counts against published model sizes and Megatron-LM's closed form.
#include "workloads/transformer_math.hpp"

#include <gtest/gtest.h>

#include "workloads/training_state.hpp"

namespace clustersim {
namespace {

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.seq_len = 2048;
  m.vocab = 51200;
  m.activation = "gelu";
  m.tied_embeddings = true;
  return m;
}

ModelSpec llama2(int layers, int hidden, int heads, int kv_heads, int ffn) {
  ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.seq_len = 4096;
  m.vocab = 32000;
  m.activation = "swiglu";
  m.tied_embeddings = false;
  return m;
}

TEST(TransformerMath, Gpt3_175bParameters) {
  // Per layer 12h^2 + 13h = 12 * 150,994,944 + 159,744 = 1,812,099,072; x 96 = 173,961,510,912.
  // Word embedding 51200 * 12288 = 629,145,600; positions 2048 * 12288 = 25,165,824; final
  // LayerNorm 2 * 12288 = 24,576. Total 174,615,846,912 ("175B").
  const ModelSpec m = gpt3_175b();
  EXPECT_DOUBLE_EQ(layer_parameters(m), 1'812'099'072.0);
  EXPECT_DOUBLE_EQ(embedding_parameters(m), 654'336'000.0);
  EXPECT_DOUBLE_EQ(total_parameters(m), 174'615'846'912.0);
}

TEST(TransformerMath, UntiedOutputLayerAddsVocabTimesHidden) {
  ModelSpec m = gpt3_175b();
  m.tied_embeddings = false;
  EXPECT_DOUBLE_EQ(total_parameters(m), 174'615'846'912.0 + 51200.0 * 12288.0);
}

TEST(TransformerMath, Llama2_7bParameters) {
  // Llama style: no biases, RMSNorm. Per layer 4h^2 + 3hf + 2h = 67,108,864 + 135,266,304 + 8,192
  // = 202,383,360; x 32 = 6,476,267,520. Untied embeddings 2 * 32000 * 4096 = 262,144,000, final
  // norm 4096. Total 6,738,415,616 (the released checkpoint's count).
  const ModelSpec m = llama2(32, 4096, 32, 32, 11008);
  EXPECT_DOUBLE_EQ(layer_parameters(m), 202'383'360.0);
  EXPECT_DOUBLE_EQ(total_parameters(m), 6'738'415'616.0);
}

TEST(TransformerMath, GroupedQueryAttentionLlama2_70b) {
  // 8 kv heads of 128: QKV h * (h + 2 * 1024) = 83,886,080; output 67,108,864; MLP 3 * 8192 * 28672
  // = 704,643,072; norms 16,384: 855,654,400 per layer, x 80 = 68,452,352,000; plus 2 * 32000 * 8192
  // = 524,288,000 and 8192: 68,976,648,192 (the released checkpoint's count).
  const ModelSpec m = llama2(80, 8192, 64, 8, 28672);
  EXPECT_DOUBLE_EQ(layer_parameters(m), 855'654'400.0);
  EXPECT_DOUBLE_EQ(total_parameters(m), 68'976'648'192.0);
}

TEST(TransformerMath, MixtureOfExpertsMixtral8x7b) {
  // QKV 4096 * (4096 + 2048) = 25,165,824; output 16,777,216; 8 experts of 3 * 4096 * 14336
  // = 1,409,286,144; router 4096 * 8 = 32,768; norms 8192: 1,451,270,144 per layer, x 32
  // = 46,440,644,608; plus 2 * 32000 * 4096 = 262,144,000 and 4096: 46,702,792,704 ("46.7B").
  ModelSpec m = llama2(32, 4096, 32, 8, 14336);
  m.moe.experts = 8;
  m.moe.top_k = 2;
  EXPECT_DOUBLE_EQ(total_parameters(m), 46'702'792'704.0);
  // Each token multiplies the attention, the router and 2 of the 8 experts:
  // 25,165,824 + 16,777,216 + 32,768 + 2 * 176,160,768 = 394,297,344.
  EXPECT_DOUBLE_EQ(layer_matmul_parameters(m), 394'297'344.0);
}

TEST(TransformerMath, ParameterGroupsSumToTheTotals) {
  const ModelSpec m = gpt3_175b();
  const LayerParameterGroups g = layer_parameter_groups(m);
  const double h = 12288;
  EXPECT_DOUBLE_EQ(g.qkv, 3 * h * h + 3 * h);
  EXPECT_DOUBLE_EQ(g.attention_out, h * h + h);
  EXPECT_DOUBLE_EQ(g.mlp_up, 4 * h * h + 4 * h);
  EXPECT_DOUBLE_EQ(g.mlp_down, 4 * h * h + h);
  EXPECT_DOUBLE_EQ(g.norms, 4 * h);
  EXPECT_DOUBLE_EQ(g.sum(), layer_parameters(m));
  EXPECT_DOUBLE_EQ(embedding_parameter_groups(m).sum(), embedding_parameters(m));
}

TEST(TransformerMath, TrainingFlopsEqualMegatronsClosedForm) {
  // Narayanan et al. 2021 / Korthikanti et al. 2022 model flops per iteration, no recomputation:
  // 72 B s l h^2 (1 + s / (6h) + V / (12 l h)).
  const ModelSpec m = gpt3_175b();
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  const double closed_form = 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
  EXPECT_NEAR(training_flops_per_step(m, B) / closed_form, 1.0, 1e-12);
  // = 3.3862e18 flops per step for B = 1536 (hand-evaluated: 72 * 1536 * 2048 * 96 * 12288^2
  // = 3.2831e18, times 1 + 0.02778 + 0.00362).
  EXPECT_NEAR(training_flops_per_step(m, B), 3.3862e18, 0.0001e18);
}

TEST(TransformerMath, TrainingFlopsOfASwigluGqaModel) {
  // Llama-2-70B shape, one sequence: forward = L (2 s P_mm + 4 s^2 h) + 2 s h V with
  // P_mm = 83,886,080 + 67,108,864 + 704,643,072 = 855,638,016; training = 3 x forward.
  const ModelSpec m = llama2(80, 8192, 64, 8, 28672);
  const double s = 4096, h = 8192, V = 32000, p_mm = 855'638'016.0;
  EXPECT_DOUBLE_EQ(layer_matmul_parameters(m), p_mm);
  const double forward = 80.0 * (2.0 * s * p_mm + 4.0 * s * s * h) + 2.0 * s * h * V;
  EXPECT_NEAR(training_flops_per_step(m, 1.0) / (3.0 * forward), 1.0, 1e-12);
}

TEST(TrainingState, MixedPrecisionAdamKeepsSixteenBytesPlusTwo) {
  TrainingSpec t;
  t.precision = Precision::bf16;
  const ParameterStateBytes b = parameter_state_bytes(t);
  EXPECT_EQ(b.weights, 2.0);
  EXPECT_EQ(b.gradients, 4.0);                    // fp32 main grads
  EXPECT_EQ(b.optimizer, 12.0);                   // master + 2 moments
  EXPECT_EQ(optimizer_step_cost(t).bytes, 30.0);  // read g 4, rw master 8, rw m 8, rw v 8, write bf16 2
  t.precision = Precision::fp32;
  EXPECT_EQ(parameter_state_bytes(t).weights, 4.0);
  EXPECT_EQ(parameter_state_bytes(t).optimizer, 8.0);  // no master copy
  t.optimizer = "sgd";
  EXPECT_EQ(parameter_state_bytes(t).optimizer, 4.0);  // momentum
  EXPECT_EQ(optimizer_step_cost(t).bytes, 20.0);       // read g 4, rw weights 8, rw momentum 8
}

}  // namespace
}  // namespace clustersim
