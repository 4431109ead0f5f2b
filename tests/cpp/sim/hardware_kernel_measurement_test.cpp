// Measurement readers: each format's records become the kernel descriptions the model times (checked
// against hand-computed shapes and bytes), and a malformed file is refused with the path of the bad
// field (JSON pointer, or "row N/column X" for a CSV).
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/kernel_measurement.hpp"

namespace clustersim {
namespace {

std::string write(const std::string& relative, const std::string& text) {
  const std::filesystem::path p =
      std::filesystem::path(::testing::TempDir()) / ("clustersim_" + std::to_string(::getpid())) / relative;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p.string();
}

SpecError error_of(const std::function<void()>& f) {
  return testing::spec_error_of(f);
}

const KernelMeasurement& find(const MeasurementSet& s, const std::string& operation) {
  for (const auto& m : s.kernels) {
    if (m.operation == operation) return m;
  }
  static const KernelMeasurement none;
  ADD_FAILURE() << "no " << operation;
  return none;
}

const char* kVidurHeader =
    "time_stats.attn_pre_proj.median,time_stats.mlp_up_proj.median,time_stats.mlp_act.median,"
    "time_stats.add.median,time_stats.input_layernorm.median,n_head,n_kv_head,n_embd,n_expanded_embd,"
    "vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers\n";

TEST(KernelMeasurement, VidurRowsBecomeTheLayersKernels) {
  // Llama-2-70B (64 heads of 128, 8 KV heads, h 8192, f 28672, gated) at 4096 tokens, tp 4.
  const std::string path =
      write("h100/Llama-2-70b-hf/mlp.csv",
            std::string(kVidurHeader) + "0.9,1.5,0.2,0.05,0.1,64,8,8192,28672,32768,True,4096,4\n");
  const MeasurementSet s = read_measurements(path);
  ASSERT_EQ(s.kernels.size(), 5u);
  // QKV: n = (64 + 2 * 8) * 128 / 4 = 2560, k = 8192.
  const KernelMeasurement& qkv = find(s, "attn_pre_proj");
  EXPECT_EQ(qkv.kernel, KernelClass::gemm);
  EXPECT_EQ(qkv.precision, Precision::fp16);
  EXPECT_EQ(qkv.m, 4096u);
  EXPECT_EQ(qkv.n, 2560u);
  EXPECT_EQ(qkv.k, 8192u);
  EXPECT_DOUBLE_EQ(qkv.time_s, 0.9e-3);
  // MLP up (gate and up): n = 2 * 28672 / 4 = 14336; flops 2 m n k, bytes (mk + kn + mn) * 2.
  const KernelMeasurement& up = find(s, "mlp_up_proj");
  EXPECT_EQ(up.n, 14336u);
  EXPECT_DOUBLE_EQ(up.flops, 2.0 * 4096 * 14336 * 8192);
  EXPECT_DOUBLE_EQ(up.bytes, (4096.0 * 8192 + 8192.0 * 14336 + 4096.0 * 14336) * 2);
  // SiluAndMul: reads 2 x 7168, writes 7168 per token: 3 * 4096 * 7168 * 2 = 176,160,768 bytes, a row
  // per token.
  const KernelMeasurement& act = find(s, "mlp_act");
  EXPECT_EQ(act.kernel, KernelClass::elementwise);
  EXPECT_EQ(act.name, "vidur.activation");
  EXPECT_EQ(act.m, 4096u);
  EXPECT_DOUBLE_EQ(act.bytes, 176'160'768.0);
  // The residual add: 3 * 4096 * 8192 * 2 = 201,326,592 bytes, grid-stride (no rows).
  const KernelMeasurement& add = find(s, "add");
  EXPECT_EQ(add.m, 0u);
  EXPECT_DOUBLE_EQ(add.bytes, 201'326'592.0);
  // RMSNorm: reads and writes T x h: 2 * 4096 * 8192 * 2 bytes.
  EXPECT_DOUBLE_EQ(find(s, "input_layernorm").bytes, 134'217'728.0);
  EXPECT_EQ(find(s, "input_layernorm").kernel, KernelClass::normalization);
  // The GPU and the model come from Vidur's directory layout.
  EXPECT_EQ(qkv.gpu, "h100-sxm5-80gb");
  EXPECT_EQ(qkv.group, "Llama-2-70b-hf");
  EXPECT_EQ(qkv.tp, 4);
  EXPECT_EQ(qkv.source, path + ":row 1");
}

TEST(KernelMeasurement, MalformedVidurTablesNameTheCell) {
  std::string header = kVidurHeader;
  const std::string no_tokens = header.replace(header.find("num_tokens"), 10, "tokens");
  const SpecError missing =
      error_of([&] { read_measurements(write("a100/m/missing.csv", no_tokens + "1,1,1,1,1,1,1,1,1,1,True,1,1\n")); });
  EXPECT_EQ(missing.json_path(), "column num_tokens");

  const std::string rows = std::string(kVidurHeader) + "0.9,1.5,0.2,0.05,0.1,64,8,8192,28672,32768,True,4096,4\n" +
                           "0.9,1.5,0.2,0.05,0.1,64,8,8192,28672,32768,True,many,4\n";
  const std::string bad = write("a100/m/bad.csv", rows);
  const SpecError e = error_of([&] { read_measurements(bad); });
  EXPECT_EQ(e.file(), bad);
  EXPECT_EQ(e.json_path(), "row 2/column num_tokens");
  EXPECT_EQ(e.message(), "expected a positive integer, got 'many'");

  const SpecError time = error_of([&] {
    read_measurements(write("a100/m/time.csv",
                            std::string(kVidurHeader) + "0.9,-1.5,0.2,0.05,0.1,64,8,8192,28672,32768,True,4096,4\n"));
  });
  EXPECT_EQ(time.json_path(), "row 1/column time_stats.mlp_up_proj.median");
  const SpecError gated = error_of([&] {
    read_measurements(write("a100/m/gated.csv",
                            std::string(kVidurHeader) + "0.9,1.5,0.2,0.05,0.1,64,8,8192,28672,32768,yes,4096,4\n"));
  });
  EXPECT_EQ(gated.json_path(), "row 1/column use_gated_mlp");
}

const char* kOwnFile = R"({
  "format": "clustersim-measurements/1",
  "benchmark": "gemm_sweep",
  "device": {"name": "NVIDIA A100-SXM4-40GB", "driver": "550.54.15", "sm_count": 108},
  "measurements": [
    {"id": "g1", "kernel": "gemm", "dtype": "bf16", "m": 4096, "n": 1024, "k": 512, "time_s": 1.0e-4, "repetitions": 50,
     "library": "cublasLt"},
    {"id": "c1", "kernel": "elementwise", "role": "copy", "bytes": 2147483648, "time_s": 1.5e-3, "repetitions": 20},
    {"id": "l1", "kernel": "launch", "time_s": 2.5e-6, "repetitions": 10000},
    {"id": "n1", "kernel": "collective", "collective": "all_reduce", "ranks": 8, "bytes": 1048576, "time_s": 3e-5,
     "repetitions": 20, "busbw_GBps": 61.2}
  ]
})";

