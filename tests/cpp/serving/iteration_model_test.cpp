// The serving iteration model (sim/serving/iteration_model.hpp): closed forms of the replica's memory,
// the kernels of an iteration and their times, the token grid.
#include "sim/serving/iteration_model.hpp"

#include <array>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "serving_test_support.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"
#include "sim/serving/replica_links.hpp"
#include "sim/serving/token_grid.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

using testing::llama3_8b;

// Llama-2-70B: 80 layers, hidden 8192, 64 heads, 8 KV heads, ffn 28672, vocabulary 32000.
ModelSpec llama2_70b() {
  return testing::llama2(true);
}

using testing::calibrated_gpu;

ReplicaConfig replica(const ModelSpec& m, int tp = 1) {
  ReplicaConfig r;
  r.model = m;
  r.tp = tp;
  return r;
}

const ClusterSpec& dgx_h100(int nodes = 1) {
  static const ClusterSpec one = load_cluster_spec("dgx-h100");
  static const ClusterSpec two = load_cluster_spec("dgx-h100-superpod", {{"nodes", "2"}});
  return nodes == 1 ? one : two;
}

TEST(ServingDtype, BytesPerElementWithGroupScales) {
  EXPECT_EQ(bytes_per_element(ServingDtype::bf16, 128), 2.0);
  EXPECT_EQ(bytes_per_element(ServingDtype::fp8, 128), 1.0);
  EXPECT_DOUBLE_EQ(bytes_per_element(ServingDtype::int8, 128), 1.0 + 2.0 / 128);
  EXPECT_DOUBLE_EQ(bytes_per_element(ServingDtype::int4, 128), 0.515625);  // 0.5 + 2 / 128
  EXPECT_DOUBLE_EQ(bytes_per_element(ServingDtype::int4, 64), 0.5 + 2.0 / 64);
  EXPECT_STREQ(to_string(ServingDtype::int4), "int4");
  const SpecError e = testing::spec_error_of([] { bytes_per_element(ServingDtype::int4, 0); });
  EXPECT_EQ(e.json_path(), "/group_size");
}

void expect_locates_every_count(const TokenGrid& grid) {
  const auto& p = grid.points();
  EXPECT_GE(p.back(), grid.max_tokens());
  for (std::int64_t t = 1; t <= grid.max_tokens(); ++t) {
    const TokenGrid::Position at = grid.locate(t);
    ASSERT_LE(p[at.index], t) << t;
    if (at.weight > 0.0) {
      ASSERT_GE(p[at.index + 1], t) << t;
      ASSERT_NEAR(double(p[at.index]) + at.weight * double(p[at.index + 1] - p[at.index]), double(t), 1e-9) << t;
    } else {
      ASSERT_EQ(p[at.index], t) << t;
    }
  }
  // a linear function is interpolated exactly
  std::vector<double> table;
  for (std::int64_t t : p)
    table.push_back(3.0 * double(t) + 1.0);
  EXPECT_NEAR(TokenGrid::at(table, grid.locate(1001)), 3004.0, 1e-9);
}

TEST(TokenGrid, GeometricEveryCountBelow128ThenSixtyFourPerOctave) {
  const TokenGrid grid(10000, TokenGrid::Spacing::geometric);
  const auto& p = grid.points();
  for (std::int64_t t = 1; t < 128; ++t)
    EXPECT_EQ(p[static_cast<std::size_t>(t - 1)], t);
  EXPECT_EQ(p[127], 128);
  EXPECT_EQ(p[128], 130);  // steps of 2 in 128..255
  EXPECT_EQ(p[191], 256);  // 127 + 64
  EXPECT_EQ(p[192], 260);  // steps of 4 in 256..511
  expect_locates_every_count(grid);
}

TEST(TokenGrid, TileIntervalsEveryCountTo128ThenBothEndsOfEach16) {
  const TokenGrid grid(10000, TokenGrid::Spacing::tile_intervals);
  const auto& p = grid.points();
  for (std::int64_t t = 1; t <= 128; ++t)
    EXPECT_EQ(p[static_cast<std::size_t>(t - 1)], t);
  EXPECT_EQ(p[128], 129);
  EXPECT_EQ(p[129], 144);
  EXPECT_EQ(p[130], 145);
  EXPECT_EQ(grid.locate(144).index, 128u);  // the end of (128, 144]: weight 1 from 129
  EXPECT_DOUBLE_EQ(grid.locate(144).weight, 1.0);
  EXPECT_EQ(grid.locate(145).index, 130u);
  expect_locates_every_count(grid);
}

