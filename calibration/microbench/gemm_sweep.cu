// gemm_sweep: cuBLASLt GEMM times over shapes and dtypes, as clustersim measurement JSON.
//
// C[m x n] = A[m x k] B[k x n] with A stored transposed ("TN", the layout cuBLASLt requires for fp8
// and the one Megatron-style linear layers use), the heuristic's first algorithm, a 32 MiB workspace.
// dtypes: fp16, bf16 (fp32 accumulation), tf32 and fp32 (fp32 in and out), fp8 (e4m3 in, bf16 out;
// compute capability 8.9+). Each record: kernel "gemm", dtype, m, n, k, time_s (mean of `repetitions`
// back-to-back calls after warm-up, CUDA events), repetitions, library, layout. Operands hold
// pseudo-random values in [-1, 1) (zeros would draw less power and run faster).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "bench_common.hpp"

namespace {

using namespace clustersim_bench;

const char* kUsage =
    "usage: gemm_sweep [--out FILE] [--device N] [--dtypes fp16,bf16,fp8,tf32,fp32] [--reps N]\n"
    "                  [--shapes \"m,n,k;m,n,k\"]\n\n"
    "Times cuBLASLt GEMMs C[m x n] = A[m x k] B[k x n] (TN layout) and writes clustersim measurement\n"
    "JSON (calibration/README.md). Default shapes: squares 512..16384 and the projections of Llama-2-7B,\n"
    "Llama-2-70B and GPT-3 175B layers at 512, 2048 and 8192 tokens. Default dtypes: fp16, bf16, tf32,\n"
    "and fp8 on compute capability 8.9 and newer. Feed the file to `clustersim calibrate`.\n";

std::string cublas_status_text(cublasStatus_t status) {
  return "cuBLAS status " + std::to_string(int(status));
}

#define CHECK_CUBLAS(call) BENCH_CHECK_STATUS(call, CUBLAS_STATUS_SUCCESS, cublas_status_text)

struct DtypeInfo {
  const char* name;
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  int element_bytes_ab, element_bytes_cd;
  int min_compute_capability;  // major * 10 + minor
};
const DtypeInfo kDtypes[] = {
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 70},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 80},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80},
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 89},
};

// Operands filled with values in [-1, 1) from a hash of the index: GEMMs on zeros draw less power
// and run faster than on real data.
template <class T>
__global__ void fill_kernel(T* data, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ unsigned(i >> 32) * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    data[i] = T(float(h & 0xffff) / 32768.0f - 1.0f);
  }
}

template <class T>
void fill_as(void* p, size_t bytes) {
  fill_kernel<<<1024, 256>>>(static_cast<T*>(p), bytes / sizeof(T));
  BENCH_CHECK_CUDA(cudaGetLastError());
}

void fill(void* p, size_t bytes, cudaDataType_t type) {
  switch (type) {
    case CUDA_R_16F:
      return fill_as<__half>(p, bytes);
    case CUDA_R_16BF:
      return fill_as<__nv_bfloat16>(p, bytes);
    case CUDA_R_8F_E4M3:
      return fill_as<__nv_fp8_e4m3>(p, bytes);
    default:
      return fill_as<float>(p, bytes);
  }
}

struct Shape {
  long m, n, k;
};

std::vector<Shape> default_shapes() {
  std::vector<Shape> s;
  for (long d : {512L, 1024L, 2048L, 4096L, 8192L, 16384L})
    s.push_back({d, d, d});
  // (hidden, ffn, gated): the QKV, attention output, MLP up and MLP down projections at tp 1.
  struct Layer {
    long h, f;
    bool gated;
  };
  for (const Layer& l : {Layer{4096, 11008, true}, Layer{8192, 28672, true}, Layer{12288, 49152, false}}) {
    for (long tokens : {512L, 2048L, 8192L}) {
      s.push_back({tokens, 3 * l.h, l.h});
      s.push_back({tokens, l.h, l.h});
      s.push_back({tokens, (l.gated ? 2 : 1) * l.f, l.h});
      s.push_back({tokens, l.h, l.f});
    }
  }
  return s;
}

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> s;
  for (const auto& item : split(text, ';')) {
    const auto v = split(item, ',');
    if (v.size() != 3) {
      std::fprintf(stderr, "bad shape '%s' (expected m,n,k)\n", item.c_str());
      std::exit(2);
    }
    s.push_back({std::atol(v[0].c_str()), std::atol(v[1].c_str()), std::atol(v[2].c_str())});
  }
  return s;
}