TEST(KernelMeasurement, OwnFormatRecordsAndDefaults) {
  const MeasurementSet s = read_measurements(write("own.json", kOwnFile));
  ASSERT_EQ(s.kernels.size(), 3u);
  EXPECT_EQ(s.skipped, 1u);  // the collective: for the network fit
  const KernelMeasurement& g = s.kernels[0];
  EXPECT_EQ(g.gpu, "a100-sxm4-40gb");
  EXPECT_EQ(g.precision, Precision::bf16);
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 4096 * 1024 * 512);
  EXPECT_DOUBLE_EQ(g.bytes, (4096.0 * 512 + 512.0 * 1024 + 4096.0 * 1024) * 2);
  EXPECT_EQ(g.repetitions, 50);
  EXPECT_EQ(s.kernels[1].name, "bench.copy");
  EXPECT_EQ(s.kernels[1].kernel, KernelClass::elementwise);
  EXPECT_DOUBLE_EQ(s.kernels[1].bytes, 2147483648.0);
  EXPECT_EQ(s.kernels[2].kernel, KernelClass::elementwise);  // an empty kernel: its time is the fixed cost
  EXPECT_DOUBLE_EQ(s.kernels[2].bytes, 0.0);
  // a selector keeps the listed ids
  const MeasurementSet one = read_measurements(write("own2.json", kOwnFile) + "#c1");
  ASSERT_EQ(one.kernels.size(), 1u);
  EXPECT_EQ(one.kernels[0].operation, "copy");
}