// Hand-worked: Llama-3-8B, bf16, on one H100 SXM5 80GB (81559 MiB), tp 1, utilization 0.9,
// max_batch_tokens 8192.
//   capacity    81559 MiB x 0.9 = 76,968,728,985.6 B
//   weights     per layer: linear h (q + 2 kv) + q h + 3 h f = 4096 x 6144 + 4096^2 + 3 x 4096 x 14336
//               = 218,103,808 x 2 B + norms 2 x 4096 x 2 B = 436,224,000 B; x 32 = 13,959,168,000;
//               embedding and LM head 128256 x 4096 x 2 B each = 1,050,673,152; final norm 8,192
//               -> 16,060,522,496 B (8.03 B parameters x 2 B)
//   activations residual 2 x 8192 x 4096 x 2 = 134,217,728 + MLP 8192 x 3 x 14336 x 2 = 704,643,072
//               -> 838,860,800 B (the MLP block beats attention's 167,772,160 and the logits' 329,777,152)
//   workspace   cuBLAS 32 MiB (Hopper) = 33,554,432 B (tp 1: no NCCL; the CUDA context is in the
//               1 - 0.9 margin, as vLLM measures from a snapshot taken after CUDA's initialization)
//   KV cache    76,968,728,985.6 - the three = 60,035,791,257.6 B
//   per token   2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B -> 458,036 tokens
TEST(ReplicaMemory, KvCapacityClosedFormLlama3_8bOnH100) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  const auto model = make_iteration_model(replica(llama3_8b()), gpu, dgx_h100());
  const ReplicaMemory& m = model->memory();
  EXPECT_NEAR(m.capacity_bytes, 76968728985.6, 1.0);
  testing::expect_memory_breakdown(m, 16060522496.0, 838860800.0, 33554432.0, 60035791257.6, 131072.0);
  EXPECT_EQ(m.kv_capacity_tokens, 458036);
}

// tp 8: 1 KV head per GPU; tp 16 (two nodes): still 1, replicated (8 KV heads over 16 GPUs), so a
// token's K and V take 2 x 32 x 1 x 128 x 2 = 16,384 B per GPU at both. tp 4: 2 heads, 32,768 B.
TEST(ReplicaMemory, KvHeadsReplicateWhenTpExceedsThem) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(make_iteration_model(replica(llama3_8b(), 4), gpu, dgx_h100())->memory().kv_bytes_per_token,
                   32768.0);
  EXPECT_DOUBLE_EQ(make_iteration_model(replica(llama3_8b(), 8), gpu, dgx_h100())->memory().kv_bytes_per_token,
                   16384.0);
  EXPECT_DOUBLE_EQ(replica_layout(replica(llama3_8b(), 16)).kv_heads_per_gpu, 1.0);
  EXPECT_DOUBLE_EQ(make_iteration_model(replica(llama3_8b(), 16), gpu, dgx_h100(2))->memory().kv_bytes_per_token,
                   16384.0);
  // NCCL buffers join the workspace at tp > 1
  EXPECT_GT(make_iteration_model(replica(llama3_8b(), 8), gpu, dgx_h100())->memory().workspace_bytes, 33554432.0);
  // 12 KV heads cannot be split over 8 GPUs, nor 8 replicated over 12
  ModelSpec odd = llama3_8b();
  odd.kv_heads = 12;
  odd.heads = 48;
  EXPECT_EQ(testing::spec_error_of([&] { replica_layout(replica(odd, 8)); }).json_path(), "/model/kv_heads");
}

