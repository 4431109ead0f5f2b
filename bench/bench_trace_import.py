#!/usr/bin/env python3
"""Speed and memory of importing a large PyTorch profiler trace (run by hand, not a timed test).

Writes a synthetic Kineto trace of about --mb megabytes (default 50) shaped like a real one
(PyTorch 2.x): per GEMM an aten::mm CPU op with Input Dims, a cudaLaunchKernel and the kernel; an
elementwise kernel after each; every 20 GEMMs a gradient all-reduce (record_param_comms with its
metadata, an nccl:all_reduce record function, the NCCL kernel on its own stream); Python call stacks
in the CPU ops' args as the profiler writes them with with_stack=True. Then runs
build/bench/bench_trace_import on it --repeat times and prints the least wall time and the largest
peak RSS against issue 17's target (50 MB: <= 5 s, <= 1 GB).

    python3 bench/bench_trace_import.py [--mb 50] [--bench build/bench/bench_trace_import] [--repeat 3]
        [--out /tmp/clustersim_bench_trace.json]
"""
import argparse
import json
import os
import subprocess


def write_trace(path, megabytes):
    stack = "; ".join(f"/opt/app/model/layer_{i}.py(12{i}): forward" for i in range(4))
    events = []
    size = 0
    ts = 0.0
    corr = 0
    i = 0
    target = megabytes * 1e6
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}, '
                '"traceEvents": [\n')
        first = True
        while size < target:
            corr += 1
            ext = corr
            batch = [
                {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts, "dur": 8.0,
                 "args": {"External id": ext, "Input Dims": [[4096, 4096], [4096, 4096]],
                          "Input type": ["c10::BFloat16", "c10::BFloat16"], "Call stack": stack}},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 2,
                 "dur": 4.0, "args": {"correlation": corr, "External id": ext}},
                {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                 "pid": 0, "tid": 7, "ts": ts + 10, "dur": 250.0,
                 "args": {"stream": 7, "correlation": corr, "External id": ext, "grid": [132, 1, 1],
                          "block": [384, 1, 1]}},
            ]
            corr += 1
            batch += [
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 9,
                 "dur": 4.0, "args": {"correlation": corr}},
                {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>(...)",
                 "pid": 0, "tid": 7, "ts": ts + 261, "dur": 30.0, "args": {"stream": 7, "correlation": corr}},
            ]
            if i % 20 == 19:
                corr += 1
                meta = {"Collective name": "allreduce", "In msg nelems": 16777216, "Out msg nelems": 16777216,
                        "dtype": "Float", "Process Group Name": "0", "Process Group Description": "default_pg",
                        "Process Group Ranks": "[0]", "Group size": 1}
                batch += [
                    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": ts + 14,
                     "dur": 10.0, "args": dict(meta, **{"External id": corr})},
                    {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 1, "tid": 1, "ts": ts + 15,
                     "dur": 8.0, "args": {"Input Dims": [[16777216]], "Input type": ["float"]}},
                    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 16,
                     "dur": 4.0, "args": {"correlation": corr, "External id": corr}},
                    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                     "pid": 0, "tid": 20, "ts": ts + 300, "dur": 400.0,
                     "args": {"stream": 20, "correlation": corr, "External id": corr}},
                ]
            ts += 300.0
            i += 1
            for e in batch:
                text = ("" if first else ",\n") + json.dumps(e)
                first = False
                f.write(text)
                size += len(text)
        f.write("\n]}\n")
    return os.path.getsize(path), i


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--bench", default="build/bench/bench_trace_import")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="/tmp/clustersim_bench_trace.json")
    a = ap.parse_args()
    size, gemms = write_trace(a.out, a.mb)
    runs = []
    for _ in range(a.repeat):
        out = subprocess.run([a.bench, a.out], check=True, capture_output=True, text=True).stdout
        runs.append({k: float(v) for k, v in (line.split() for line in out.splitlines())})
    wall = min(r["import_wall_s"] for r in runs)
    rss = max(r["peak_rss_bytes"] for r in runs)
    print(f"trace: {size / 1e6:.1f} MB, {gemms} GEMMs, {int(runs[0]['ops'])} ops")
    print(f"import: {wall:.2f} s (least of {a.repeat}; most {max(r['import_wall_s'] for r in runs):.2f} s), "
          f"peak RSS {rss / 1e9:.2f} GB")
    print(f"target (issue 17): <= 5 s and <= 1 GB for 50 MB: {'met' if wall <= 5 and rss <= 1e9 else 'NOT met'}")


if __name__ == "__main__":
    main()