// The project's own sweeps carry no record ids: "dtype=X" items select by dtype (a record without
// one is bf16), so one sweep can be split between a fit and its held-out set.
TEST(KernelMeasurement, OwnFormatRecordsSelectedByDtype) {
  std::string text = kOwnFile;
  for (const char* id : {"\"id\": \"g1\", ", "\"id\": \"c1\", ", "\"id\": \"l1\", ", "\"id\": \"n1\", "})
    text.erase(text.find(id), std::string(id).size());
  const std::string fp8 = R"({"kernel": "gemm", "dtype": "fp8", "m": 8192, "n": 8192, "k": 8192, "time_s": 9e-4, "repetitions": 10},
    {"kernel": "elementwise")";
  text.replace(text.find(R"({"kernel": "elementwise")"), std::string(R"({"kernel": "elementwise")").size(), fp8);
  const std::string path = write("own_dtypes.json", text);
  ASSERT_EQ(read_measurements(path).kernels.size(), 4u);
  const MeasurementSet only_fp8 = read_measurements(path + "#dtype=fp8");
  ASSERT_EQ(only_fp8.kernels.size(), 1u);
  EXPECT_EQ(only_fp8.kernels[0].precision, Precision::fp8);
  EXPECT_EQ(only_fp8.kernels[0].m, 8192u);
  // bf16: the bf16 GEMM, and the copy and the launch, whose dtype is the default.
  EXPECT_EQ(read_measurements(path + "#dtype=bf16").kernels.size(), 3u);
  EXPECT_EQ(read_measurements(path + "#dtype=fp16,dtype=fp8").kernels.size(), 1u);
  const SpecError bad = error_of([&] { read_measurements(path + "#dtype=int3"); });
  EXPECT_EQ(bad.file(), path);
  EXPECT_NE(bad.message().find("got \"int3\""), std::string::npos) << bad.message();
}

TEST(KernelMeasurement, MalformedOwnFilesNameTheJsonPath) {
  auto path_of = [](const std::string& from, const std::string& to) {
    std::string text = kOwnFile;
    text.replace(text.find(from), from.size(), to);
    return error_of([&] { read_measurements(write("bad.json", text)); }).json_path();
  };
  EXPECT_EQ(path_of("\"time_s\": 1.5e-3", "\"time_s\": -1"), "/measurements/1/time_s");
  EXPECT_EQ(path_of("\"kernel\": \"gemm\"", "\"kernel\": \"matmul\""), "/measurements/0/kernel");
  EXPECT_EQ(path_of("\"dtype\": \"bf16\"", "\"dtype\": \"int8\""), "/measurements/0/dtype");
  EXPECT_EQ(path_of("\"m\": 4096", "\"m\": 0"), "/measurements/0/m");
  EXPECT_EQ(path_of("\"repetitions\": 50", "\"repetitons\": 50"), "/measurements/0/repetitions");
  EXPECT_EQ(path_of("clustersim-measurements/1", "clustersim-measurements/9"), "/format");
  EXPECT_EQ(path_of("\"name\": \"NVIDIA A100-SXM4-40GB\", ", ""), "/device/name");
}

TEST(KernelMeasurement, PublishedRecords) {
  const char* records = R"json([
    {"id": "micro-0001", "kind": "gemm", "gpu": "NVIDIA H100 80GB HBM3", "dtype": "fp8", "M": 1024, "N": 2048,
     "K": 4096, "tflops": 500},
    {"id": "micro-0002", "kind": "attention_kernel", "gpu": "NVIDIA A100-SXM4-80GB", "kernel": "Flash Attention 2.0",
     "tflops": 180, "notes": "head dimension of 64, a batch size of 2, and a sequence length of 8192."},
    {"id": "micro-0003", "kind": "vendor_spec", "gpu": "NVIDIA L4", "spec": {}},
    {"id": "micro-0004", "kind": "gemm", "gpu": "NVIDIA GH200 SXM", "dtype": "bf16", "M": 1, "N": 1, "K": 1, "tflops": 1},
    {"id": "micro-0005", "kind": "gemm", "gpu": "AMD MI300X", "dtype": "bf16", "M": 8, "N": 8, "K": 8, "tflops": 1},
    {"id": "micro-0006", "kind": "gemm", "gpu": "NVIDIA GB200 185GB (Azure ND GB200 v6)",
     "dtype": "nvfp4 (FP4 per source)", "M": 1024, "N": 2048, "K": 4096, "tflops": 500}
  ])json";
  const std::string path = write("microbench.json", records);
  const MeasurementSet s = read_measurements(path);
  ASSERT_EQ(s.kernels.size(), 4u);
  EXPECT_EQ(s.skipped, 2u);  // the vendor spec and the GPU the catalogue lacks (GH200)
  EXPECT_EQ(s.kernels[2].gpu, "mi300x");
  EXPECT_EQ(s.kernels[2].precision, Precision::bf16);
  // nvfp4: half-byte operands, bf16 output
  EXPECT_EQ(s.kernels[3].gpu, "gb200");
  EXPECT_EQ(s.kernels[3].precision, Precision::nvfp4);
  EXPECT_DOUBLE_EQ(s.kernels[3].bytes, (1024.0 * 4096 + 4096.0 * 2048) * 0.5 + 1024.0 * 2048 * 2);
  // fp8 GEMM: 1-byte operands, bf16 output; time = 2 m n k / 500e12.
  const KernelMeasurement& g = s.kernels[0];
  EXPECT_EQ(g.gpu, "h100-sxm5-80gb");
  EXPECT_EQ(g.precision, Precision::fp8);
  EXPECT_DOUBLE_EQ(g.bytes, 1024.0 * 4096 + 4096.0 * 2048 + 1024.0 * 2048 * 2);
  EXPECT_DOUBLE_EQ(g.time_s, 2.0 * 1024 * 2048 * 4096 / 500e12);
  EXPECT_EQ(g.source, path + "#micro-0001");
  // FlashAttention: 2048 / 64 = 32 heads, batch 2 x 32, flops 4 b s^2 heads d.
  const KernelMeasurement& a = s.kernels[1];
  EXPECT_EQ(a.kernel, KernelClass::attention);
  EXPECT_EQ(a.batch, 64u);
  EXPECT_EQ(a.m, 8192u);
  EXPECT_EQ(a.k, 64u);
  EXPECT_DOUBLE_EQ(a.flops, 4.0 * 2 * 8192.0 * 8192 * 32 * 64);
  EXPECT_EQ(read_measurements(path + "#micro-0002..micro-0003").kernels.size(), 1u);
  EXPECT_EQ(g.timing, KernelTiming::per_call);  // no library named: a time per call
}