// The linear layers' weights, 6,979,321,856 parameters (32 x 218,103,808), shrink from 2 B to
// 0.515625 B (int4, fp16 scales per 128): 6,979,321,856 x 1.484375 = 10,359,930,880 B fewer; fp8 1 B:
// 6,979,321,856 fewer. Embeddings, LM head and norms stay 16-bit.
TEST(ReplicaMemory, WeightBytesPerDtype) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  ReplicaConfig r = replica(llama3_8b());
  const double bf16 = make_iteration_model(r, gpu, dgx_h100())->memory().weights_bytes;
  r.weight_dtype = ServingDtype::int4;
  EXPECT_DOUBLE_EQ(bf16 - make_iteration_model(r, gpu, dgx_h100())->memory().weights_bytes, 10359930880.0);
  r.weight_dtype = ServingDtype::fp8;
  EXPECT_DOUBLE_EQ(bf16 - make_iteration_model(r, gpu, dgx_h100())->memory().weights_bytes, 6979321856.0);
  // an fp8 KV cache halves the bytes per token and about doubles the tokens
  r.kv_dtype = ServingDtype::fp8;
  EXPECT_DOUBLE_EQ(make_iteration_model(r, gpu, dgx_h100())->memory().kv_bytes_per_token, 65536.0);
}

// Llama-2-70B in bf16 (138 GB of weights) on one 80 GB H100: refused, naming every memory line.
TEST(ReplicaMemory, AReplicaThatDoesNotFitThrowsWithTheMemoryLines) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  const SpecError e = testing::spec_error_of([&] { make_iteration_model(replica(llama2_70b()), gpu, dgx_h100()); });
  EXPECT_EQ(e.json_path(), "/gpu_memory_utilization");
  for (const char* line : {"does not fit", "weights", "activations", "workspace", "KV cache", "HBM"})
    EXPECT_NE(e.message().find(line), std::string::npos) << line << " in: " << e.message();
  // at tp 4 it fits (34.5 GB of weights per GPU)
  EXPECT_GT(make_iteration_model(replica(llama2_70b(), 4), gpu, dgx_h100())->memory().kv_capacity_tokens, 100000);
  // and a replica larger than the cluster is refused
  EXPECT_EQ(
      testing::spec_error_of([&] { make_iteration_model(replica(llama2_70b(), 16), gpu, dgx_h100()); }).json_path(),
      "/nodes");
}

std::vector<IterationEntry> decode_batch(int requests, std::int64_t context) {
  return std::vector<IterationEntry>(static_cast<std::size_t>(requests), IterationEntry{1, context});
}

// Decode is memory-bound: adding Delta cached tokens to every request of a batch adds the read of
// their K and V, L x requests x Delta x kv_bytes_per_token_layer / (HBM x memory_efficiency), and
// nothing else (same tokens, same rows: every other kernel and the fixed terms are unchanged).
// Llama-3-8B tp 1: 32 x 64 x 1000 x 2 x 8 x 128 x 2 B = 4,194,304,000 B at 3.35 TB/s x efficiency.
TEST(IterationTime, DecodeAttentionIsTheKvReadAtTheMemoryBandwidth) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  const auto model = make_iteration_model(replica(llama3_8b()), gpu, dgx_h100());
  const auto short_ctx = decode_batch(64, 1000), long_ctx = decode_batch(64, 2000);
  const IterationTime a = model->iteration_time(short_ctx), b = model->iteration_time(long_ctx);
  const double bytes = 32.0 * 64 * 1000 * 2 * 8 * 128 * 2;
  EXPECT_NEAR(b.time_s - a.time_s, bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency), 1e-9);
  EXPECT_EQ(a.communication_s, 0.0);  // tp 1
  EXPECT_DOUBLE_EQ(a.time_s, a.compute_s + a.communication_s + a.host_s);
  // the whole iteration is within the kernels' fixed terms of the weights' and caches' bytes over
  // the bandwidth: 16.06 GB of weights + 64 x 1001 x 131,072 B of cache, read once
  const double streamed = model->memory().weights_bytes + 64.0 * 1001 * 131072.0;
  const double floor_s = streamed / gpu.hbm_bandwidth_Bps;
  EXPECT_GT(a.time_s, floor_s);
  EXPECT_LT(a.time_s, floor_s / gpu.memory_efficiency + 32 * 12 * gpu.gemm_launch_s + 1e-3);
}

