#pragma once
// A streaming copy kernel (16-byte vector loads and stores, grid-stride), shared by copy_bandwidth and
// l2_bandwidth: what a memory-bound elementwise kernel of the model does at best.
#include <string>

#include <cuda_runtime.h>

#include "bench_common.hpp"

namespace clustersim_bench {

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

// Enough blocks to fill the GPU several times over, no more than the work needs.
inline void launch_copy(const void* in, void* out, size_t bytes, int sm_count, cudaStream_t stream = nullptr) {
  const size_t n = bytes / sizeof(float4);
  const int threads = 256;
  size_t blocks = (n + threads - 1) / threads;
  const size_t cap = size_t(sm_count) * 8;
  if (blocks > cap) blocks = cap;
  if (blocks == 0) blocks = 1;
  copy_kernel<<<unsigned(blocks), threads, 0, stream>>>(static_cast<const float4*>(in), static_cast<float4*>(out), n);
}

// The input and output buffers of `bytes` each, the input zeroed.
struct CopyBuffers {
  void* in = nullptr;
  void* out = nullptr;
  explicit CopyBuffers(size_t bytes) {
    BENCH_CHECK_CUDA(cudaMalloc(&in, bytes));
    BENCH_CHECK_CUDA(cudaMalloc(&out, bytes));
    BENCH_CHECK_CUDA(cudaMemset(in, 0, bytes));
  }
  CopyBuffers(const CopyBuffers&) = delete;
  CopyBuffers& operator=(const CopyBuffers&) = delete;
  ~CopyBuffers() {
    cudaFree(in);
    cudaFree(out);
  }
};

// One copy's measurement record (the fields after the id): `size` bytes read and written in `time_s`;
// `extra` adds fields (", \"library\": ...").
inline std::string copy_record(double size, double time_s, int repetitions, const std::string& extra) {
  return "\"kernel\": \"elementwise\", \"role\": \"copy\", \"dtype\": \"fp32\", \"bytes\": " + number(2.0 * size) +
         ", \"time_s\": " + number(time_s) + ", \"repetitions\": " + std::to_string(repetitions) + extra;
}

}  // namespace clustersim_bench
