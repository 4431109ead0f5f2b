#!/usr/bin/env python3
"""Speed benchmark of parallel training (run by hand, not a timed test).

GPT-3 175B with tensor, pipeline and data parallelism (tp 8, pp 8, sequence parallel, ZeRO-1,
global batch 1536) on the DGX H100 SuperPOD preset: 1,024 GPUs (dp 16) at analytical and flow
fidelity, and 16,384 GPUs (dp 256, three fabric tiers) at analytical fidelity. Prints, per run, the
wall-clock seconds, the peak resident memory of the simulation, the simulated step and what was
simulated. Targets (issue 6): 1,024 GPUs in <= 10 s flow and <= 1 s analytical on one core.

    python3 bench/bench_parallel.py [--cli build/bin/clustersim]
"""
import argparse
import json
import resource
import subprocess
import sys
import time

RUNS = [
    ("1,024 GPUs", 128, 16, [], "analytical"),
    ("1,024 GPUs", 128, 16, [], "flow"),
    ("16,384 GPUs", 2048, 256, ["--set", "cluster.fabric.tiers=3"], "analytical"),
]


def measure(cli, nodes, dp, extra, fidelity):
    args = [cli, "simulate", "--cluster", "dgx-h100-superpod", "--set", f"cluster.nodes={nodes}",
            "--workload", "gpt3-175b", "--set", f"parallelism.dp={dp}", "--fidelity", fidelity, "--json"] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"clustersim failed:\n{proc.stderr}")
    report = json.loads(proc.stdout)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, after.ru_maxrss * 1024, report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/bin/clustersim")
    a = parser.parse_args()
    print(f"{'run':<12} {'fidelity':<10} {'wall s':>7} {'cpu s':>6} {'peak RSS':>9} {'step s':>8} {'MFU':>6} "
          f"{'ops':>8} {'flows':>9}")
    for label, nodes, dp, extra, fidelity in RUNS:
        wall, cpu, rss, r = measure(a.cli, nodes, dp, extra, fidelity)
        print(f"{label:<12} {fidelity:<10} {wall:7.2f} {cpu:6.2f} {rss / 2**20:7.0f} MiB {r['step_time_s']:8.3f} "
              f"{r['mfu']:6.1%} {r['run']['ops_simulated']:8d} {r['run']['transfers_simulated']:9d}")


if __name__ == "__main__":
    main()
