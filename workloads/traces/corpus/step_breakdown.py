#!/usr/bin/env python3
"""Where the recorded step of a multi-rank PyTorch profiler (Kineto) world goes.

    step_breakdown.py RANK_FILE... [--json]

For a world whose ranks run the same sequence of NCCL collectives (tensor parallelism: every rank
takes part in every collective), splits each rank's GPU work at its NCCL kernels into segments
(segment j: from the end of collective j-1 to the start of collective j on that rank) and reports:

- per rank: the ProfilerStep span, the span of its GPU work, its compute kernel time (non-NCCL
  kernels, memcpy, memset), its NCCL kernel time (which includes the time the kernel spun waiting
  for the last rank to arrive), and its GPU idle time while the next kernel was not yet launched
  (host-bound: the launch returned after the GPU had gone idle);
- the critical path of the world, in two forms:
  * compute only: the sum over segments of the slowest rank's compute kernel time plus the
    transfer time of each collective (the NCCL kernel duration of the last rank to arrive, which
    did not wait). This is what a replay of the kernels alone gives;
  * recorded: the sum over segments of the slowest rank's time to arrive (compute and host stalls)
    plus the same transfers. It reproduces the recorded step.
The difference between them is host time on the critical path: the CPU launching late.

Files may be gzip-compressed. Only the standard library is used.
"""
import argparse
import gzip
import json
import sys

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def rank_summary(path):
    events = load(path)["traceEvents"]
    launch_end = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch_end[e["args"]["correlation"]] = e["ts"] + e.get("dur", 0)
    gpu = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in GPU_CATS), key=lambda e: e["ts"])
    steps = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    if not gpu:
        sys.exit(f"{path}: no GPU events")
    segments, nccl = [[]], []
    for e in gpu:
        if e.get("cat") == "kernel" and e["name"].startswith("nccl"):
            nccl.append(e)
            segments.append([])
        else:
            segments[-1].append(e)
    host_idle = 0.0
    end = gpu[0]["ts"] + gpu[0]["dur"]
    for e in gpu[1:]:
        if e["ts"] > end:
            launched = launch_end.get(e.get("args", {}).get("correlation"))
            if launched is not None and launched > end:
                host_idle += min(e["ts"], launched) - end
        end = max(end, e["ts"] + e["dur"])
    return {
        "file": path,
        "step_us": max((s["dur"] for s in steps), default=None),
        "gpu_span_us": end - gpu[0]["ts"],
        "compute_us": sum(sum(e["dur"] for e in s) for s in segments),
        "nccl_us": sum(e["dur"] for e in nccl),
        "host_idle_us": host_idle,
        "first_ts": gpu[0]["ts"],
        "last_end": end,
        "segments": segments,
        "nccl": nccl,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args()
    ranks = [rank_summary(f) for f in a.files]
    n = len(ranks[0]["nccl"])
    if any(len(r["nccl"]) != n for r in ranks):
        sys.exit("the ranks launch different numbers of NCCL kernels: not one tensor-parallel world")
    max_compute = max_arrival = transfer = 0.0
    for j in range(n + 1):
        computes, arrivals = [], []
        for r in ranks:
            begin = r["nccl"][j - 1]["ts"] + r["nccl"][j - 1]["dur"] if j > 0 else r["first_ts"]
            stop = r["nccl"][j]["ts"] if j < n else r["last_end"]
            arrivals.append(stop - begin)
            computes.append(sum(e["dur"] for e in r["segments"][j]))
        max_compute += max(computes)
        max_arrival += max(arrivals)
        if j < n:
            last = max(ranks, key=lambda r: r["nccl"][j]["ts"])
            transfer += last["nccl"][j]["dur"]
    out = {
        "ranks": [{k: r[k] for k in ("file", "step_us", "gpu_span_us", "compute_us", "nccl_us", "host_idle_us")}
                  for r in ranks],
        "collectives": n,
        "critical_compute_us": max_compute,
        "critical_arrival_us": max_arrival,
        "transfer_us": transfer,
        "critical_path_compute_only_us": max_compute + transfer,
        "critical_path_recorded_us": max_arrival + transfer,
    }
    if a.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{'rank file':40} {'step ms':>8} {'GPU span':>9} {'compute':>8} {'NCCL':>8} {'host-idle':>9}")
    for r in out["ranks"]:
        step = f"{r['step_us'] / 1e3:8.1f}" if r["step_us"] is not None else f"{'-':>8}"
        print(f"{r['file'][-40:]:40} {step} {r['gpu_span_us'] / 1e3:9.1f} {r['compute_us'] / 1e3:8.1f} "
              f"{r['nccl_us'] / 1e3:8.1f} {r['host_idle_us'] / 1e3:9.1f}")
    print(f"{n} collectives; transfers (last rank to arrive) {transfer / 1e3:.1f} ms")
    print(f"critical path, compute only:  {max_compute / 1e3:.1f} + {transfer / 1e3:.1f} = "
          f"{(max_compute + transfer) / 1e3:.1f} ms")
    print(f"critical path, as recorded:   {max_arrival / 1e3:.1f} + {transfer / 1e3:.1f} = "
          f"{(max_arrival + transfer) / 1e3:.1f} ms (host on it: {(max_arrival - max_compute) / 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