TEST(IterationTime, GrowsWithContextInDecodeAndQuadraticallyInPrefillAttention) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  const ReplicaConfig r = replica(llama3_8b());
  const auto model = make_iteration_model(r, gpu, dgx_h100());
  double previous = 0.0;
  for (std::int64_t context : {0, 512, 2048, 8192}) {
    const auto batch = decode_batch(32, context);
    const double t = model->iteration_time(batch).time_s;
    EXPECT_GT(t, previous) << context;
    previous = t;
  }
  // one prompt's FlashAttention grows with the square of its length: doubling it takes 3..4 times as
  // long (4 x the scores; the fixed costs per block make short prompts a little dearer), closer to 4
  // the longer it is
  const ReplicaLayout layout = replica_layout(r);
  const ReplicaKernels kernels(r, layout, gpu);
  double ratio = 0.0;
  for (double n : {2048.0, 4096.0, 8192.0}) {
    const double next = kernel_time(gpu, kernels.prefill_attention(2 * n, 0)).time_s /
                        kernel_time(gpu, kernels.prefill_attention(n, 0)).time_s;
    EXPECT_GT(next, 3.0) << n;
    EXPECT_LT(next, 4.05) << n;
    EXPECT_GE(next, ratio) << n;
    ratio = next;
  }
  // a chunk after a context sees it: 1024 new tokens after 7168 cost more than 1024 alone
  EXPECT_GT(kernel_time(gpu, kernels.prefill_attention(1024, 7168)).time_s,
            3.0 * kernel_time(gpu, kernels.prefill_attention(1024, 0)).time_s);
}

// Every request's attention is one kernel per layer (vLLM V1's varlen FlashAttention): a batch of two
// prompts of 300 and 200 tokens differs from one prompt of 500 (same tokens: every tabulated kernel is
// the same) by the attention of the two less the 500's, with the kernel's fixed time paid once, and by
// the head's second row (LM head and sampler of 2 rows instead of 1, replayed from the CUDA graph).
TEST(IterationTime, OneAttentionLaunchPerLayerForTheWholeBatch) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  const ReplicaConfig r = replica(llama3_8b());
  const auto model = make_iteration_model(r, gpu, dgx_h100());
  const ReplicaKernels kernels(r, replica_layout(r), gpu);
  auto t = [&](const ComputeOp& op, KernelTiming timing = KernelTiming::per_call) {
    return kernel_time(gpu, op, timing).time_s;
  };
  const std::vector<IterationEntry> one{{500, 0}}, two{{300, 0}, {200, 0}};
  const double attention = t(kernels.prefill_attention(300, 0)) + t(kernels.prefill_attention(200, 0)) -
                           gpu.gemm_launch_s - t(kernels.prefill_attention(500, 0));
  const KernelTiming graph = KernelTiming::kernel_duration;
  const double head = t(kernels.lm_head(2), graph) + t(kernels.sampling(2), graph) - t(kernels.lm_head(1), graph) -
                      t(kernels.sampling(1), graph);
  EXPECT_NEAR(model->iteration_time(two).compute_s - model->iteration_time(one).compute_s, 32 * attention + head,
              1e-12);
}

double gemm_time_s(const ReplicaConfig& r, const GpuSpec& gpu, double tokens) {
  return testing::block_kernels_s(r, gpu, tokens, &ReplicaKernels::layer_kernels, KernelTiming::per_call,
                                  KernelClass::gemm);
}

// tp 2 halves every GEMM of a layer (a large, compute-bound batch: within 6 % of half) and adds the
// all-reduces: 2 per layer and the embedding's, of T x h x 2 B, and the logits' all-gather, which are
// the whole communication of the iteration.
TEST(IterationTime, TensorParallelHalvesTheGemmsAndAddsTheAllReduces) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  const double one = gemm_time_s(replica(llama3_8b(), 1), gpu, 4096),
               two = gemm_time_s(replica(llama3_8b(), 2), gpu, 4096);
  EXPECT_NEAR(two / one, 0.5, 0.03);
  const auto tp1 = make_iteration_model(replica(llama3_8b(), 1), gpu, dgx_h100());
  const auto tp2 = make_iteration_model(replica(llama3_8b(), 2), gpu, dgx_h100());
  const std::vector<IterationEntry> prompt{{4096, 0}};
  const IterationTime a = tp1->iteration_time(prompt), b = tp2->iteration_time(prompt);
  const ReplicaLinks links(dgx_h100(), 2, 1);
  const double all_reduce = links.all_reduce_s(4096.0 * 4096 * 2);
  EXPECT_GT(all_reduce, 0.0);
  EXPECT_NEAR(b.communication_s, (2 * 32 + 1) * all_reduce + links.all_gather_s(1.0 * 64128 * 2), 1e-12);
  EXPECT_LT(b.compute_s, 0.6 * a.compute_s);
  EXPECT_LT(b.time_s, a.time_s);
  EXPECT_NEAR(b.time_s, b.compute_s + b.communication_s, 1e-15);
}

