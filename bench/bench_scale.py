#!/usr/bin/env python3
"""Scaling benchmark (issue 21): cost of the simulator against the number of GPUs.

Runs `clustersim` (a fresh process per run, so process start and spec reading are included) on:

- the 405B-class step: Llama 3 405B (bench/data/llama3-405b-class.json: tp 8, pp 16 interleaved with
  2 virtual stages, sequence parallel, ZeRO-1, 16 sequences of 8,192 tokens per data-parallel rank)
  with dp = GPUs / 128 and global batch 16 x dp (weak scaling: each replica's work stays fixed);
- a 1 GiB all-reduce over every GPU (`clustersim collective`, the selector's algorithm, or
  `--algorithm tree` for NCCL's tree);
- GPT-3 175B (the preset: tp 8, pp 8, dp 16) on 1,024 GPUs of the preset's 2-tier fabric.

at 1,024, 4,096, 16,384, 65,536 and 131,072 GPUs on the DGX H100 SuperPOD preset, its fabric a
3-tier fat-tree of radix 128 at every size (radix 64 stops at 65,536 NICs with 3 tiers; one fabric
shape for the whole sweep keeps the exponent a property of the simulator, not of the fabric).

Prints per run the wall seconds, CPU seconds (user + system) and peak RSS of that one process
(/usr/bin/time), the simulated result and the op/transfer counts; with --repeat N the median of N runs
(RSS: the largest). Then, per case and fidelity, the least-squares exponent of log wall time, log
CPU time and log peak RSS against log GPUs over the runs from 16,384 to 131,072 GPUs. A run past
--timeout seconds is killed and reported as such; larger sizes of that case and fidelity are skipped.

    .venv/bin/python bench/bench_scale.py [--cli build/bin/clustersim] [--max-gpus 131072]
        [--fidelity analytical flow] [--cases step allreduce gpt3] [--repeat 3] [--timeout 480]
        [--json out.json] [--routing d_mod_k] [--exhaustive] [--adaptive-classes] [--save DIR]

On a shared machine CPU seconds are the figure to compare: wall seconds include waiting for a core.
"""
import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [1024, 4096, 16384, 65536, 131072]
FABRIC = ["--set", "cluster.fabric.tiers=3", "--set", "cluster.fabric.switch_radix=128"]


def step_args(gpus, routing=None, exhaustive=False, adaptive_classes=False):
    dp = gpus // 128
    extra = ["--set", f"cluster.fabric.routing={routing}"] if routing else []
    extra += ["--exhaustive"] if exhaustive else []
    extra += ["--adaptive-classes"] if adaptive_classes else []
    return ["simulate", "--cluster", "dgx-h100-superpod", "--set", f"cluster.nodes={gpus // 8}", *FABRIC, *extra,
            "--workload", os.path.join(HERE, "data", "llama3-405b-class.json"),
            "--set", f"workload.parallelism.dp={dp}", "--set", f"workload.training.global_batch={16 * dp}",
            "--json"]


def allreduce_args(gpus, algorithm):
    fabric = [a.replace("cluster.", "") for a in FABRIC]
    extra = ["--algorithm", algorithm] if algorithm != "auto" else []
    return ["collective", "--cluster", "dgx-h100-superpod", "--set", f"nodes={gpus // 8}", *fabric,
            "--min-bytes", "1G", "--max-bytes", "1G", "--json", *extra]


def gpt3_args(gpus, adaptive_classes=False):
    # The preset's 2-tier fabric, as bench_parallel.py and issue 21 run it.
    return ["simulate", "--cluster", "dgx-h100-superpod", "--set", f"cluster.nodes={gpus // 8}",
            "--workload", "gpt3-175b",
            "--set", f"workload.parallelism.dp={gpus // 64}", "--json",
            *(["--adaptive-classes"] if adaptive_classes else [])]


