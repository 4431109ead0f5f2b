#!/usr/bin/env python3
"""Writes a SYNTHETIC PyTorch profiler (Kineto) trace of one training step from a clustersim timeline.

SYNTHETIC: not recorded on a GPU. The step is simulated by clustersim itself with a known ("ground
truth") software-stack profile (kernel_time_scale per class, training.host_op_us, step.fixed_s), and
its timeline (`clustersim simulate --timeline`) is rewritten the way torch.profiler exports a step:

- every op of rank 0's class becomes a GPU activity (cat "kernel") on its stream, with its simulated
  start and duration; compute kernels get names that PyTorch/cuBLAS/NCCL kernels of their class carry
  (so that the importer classes them as the model did), communication ops an ncclDevKernel name;
- op k's CPU launch is a cudaLaunchKernel (cat "cuda_runtime", same correlation id) at
  step.fixed_s + k x host_op that lasts host_op: the host issue model of the replay
  (ReplayOptions::host_op_s), so the GPU is starved exactly when the replay made it wait;
- one ProfilerStep#1 CPU op spans the simulated step.

`clustersim calibrate --from-trace` on such a trace must recover the profile's values (a closed
form: tests/python/test_calibrate_from_trace.py), and bench/bench_calibrate_from_trace.py builds its
leave-one-configuration-out figure from them.

    python3 make_stack_trace.py TIMELINE.json STACK.json OUT.json
"""
import json
import sys

# Kernel names per class, as PyTorch 2.x / cuBLAS / FlashAttention / Apex name them (kernel_names.cpp
# classes each to its class).
KERNEL_NAMES = {
    "gemm": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "attention": "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>",
    "elementwise": "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16>>",
    "normalization": "void layer_norm_fwd_kernel<c10::BFloat16, float>",
    "optimizer": "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>",
    "embedding": "void at::native::indexSelectLargeIndex<c10::BFloat16, long>",
    "loss": "void cross_entropy_fwd_kernel<c10::BFloat16>",
}
COMM_NAMES = {
    "all_reduce": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "all_gather": "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "reduce_scatter": "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "all_to_all": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
    "broadcast": "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "reduce": "ncclDevKernel_Reduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
}
CPU_PID, CPU_TID = 1, 1
GPU_PID = 0
STREAM_BASE = 7  # CUDA stream ids as PyTorch shows them (the compute stream is 7)


def stack_values(stack):
    host_us = float(stack.get("defaults", {}).get("training.host_op_us", 0.0))
    fixed_s = float(stack.get("step", {}).get("fixed_s", 0.0))
    return host_us, fixed_s


def make_trace(timeline, stack):
    host_us, fixed_s = stack_values(stack)
    step_us = timeline["otherData"]["step_time_s"] * 1e6
    events = [
        {"ph": "M", "name": "process_name", "pid": CPU_PID, "args": {"name": "python"}},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": CPU_PID, "tid": CPU_TID,
         "ts": 0.0, "dur": step_us, "args": {"External id": 1}},
    ]
    for e in timeline["traceEvents"]:
        if e.get("ph") != "X" or e.get("pid") != 0:
            continue  # rank 0's class only (the first stage)
        args = e["args"]
        k = args["op"]
        if e["cat"] == "compute":
            name = KERNEL_NAMES[args["kernel"]]
        elif e["cat"] == "collective":
            name = COMM_NAMES[args["collective"]]
        else:
            name = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"
        stream = STREAM_BASE + e["tid"]
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": CPU_PID,
                       "tid": CPU_TID, "ts": fixed_s * 1e6 + k * host_us, "dur": host_us,
                       "args": {"correlation": k + 1}})
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": GPU_PID, "tid": stream, "ts": e["ts"],
                       "dur": e["dur"], "args": {"stream": stream, "correlation": k + 1, "device": 0}})
    return {"schemaVersion": 1, "traceEvents": events,
            "otherData": {"synthetic": "clustersim make_stack_trace.py: simulated, not recorded"}}


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        timeline = json.load(f)
    with open(argv[2]) as f:
        stack = json.load(f)
    with open(argv[3], "w") as f:
        json.dump(make_trace(timeline, stack), f)


if __name__ == "__main__":
    main(sys.argv)