// pp 2 (v1: no micro-batching, the batch crosses the stages one after the other): each GPU holds 16
// layers (half the layer weights and KV bytes per token: 2 x 16 x 8 x 128 x 2 = 65,536 B), the first
// the embedding and the second the LM head; the iteration computes what pp 1 computes (the same
// kernels, over both stages) and adds one send of the hidden states and residual between the stages.
TEST(IterationTime, PipelineStagesRunOneAfterTheOther) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  ReplicaConfig r = replica(llama3_8b());
  const auto one = make_iteration_model(r, gpu, dgx_h100());
  r.pp = 2;
  const auto two = make_iteration_model(r, gpu, dgx_h100());
  EXPECT_DOUBLE_EQ(two->memory().kv_bytes_per_token, 65536.0);
  // stage 0: 16 layers + embedding = 8,030,257,152 B; stage 1: 16 layers + LM head + final norm, 8,192 B
  // more, which costs no whole token of KV cache: the stages tie, and the first is reported
  EXPECT_DOUBLE_EQ(two->memory().weights_bytes, 16 * 436224000.0 + 1050673152.0);
  const std::vector<IterationEntry> batch{{512, 0}, {1, 700}, {1, 900}};
  const IterationTime a = one->iteration_time(batch), b = two->iteration_time(batch);
  EXPECT_NEAR(b.compute_s, a.compute_s, 1e-12 * a.compute_s);
  const ReplicaLinks links(dgx_h100(), 1, 2);
  EXPECT_NEAR(b.communication_s, links.stage_send_s(2.0 * 514 * 4096 * 2), 1e-15);
  EXPECT_GT(b.communication_s, 0.0);
  // layers not divisible by pp: 32 over 3 stages is 11, 11, 10 (the remainder before the last stage)
  r.pp = 3;
  EXPECT_EQ(replica_layout(r).stage_layers, (std::vector<int>{11, 11, 10}));
}

// fp8 weights take the fp8 tensor-core path on H100 (1-byte activations and weights); on A100, which
// has none, they are weight-only: bf16 GEMMs streaming 1-byte weights.
TEST(ReplicaKernels, Fp8WeightsUseTheFp8PathWhereTheGpuHasIt) {
  ReplicaConfig r = replica(llama3_8b());
  r.weight_dtype = ServingDtype::fp8;
  const ReplicaLayout layout = replica_layout(r);
  std::array<ComputeOp, kMaxLayerKernels> ops{};
  for (const char* id : {"h100-sxm5-80gb", "a100-sxm4-80gb"}) {
    const GpuSpec gpu = calibrated_gpu(id);
    const ReplicaKernels kernels(r, layout, gpu);
    kernels.layer_kernels(64, ops.data());
    const ComputeOp& qkv = ops[1];
    ASSERT_EQ(std::string_view(qkv.name), "serve.qkv");
    const bool fp8 = gpu.has_tensor_path(Precision::fp8);
    EXPECT_EQ(qkv.precision, fp8 ? Precision::fp8 : Precision::bf16) << id;
    // 64 x 4096 activations (1 or 2 B), 4096 x 6144 weights (1 B), 64 x 6144 outputs (2 B)
    EXPECT_DOUBLE_EQ(qkv.bytes, 64.0 * 4096 * (fp8 ? 1.0 : 2.0) + 4096.0 * 6144 + 64.0 * 6144 * 2) << id;
    EXPECT_EQ(kernels.lm_head(8).precision, Precision::bf16) << id;  // the LM head stays 16-bit
  }
}

