// Parameter and flop counts against published model sizes and Megatron-LM's closed form.
#include "workloads/transformer_math.hpp"

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "workloads/training_state.hpp"

namespace clustersim {
namespace {

ModelSpec gpt3_175b() {
  ModelSpec m = testing::transformer_model(
      {.layers = 96, .hidden = 12288, .heads = 96, .ffn_hidden = 4 * 12288, .seq_len = 2048, .vocab = 51200});
  m.tied_embeddings = true;
  return m;
}

// A Llama-2-style decoder (context 4096, vocabulary 32000, SwiGLU, untied embeddings).
ModelSpec llama2(int layers, int hidden, int heads, int kv_heads, int ffn) {
  return testing::swiglu_decoder(
      {.layers = layers, .hidden = hidden, .heads = heads, .ffn_hidden = ffn, .seq_len = 4096, .vocab = 32000},
      kv_heads);
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

// DeepSeek-V3's shape (Hugging Face deepseek-ai/DeepSeek-V3 config.json; arXiv:2412.19437).
ModelSpec deepseek_v3() {
  ModelSpec m = llama2(61, 7168, 128, 0, 18432);
  m.vocab = 129280;
  m.attention_type = "mla";
  m.mla = {
      .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128};
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.shared_experts = 1;
  m.moe.first_dense_layers = 3;
  return m;
}

TEST(TransformerMath, MultiHeadLatentAttentionWeightsByHand) {
  // h 7168, a 128, r_q 1536, r_kv 512, n 128, r 64, v 128:
  //   q_a 7168 * 1536 = 11,010,048; q norm 1,536; q_b 1536 * 128 * 192 = 37,748,736
  //   kv_a 7168 * 576 = 4,128,768; kv norm 512; kv_b 512 * 128 * 256 = 16,777,216
  //   qkv group 69,666,816; output 128 * 128 * 7168 = 117,440,512.
  const ModelSpec m = deepseek_v3();
  const LayerParameterGroups g = layer_parameter_groups(m);
  EXPECT_DOUBLE_EQ(g.qkv, 69'666'816.0);
  EXPECT_DOUBLE_EQ(g.attention_out, 117'440'512.0);
  // MoE layer: 256 routed experts of 3 * 7168 * 2048 = 44,040,192 each, 1 shared, router 7168 * 256
  EXPECT_DOUBLE_EQ(g.mlp_up + g.mlp_down, 256.0 * 44'040'192.0);
  EXPECT_DOUBLE_EQ(g.shared_experts, 44'040'192.0);
  EXPECT_DOUBLE_EQ(g.router, 1'835'008.0);
  EXPECT_DOUBLE_EQ(g.norms, 2.0 * 7168);
  // Without a query bottleneck (r_q 0, DeepSeek-V2-Lite style): q is h * a * (n + r) = 176,160,768.
  ModelSpec lite = m;
  lite.mla.q_lora_rank = 0;
  EXPECT_DOUBLE_EQ(layer_parameter_groups(lite).qkv, 176'160'768.0 + 4'128'768.0 + 512.0 + 16'777'216.0);
}

TEST(TransformerMath, DeepSeekV3ParametersTotalAndActivated) {
  // Dense layer: attention 187,107,328 + norms 14,336 + MLP 3 * 7168 * 18432 = 396,361,728
  //   = 583,483,392, x 3 = 1,750,450,176.
  // MoE layer: 187,107,328 + 14,336 + router 1,835,008 + 257 experts of 44,040,192 (11,318,329,344)
  //   = 11,507,286,016, x 58 = 667,422,588,928.
  // Embedding and output 2 * 129,280 * 7168 = 1,853,358,080, final norm 7,168.
  // Total 671,026,404,352: the report's 671B (arXiv:2412.19437, abstract).
  const ModelSpec m = deepseek_v3();
  EXPECT_EQ(moe_layer_count(m), 58);
  EXPECT_DOUBLE_EQ(layer_parameters(dense_layer_model(m)), 583'483'392.0);
  EXPECT_DOUBLE_EQ(layer_parameters(m), 11'507'286'016.0);
  EXPECT_DOUBLE_EQ(total_parameters(m), 671'026'404'352.0);
  EXPECT_NEAR(total_parameters(m) / 671e9, 1.0, 0.01);
  // Activated: all but 248 unused routed experts in each of 58 layers: 671,026,404,352
  // - 14,384 * 44,040,192 = 37,552,282,624. The report's "37B" is rounded to whole billions; without
  // the input embedding (a lookup, 926,679,040) it is 36,625,603,584, which rounds to 37B (the full
  // count would round to 38B): within half a unit of the published digit.
  EXPECT_DOUBLE_EQ(activated_parameters(m), 37'552'282'624.0);
  const double without_lookup = activated_parameters(m) - embedding_parameter_groups(m).word;
  EXPECT_NEAR(without_lookup, 37e9, 0.5e9);
  // A dense model activates everything.
  const ModelSpec llama = llama2(32, 4096, 32, 32, 11008);
  EXPECT_DOUBLE_EQ(activated_parameters(llama), total_parameters(llama));
}

// Multi-token prediction (arXiv:2412.19437 sec. 2.2, D = 1): one module is a MoE layer like the last
// (11,507,286,016), the projection 2 x 7168^2 = 102,760,448 and three RMSNorms of 7168: 11,610,067,968
// parameters, the embedding and output head shared. The Hugging Face checkpoint stores the module with
// its own copies of both (2 x 129,280 x 7168 = 1,853,358,080): 13,463,426,048, the model card's "685B
// ... 671B of the Main Model weights and 14B of the MTP Module weights" (deepseek-ai/DeepSeek-V3
// README.md): 671,026,404,352 + 13,463,426,048 = 684.49B, within 0.1 % of 685B, and the module within 5 %
// of the rounded 14B. Its activated share: all but 248 routed experts.
TEST(TransformerMath, DeepSeekV3MultiTokenPredictionModule) {
  ModelSpec m = deepseek_v3();
  EXPECT_DOUBLE_EQ(mtp_parameters(m), 0.0);
  const double main = total_parameters(m);
  m.mtp_depth = 1;
  EXPECT_DOUBLE_EQ(mtp_module_extra_parameters(m), 102'760'448.0 + 3.0 * 7168);
  EXPECT_DOUBLE_EQ(mtp_parameters(m), 11'610'067'968.0);
  EXPECT_DOUBLE_EQ(total_parameters(m), main + 11'610'067'968.0);
  const double checkpoint_module = mtp_parameters(m) + 2.0 * embedding_parameter_groups(m).word;
  EXPECT_DOUBLE_EQ(checkpoint_module, 13'463'426'048.0);
  EXPECT_NEAR((main + checkpoint_module) / 685e9, 1.0, 0.001);
  EXPECT_NEAR(checkpoint_module / 14e9, 1.0, 0.05);
  EXPECT_DOUBLE_EQ(activated_parameters(m), 37'552'282'624.0 + 11'610'067'968.0 - 248.0 * 44'040'192.0);
  // Two modules: twice the parameters; the model flops add 3 x 2 s (2h^2 + the layer's matmul weights
  // + h V) + the attention's scores per module and sequence.
  ModelSpec two = m;
  two.mtp_depth = 2;
  EXPECT_DOUBLE_EQ(mtp_parameters(two), 2.0 * mtp_parameters(m));
  const double s = m.seq_len, h = m.hidden;
  const double scores = 2.0 * s * s * 128 * (192 + 128);
  const double module = 2.0 * s * (2.0 * h * h + layer_matmul_parameters(m) + h * m.vocab) + scores;
  EXPECT_NEAR(training_flops_per_step(two, 1.0) - training_flops_per_step(m, 1.0), 3.0 * module,
              1e-9 * training_flops_per_step(m, 1.0));
}

TEST(TransformerMath, KvCacheElementsPerTokenAndLayer) {
  // MLA caches the latent and the shared rotary key: 512 + 64 = 576 elements, 1,152 bytes in bf16;
  // 61 layers: 70,272 bytes per token (DeepSeek-V2 paper, Table 1: (d_c + d_h^R) l elements per token).
  EXPECT_DOUBLE_EQ(kv_cache_elements_per_token_layer(deepseek_v3()), 576.0);
  // MHA/GQA: K and V of each KV head: Llama-2-70B 2 * 8 * 128 = 2,048; Llama-2-7B 2 * 32 * 128 = 8,192.
  EXPECT_DOUBLE_EQ(kv_cache_elements_per_token_layer(llama2(80, 8192, 64, 8, 28672)), 2048.0);
  EXPECT_DOUBLE_EQ(kv_cache_elements_per_token_layer(llama2(32, 4096, 32, 32, 11008)), 8192.0);
}

TEST(TransformerMath, TrainingFlopsOfLatentAttentionAndDenseFirstLayers) {
  // One sequence: forward = sum over layers (2 s P_mm + 2 s^2 a (n + r + v)) + 2 s h V, the first 3
  // layers with the dense MLP. P_mm (MoE) = attention 187,105,280 (weights without the latent norms)
  // + router 1,835,008 + 9 experts * 44,040,192 = 585,302,016; P_mm (dense) = 187,105,280
  // + 396,361,728 = 583,467,008. Scores: 2 * 4096^2 * 128 * 320.
  const ModelSpec m = deepseek_v3();
  EXPECT_DOUBLE_EQ(layer_matmul_parameters(m), 585'302'016.0);
  EXPECT_DOUBLE_EQ(layer_matmul_parameters(dense_layer_model(m)), 583'467'008.0);
  const double s = 4096, scores = 2.0 * s * s * 128 * 320;
  const double forward =
      3.0 * (2.0 * s * 583'467'008.0 + scores) + 58.0 * (2.0 * s * 585'302'016.0 + scores) + 2.0 * s * 7168 * 129280;
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