TEST(KernelMeasurement, DeepGemmTablesAreKernelDurations) {
  // DeepGEMM's tests time its kernels with a profiler (bench_kineto); cuBLASLt tables are per call.
  const char* records = R"json([
    {"id": "micro-0001", "kind": "gemm", "gpu": "NVIDIA H800 (SXM)",
     "dtype": "fp8 e4m3 in (1x128/128x128 block scaling), bf16 out", "library": "DeepGEMM (JIT, Hopper wgmma)",
     "M": 64, "N": 2112, "K": 7168, "tflops": 206},
    {"id": "micro-0002", "kind": "gemm", "gpu": "NVIDIA H100 80GB HBM3", "dtype": "fp8", "library": "cuBLASLt",
     "M": 1024, "N": 1024, "K": 1024, "tflops": 274.1}
  ])json";
  const MeasurementSet s = read_measurements(write("deepgemm.json", records));
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[0].gpu, "h100-sxm5-80gb");
  EXPECT_EQ(s.kernels[0].timing, KernelTiming::kernel_duration);
  EXPECT_EQ(s.kernels[1].timing, KernelTiming::per_call);
  // the own format: "timing" per record, per_call by default, anything else refused with its path
  std::string own = kOwnFile;
  own.replace(own.find("\"library\": \"cublasLt\""), 21, "\"timing\": \"kernel_duration\"");
  const MeasurementSet o = read_measurements(write("own_timing.json", own));
  EXPECT_EQ(o.kernels[0].timing, KernelTiming::kernel_duration);
  EXPECT_EQ(o.kernels[1].timing, KernelTiming::per_call);
  std::string bad = kOwnFile;
  bad.replace(bad.find("\"library\": \"cublasLt\""), 21, "\"timing\": \"wall\"");
  const SpecError e = error_of([&] { read_measurements(write("bad_timing.json", bad)); });
  EXPECT_EQ(e.json_path(), "/measurements/0/timing");
  EXPECT_NE(std::string(e.what()).find("expected \"per_call\" or \"kernel_duration\""), std::string::npos) << e.what();
}

TEST(KernelMeasurement, DeviceNamesMapToCatalogueIds) {
  EXPECT_EQ(gpu_id_for_device("NVIDIA H100 80GB HBM3"), "h100-sxm5-80gb");
  EXPECT_EQ(gpu_id_for_device("NVIDIA H100 PCIe"), "h100-pcie-80gb");
  EXPECT_EQ(gpu_id_for_device("NVIDIA A100-SXM4-40GB"), "a100-sxm4-40gb");
  EXPECT_EQ(gpu_id_for_device("NVIDIA A100-SXM4-80GB"), "a100-sxm4-80gb");
  EXPECT_EQ(gpu_id_for_device("NVIDIA H200 141GB"), "h200-sxm-141gb");
  EXPECT_EQ(gpu_id_for_device("NVIDIA GH200 SXM"), "");
  EXPECT_EQ(gpu_id_for_device("NVIDIA L40S"), "");
  EXPECT_EQ(gpu_id_for_device("NVIDIA L4"), "l4");
  EXPECT_EQ(gpu_id_for_device("NVIDIA B200 SXM"), "b200");
}

}  // namespace
}  // namespace clustersim