TEST(IterationTime, HostOverheadAndBadBatches) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  ReplicaConfig r = replica(llama3_8b());
  r.host_overhead_s = 2e-3;
  r.max_batch_tokens = 2048;
  const auto model = make_iteration_model(r, gpu, dgx_h100());
  const auto batch = decode_batch(8, 100);
  const IterationTime t = model->iteration_time(batch);
  EXPECT_EQ(t.host_s, 2e-3);
  EXPECT_DOUBLE_EQ(t.time_s, t.compute_s + t.communication_s + 2e-3);
  EXPECT_EQ(model->iteration_time({}).time_s, 0.0);
  const std::vector<IterationEntry> too_many{{2049, 0}};
  EXPECT_THROW(model->iteration_time(too_many), SimulationError);
  const std::vector<IterationEntry> empty_entry{{0, 10}};
  EXPECT_THROW(model->iteration_time(empty_entry), SimulationError);
}

// The grid's interpolation follows the kernel model between its points: at token counts all over
// 2..2048 (tile and wave boundaries included) the tabulated time is within 1 % of the direct sum of
// kernel times.
TEST(IterationTime, TabulatedTimesFollowTheKernelModel) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  ReplicaConfig r = replica(llama3_8b());
  r.max_batch_tokens = 2048;
  const auto model = make_iteration_model(r, gpu, dgx_h100());
  const ReplicaLayout layout = replica_layout(r);
  const ReplicaKernels kernels(r, layout, gpu);
  double worst = 0.0;
  for (std::int64_t t = 2; t <= 2048; t += 7) {
    const std::vector<IterationEntry> batch{{t, 0}};
    const IterationTime it = model->iteration_time(batch);
    const KernelTiming g = graph_timing(double(t));
    double direct = testing::block_kernels_s(r, gpu, double(t), &ReplicaKernels::layer_kernels, g);
    direct = 32 * (direct + kernel_time(gpu, kernels.prefill_attention(double(t), 0)).time_s) +
             kernel_time(gpu, kernels.embedding(double(t)), g).time_s +
             kernel_time(gpu, kernels.final_norm(double(t)), g).time_s +
             kernel_time(gpu, kernels.lm_head(1), g).time_s + kernel_time(gpu, kernels.sampling(1), g).time_s;
    worst = std::max(worst, std::abs(it.compute_s / direct - 1.0));
  }
  EXPECT_LT(worst, 0.01);
}

TEST(IterationTime, MixtureOfExpertsReadsOnlyTheExpertsHit) {
  const GpuSpec gpu = calibrated_gpu("h100-sxm5-80gb");
  // Mixtral-8x7B: 32 layers, hidden 4096, 32 heads, 8 KV heads, 8 experts of 14336, top 2
  ModelSpec m = llama3_8b();
  m.vocab = 32000;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  ReplicaConfig r = replica(m, 2);
  r.ep = 2;
  const ReplicaLayout layout = replica_layout(r);
  EXPECT_DOUBLE_EQ(layout.experts_per_gpu, 4.0);
  EXPECT_DOUBLE_EQ(layout.expert_ffn_per_gpu, 14336.0);
  const ReplicaKernels kernels(r, layout, gpu);
  std::array<ComputeOp, kMaxLayerKernels> ops{};
  // 4 tokens: 8 routes hit 4 x (1 - (7/8)^8) = 2.6256 of this GPU's 4 experts on average, which get
  // R = 4 x 2 / 2 = 4 rows: the up projection reads the rows' inputs, 2.6256 experts' weights
  // (4096 x 28672 x 2 B each) and writes 4 x 28672 outputs, in ceil(2.6256) = 3 groups of 2 rows
  const std::size_t n = kernels.layer_kernels(4, ops.data());
  const double active = 4.0 * (1.0 - std::pow(7.0 / 8.0, 8.0));
  bool found = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::string_view(ops[i].name) != "serve.expert_up") continue;
    found = true;
    EXPECT_EQ(ops[i].batch, 3u);
    EXPECT_EQ(ops[i].m, 2u);
    EXPECT_NEAR(ops[i].bytes, 4.0 * 4096 * 2 + active * 4096 * 28672 * 2 + 4.0 * 28672 * 2, 1.0);
    EXPECT_DOUBLE_EQ(ops[i].flops, 2.0 * 4 * 28672 * 4096);
  }
  EXPECT_TRUE(found);
  r.ep = 3;
  EXPECT_EQ(testing::spec_error_of([&] { replica_layout(r); }).json_path(), "/ep");
}

}  // namespace
}  // namespace clustersim
