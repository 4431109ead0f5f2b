#!/usr/bin/env python3
"""`clustersim compare --gpus N` of every shipped cluster preset for every shipped training workload
preset (issue 23's check that designs compare at equal scale): per workload, the wall seconds, how many
designs reached N GPUs and simulated, and the reason of every row that did not.

Run by hand: `python3 bench/bench_compare_gpus.py [--cli build/bin/clustersim] [--gpus 1024]
[--fidelity analytical]`.
"""
import argparse
import json
import subprocess
import time


def names(cli: str, kind: str) -> list:
    out = subprocess.run([cli, "presets", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)[kind]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", default="build/bin/clustersim")
    p.add_argument("--gpus", type=int, default=1024)
    p.add_argument("--fidelity", default="analytical")
    a = p.parse_args()
    clusters = names(a.cli, "clusters")
    workloads = names(a.cli, "workloads")
    reasons = {}
    for w in workloads:
        cmd = [a.cli, "compare", "--workload", w, "--gpus", str(a.gpus), "--fidelity", a.fidelity, "--json"]
        for c in clusters:
            cmd += ["--cluster", c]
        t0 = time.perf_counter()
        run = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if not run.stdout.strip():
            print(f"{w:<16} exit {run.returncode}: {run.stderr.strip()[:300]}")
            continue
        designs = json.loads(run.stdout)["designs"]
        ok = [d for d in designs if "error" not in d]
        print(f"{w:<16} exit {run.returncode}  {wall:6.1f} s  {len(ok)}/{len(designs)} designs at {a.gpus} GPUs")
        for d in designs:
            if "error" in d:
                reason = d["error"].split(": ", 2)[-1][:110]
                reasons.setdefault(reason, []).append(f"{w}/{d['design']}")
    print("rows without a result, by reason:")
    for reason, rows in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(rows):3d}  {reason}")


if __name__ == "__main__":
    main()
