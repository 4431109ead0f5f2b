#pragma once
// A streaming copy kernel (16-byte vector loads and stores, grid-stride), shared by copy_bandwidth and
// l2_bandwidth: what a memory-bound elementwise kernel of the model does at best.
#include <cuda_runtime.h>

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

}  // namespace clustersim_bench
