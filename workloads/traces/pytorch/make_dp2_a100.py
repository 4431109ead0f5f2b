#!/usr/bin/env python3
"""Writes the example PyTorch profiler (Kineto) traces dp2_a100.rank{0,1}.json.

SYNTHETIC: written by this script, not recorded. They imitate what torch.profiler exports for one
data-parallel training step of a two-layer MLP (hidden 4096, 4096 tokens per rank, bf16) on two A100
SXM4 GPUs with DDP: cuBLAS GEMM and elementwise kernels on the compute stream, two gradient-bucket
all-reduces (NCCL ring kernels) on the NCCL stream overlapping the backward pass, and a fused Adam
step that waits for the last all-reduce. Kernel names follow PyTorch 2.x / NCCL 2.18 conventions;
durations are plausible A100 figures (a 4096x4096x16384 bf16 GEMM in ~2.2 ms). The first all-reduce
is described by a record_param_comms CPU op that encloses its launch, the second by its kernel's own
args (newer PyTorch), so both ways are exercised. docs/traces.md describes them.

    python3 workloads/traces/pytorch/make_dp2_a100.py
"""
import json
import os

GEMM = "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn"
GEMM_NN = "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nn"
GELU = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}, at::detail::Array<char*, 2>)"
GELU_BWD = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}, at::detail::Array<char*, 3>)"
ADAM = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)0, false>, float*, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)0, false>, float*, double, double, double, double, double, bool, float*, float*)"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"

COMPUTE_STREAM = 7
NCCL_STREAM = 22
CPU_TID = 2001
BUCKET_NELEMS = 4096 * 16384  # fp32 gradients of one 4096 x 16384 weight


def comm_args(rank):
    return {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": BUCKET_NELEMS,
            "Out msg nelems": BUCKET_NELEMS, "In split size": "[]", "Out split size": "[]",
            "Global rank start": 0, "Global rank stride": 1, "Group size": 2, "Rank": rank,
            "Process Group Name": "0", "Process Group Description": "default_pg",
            "Process Group Ranks": "[0, 1]"}


def trace(rank):
    t0 = 1_700_000_000_000.0 + 25.0 * rank  # µs, like Kineto's absolute timestamps
    jitter = 1.0 + 0.004 * rank             # rank 1's kernels run 0.4 % longer
    events = []
    correlation = [100]
    external = [10]

    def cpu_op(name, ts, dur, args=None):
        external[0] += 1
        a = {"External id": external[0], "Record function id": 0}
        a.update(args or {})
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": CPU_TID,
                       "ts": t0 + ts, "dur": dur, "args": a})
        return external[0]

    def launch(name, cpu_ts, gpu_ts, dur, stream, ext, cat="kernel", args=None, runtime="cudaLaunchKernel"):
        correlation[0] += 1
        c = correlation[0]
        events.append({"ph": "X", "cat": "cuda_runtime", "name": runtime, "pid": 1, "tid": CPU_TID,
                       "ts": t0 + cpu_ts, "dur": 4.0, "args": {"correlation": c, "External id": ext}})
        a = {"device": rank, "stream": stream, "correlation": c, "External id": ext}
        a.update(args or {})
        events.append({"ph": "X", "cat": cat, "name": name, "pid": rank, "tid": stream,
                       "ts": t0 + gpu_ts, "dur": round(dur, 3), "args": a})
        return gpu_ts + dur

    def backward_mm(cpu_ts, dims, end):
        """A backward bf16 GEMM (aten::mm) launched 4 us after its CPU op starts, after `end`."""
        ext = cpu_op("aten::mm", cpu_ts, 9.0, {"Input Dims": dims, "Input type": ["c10::BFloat16"] * 2})
        return launch(GEMM_NN, cpu_ts + 4.0, end, 2200.0 * jitter, COMPUTE_STREAM, ext)

    # Input batch to the GPU.
    ext = cpu_op("aten::copy_", 0.0, 12.0)
    end = launch("Memcpy HtoD (Pageable -> Device)", 2.0, 20.0, 180.0, COMPUTE_STREAM, ext, "gpu_memcpy",
                 {"bytes": 4096 * 4096 * 2}, "cudaMemcpyAsync")
    # Forward: up projection, GeLU, down projection.
    ext = cpu_op("aten::addmm", 30.0, 10.0, {"Input Dims": [[16384], [4096, 4096], [4096, 16384], [], []],
                                               "Input type": ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"]})
    end = launch(GEMM, 34.0, end, 2200.0 * jitter, COMPUTE_STREAM, ext)
    ext = cpu_op("aten::gelu", 45.0, 8.0)
    end = launch(GELU, 48.0, end, 180.0 * jitter, COMPUTE_STREAM, ext)
    ext = cpu_op("aten::addmm", 56.0, 10.0, {"Input Dims": [[4096], [4096, 16384], [16384, 4096], [], []],
                                               "Input type": ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"]})
    end = launch(GEMM, 60.0, end, 2200.0 * jitter, COMPUTE_STREAM, ext)
    # Backward of the down projection: data and weight gradients.
    end = backward_mm(80.0, [[4096, 4096], [4096, 16384]], end)
    end = backward_mm(92.0, [[4096, 4096], [4096, 16384]], end)
    # Bucket 1 all-reduce: record_param_comms encloses the launch (its External id is not the kernel's).
    ext = cpu_op("nccl:all_reduce", 104.0, 30.0)
    cpu_op("record_param_comms", 106.0, 20.0, comm_args(rank))
    ar1_end = launch(ALLREDUCE, 112.0, end + 5.0, 1300.0, NCCL_STREAM, ext)
    # Backward of GeLU and of the up projection, overlapping the all-reduce.
    ext = cpu_op("aten::gelu_backward", 140.0, 8.0)
    end = launch(GELU_BWD, 143.0, end, 270.0 * jitter, COMPUTE_STREAM, ext)
    end = backward_mm(152.0, [[4096, 16384], [16384, 4096]], end)
    end = backward_mm(164.0, [[4096, 16384], [16384, 4096]], end)
    # Bucket 2 all-reduce: the kernel carries the collective's metadata itself.
    ext = cpu_op("nccl:all_reduce", 176.0, 30.0)
    ar2_end = launch(ALLREDUCE, 182.0, max(end, ar1_end) + 5.0, 1300.0, NCCL_STREAM, ext, args=comm_args(rank))
    # Optimizer: launched early, waits on the compute stream for the last all-reduce (work.wait()).
    ext = cpu_op("aten::_fused_adam_", 200.0, 12.0)
    launch(ADAM, 204.0, ar2_end + 3.0, 1100.0 * jitter, COMPUTE_STREAM, ext)

    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": rank, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920,
                              "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
        "traceEvents": sorted(events, key=lambda e: e["ts"]),
        "traceName": f"dp2_a100.rank{rank}.json",
        "displayTimeUnit": "ms",
    }


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for rank in (0, 1):
        with open(os.path.join(here, f"dp2_a100.rank{rank}.json"), "w") as f:
            json.dump(trace(rank), f, indent=1)
            f.write("\n")