int measure(const Options& o, const cudaDeviceProp& prop, MeasurementWriter& writer) {
  const int cc = prop.major * 10 + prop.minor;
  std::vector<std::string> dtypes = o.dtypes;
  if (dtypes.empty()) {
    dtypes = {"fp16", "bf16", "tf32"};
    if (cc >= 89) dtypes.push_back("fp8");
  }
  const std::vector<Shape> shapes = o.shapes.empty() ? default_shapes() : parse_shapes(o.shapes);

  cublasLtHandle_t handle;
  CHECK_CUBLAS(cublasLtCreate(&handle));
  const size_t workspace_bytes = 32u << 20;
  void* workspace = nullptr;
  BENCH_CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));

  for (const auto& name : dtypes) {
    const DtypeInfo* d = nullptr;
    for (const auto& info : kDtypes)
      if (name == info.name) d = &info;
    if (d == nullptr) {
      std::fprintf(stderr, "unknown dtype %s\n", name.c_str());
      return 2;
    }
    if (cc < d->min_compute_capability) {
      std::fprintf(stderr, "skipping %s: needs compute capability %d.%d\n", d->name, d->min_compute_capability / 10,
                   d->min_compute_capability % 10);
      continue;
    }
    for (const Shape& s : shapes) {
      void *a = nullptr, *b = nullptr, *c = nullptr;
      const size_t a_bytes = size_t(s.m) * s.k * d->element_bytes_ab, b_bytes = size_t(s.k) * s.n * d->element_bytes_ab;
      const size_t c_bytes = size_t(s.m) * s.n * d->element_bytes_cd;
      if (cudaMalloc(&a, a_bytes) != cudaSuccess || cudaMalloc(&b, b_bytes) != cudaSuccess ||
          cudaMalloc(&c, c_bytes) != cudaSuccess) {
        std::fprintf(stderr, "skipping %s %ldx%ldx%ld: out of memory\n", d->name, s.m, s.n, s.k);
        cudaFree(a);
        cudaFree(b);
        cudaGetLastError();
        continue;
      }
      fill(a, a_bytes, d->ab);
      fill(b, b_bytes, d->ab);

      cublasLtMatmulDesc_t op;
      CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, d->compute, CUDA_R_32F));
      const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
      CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
      CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
      // Column-major: A^T is stored k x m, B k x n, C m x n.
      cublasLtMatrixLayout_t la, lb, lc;
      CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, d->ab, s.k, s.m, s.k));
      CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, d->ab, s.k, s.n, s.k));
      CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc, d->cd, s.m, s.n, s.m));
      cublasLtMatmulPreference_t pref;
      CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
      CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                        &workspace_bytes, sizeof workspace_bytes));
      cublasLtMatmulHeuristicResult_t heuristic{};
      int found = 0;
      CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle, op, la, lb, lc, lc, pref, 1, &heuristic, &found));
      if (found > 0) {
        const float alpha = 1.0f, beta = 0.0f;
        auto call = [&] {
          CHECK_CUBLAS(cublasLtMatmul(handle, op, &alpha, a, la, b, lb, &beta, c, lc, c, lc, &heuristic.algo, workspace,
                                      workspace_bytes, nullptr));
        };
        const Timing t = time_repeated(call, o.repetitions);
        writer.add("\"kernel\": \"gemm\", \"dtype\": " + json_string(d->name) + ", \"m\": " + std::to_string(s.m) +
                   ", \"n\": " + std::to_string(s.n) + ", \"k\": " + std::to_string(s.k) +
                   ", \"time_s\": " + number(t.time_s) + ", \"repetitions\": " + std::to_string(t.repetitions) +
                   ", \"library\": \"cublasLt\", \"layout\": \"TN\"");
        std::fprintf(stderr, "%s %6ld x %6ld x %6ld  %10.2f us  %8.1f TFLOP/s\n", d->name, s.m, s.n, s.k,
                     t.time_s * 1e6, 2.0 * s.m * s.n * s.k / t.time_s / 1e12);
      } else {
        std::fprintf(stderr, "skipping %s %ldx%ldx%ld: no cuBLASLt algorithm\n", d->name, s.m, s.n, s.k);
      }
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatmulDescDestroy(op);
      cudaFree(a);
      cudaFree(b);
      cudaFree(c);
    }
  }
  cudaFree(workspace);
  cublasLtDestroy(handle);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_single_gpu_benchmark(argc, argv, "gemm_sweep", kUsage, measure);
}