def measure(cli, args, fidelity, timeout, save=None):
    """One process under /usr/bin/time: (wall s, cpu s, peak RSS bytes, parsed JSON), or None when it
    ran past the timeout (its process group is killed). `save`: a file to write its stdout to."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as usage:
        start = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-o", usage.name, "-f", "%U %S %M", cli, *args,
                                 "--fidelity", fidelity], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"clustersim {' '.join(args)} --fidelity {fidelity} failed ({proc.returncode}):\n{err}")
        user, system, rss_kib = usage.read().split()[-3:]
    if save:
        with open(save, "w") as f:
            f.write(out)
    return wall, float(user) + float(system), int(rss_kib) * 1024, json.loads(out)


def summary(case, result):
    if case == "step":
        run = result["run"]
        return f"step {result['step_time_s']:.4f} s", run["ops_simulated"], run["transfers_simulated"]
    if case == "gpt3":
        run = result["run"]
        return f"step {result['step_time_s']:.4f} s", run["ops_simulated"], run["transfers_simulated"]
    row = result[0]
    return f"{row['algorithm']} {row['time_us'] / 1e3:.3f} ms", "", ""


def fit(points):
    """Least-squares slope of log y against log x."""
    pts = [(math.log(x), math.log(y)) for x, y in points if y > 0 and not math.isnan(y)]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(HERE, "..", "build", "bin", "clustersim"))
    p.add_argument("--max-gpus", type=int, default=131072)
    p.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    p.add_argument("--fidelity", nargs="+", default=["analytical", "flow"], choices=["analytical", "flow"])
    p.add_argument("--cases", nargs="+", default=["step", "allreduce", "gpt3"],
                   choices=["step", "allreduce", "gpt3"])
    p.add_argument("--algorithm", default="auto", help="all-reduce algorithm (auto, ring, tree, ...)")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--timeout", type=float, default=480, help="seconds before a run is killed")
    p.add_argument("--json", help="write every run's figures to this file")
    p.add_argument("--routing", help="the step's fabric.routing (default: the preset's, adaptive on InfiniBand; "
                   "d_mod_k: static, where the replay simulates one copy per class of identical transfers)")
    p.add_argument("--exhaustive", action="store_true", help="the step with simulate --exhaustive: every transfer "
                   "simulated (no one flow per class of identical transfers), to compare with the default")
    p.add_argument("--adaptive-classes", action="store_true",
                   help="step and gpt3: simulate --adaptive-classes (the default since session 17: traffic "
                   "classes under adaptive routing, checked at every launch, exact; kept for older commands)")
    p.add_argument("--save", help="a folder to write each case's report to (CASE-FIDELITY-GPUS.json, last run), "
                   "for `cmp` against another build's")
    a = p.parse_args()
    if a.save:
        os.makedirs(a.save, exist_ok=True)

    load = os.getloadavg()[0]
    print(f"clustersim scaling bench: {a.cli}; load average {load:.2f} on {os.cpu_count()} cores; "
          f"median of {a.repeat}")
    print(f"{'case':<10} {'fidelity':<10} {'GPUs':>7} {'wall s':>8} {'cpu s':>8} {'peak RSS':>10} "
          f"{'result':<22} {'ops':>8} {'transfers':>10}")
    rows = []
    for case in a.cases:
        for fidelity in a.fidelity:
            sizes = [1024] if case == "gpt3" else [g for g in a.sizes if g <= a.max_gpus]
            for gpus in sizes:
                args = (step_args(gpus, a.routing, a.exhaustive, a.adaptive_classes) if case == "step"
                        else gpt3_args(gpus, a.adaptive_classes) if case == "gpt3"
                        else allreduce_args(gpus, a.algorithm))
                save = os.path.join(a.save, f"{case}-{fidelity}-{gpus}.json") if a.save else None
                runs = [measure(a.cli, args, fidelity, a.timeout, save) for _ in range(a.repeat)]
                if any(r is None for r in runs):
                    print(f"{case:<10} {fidelity:<10} {gpus:>7} {'> ' + str(int(a.timeout)) + ' s (killed)':>28}")
                    rows.append({"case": case, "fidelity": fidelity, "gpus": gpus, "timeout_s": a.timeout})
                    break
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = max(r[2] for r in runs)
                what, ops, transfers = summary(case, runs[0][3])
                print(f"{case:<10} {fidelity:<10} {gpus:>7} {wall:8.2f} {cpu:8.2f} {rss / 2**20:6.0f} MiB "
                      f"{what:<22} {ops:>8} {transfers:>10}", flush=True)
                rows.append({"case": case, "fidelity": fidelity, "gpus": gpus, "wall_s": wall, "cpu_s": cpu,
                             "peak_rss_bytes": rss, "result": what, "ops": ops, "transfers": transfers,
                             "walls_s": [r[0] for r in runs], "cpus_s": [r[1] for r in runs]})

    print("\nfitted exponent (least squares of log y against log GPUs, 16,384 to 131,072 GPUs):")
    for case in ("step", "allreduce"):
        for fidelity in a.fidelity:
            pts = [r for r in rows if r["case"] == case and r["fidelity"] == fidelity and "wall_s" in r
                   and r["gpus"] >= 16384]
            if len(pts) < 2:
                continue
            gp = [r["gpus"] for r in pts]
            print(f"  {case:<10} {fidelity:<10} GPUs {min(gp)}..{max(gp)}: "
                  f"wall {fit([(r['gpus'], r['wall_s']) for r in pts]):.2f}, "
                  f"cpu {fit([(r['gpus'], r['cpu_s']) for r in pts]):.2f}, "
                  f"RSS {fit([(r['gpus'], r['peak_rss_bytes']) for r in pts]):.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"load_average": load, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
