#!/usr/bin/env python3
"""Speed benchmark of the Python package (run by hand, not a timed test).

1. Import + quickstart: a fresh interpreter imports `clustersim` and simulates the quickstart
   (GPT-3 1.3B on 8 DGX H100 nodes) and reads its breakdown DataFrame; wall seconds of the whole process, and of each part.
   Then the same simulation with its timeline recorded and read as a DataFrame (what a timeline costs;
   not part of the target).
2. A sweep of 1,000 configurations of GPT-3 1.3B (global batch 1024) on DGX H100 fat-trees:
   nodes {2, 4, 8, 16, 32} x oversubscription {1, 1.5, 2, 3, 4} x rail-optimized {yes, no} x
   micro-batch {1, 2, 4, 8} x link latency {0.5, 1, 2, 4, 8} us, with n_jobs=-1 (one per CPU).
   Uses the analytical fidelity when the core has it, flow otherwise (--fidelity to choose).

    PYTHONPATH=build/python .venv/bin/python bench/bench_sweep.py [--fidelity flow] [--configs 1000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time

QUICKSTART = """
import time
t0 = time.perf_counter()
import clustersim as cs
t1 = time.perf_counter()
report = cs.simulate(cs.Cluster.preset("dgx-h100-superpod", nodes=8), cs.Workload.preset("gpt3-1.3b"))
breakdown = report.breakdown  # the first DataFrame imports pandas
t2 = time.perf_counter()
timeline = cs.simulate(cs.Cluster.preset("dgx-h100-superpod", nodes=8), cs.Workload.preset("gpt3-1.3b"),
                       timeline=True).timeline()
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "simulate_s": t2 - t1, "step_time_s": report.step_time_s,
                  "timeline_s": t3 - t2, "slices": len(timeline)}))
"""


def quickstart() -> None:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", "import json" + QUICKSTART], check=True, capture_output=True,
                         text=True).stdout
    wall = time.perf_counter() - start
    m = json.loads(out)
    print(f"import + quickstart: {wall - m['timeline_s']:.2f} s for the whole process without the timeline part "
          f"(import {m['import_s']:.2f} s, simulate and breakdown {m['simulate_s']:.2f} s; target <= 2 s)")
    print(f"the same with its timeline: {m['timeline_s']:.2f} s (simulate, record and read {m['slices']:,} slices "
          f"into a DataFrame)")


def sweep(fidelity: str, configs: int) -> None:
    import clustersim as cs

    grid = {
        "nodes": [2, 4, 8, 16, 32],
        "fabric.oversubscription": [1, 1.5, 2, 3, 4],
        "fabric.rail_optimized": [True, False],
        "training.micro_batch": [1, 2, 4, 8],
        "fabric.link_latency_us": [0.5, 1, 2, 4, 8],
    }
    points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())][:configs]
    workload = cs.Workload.preset("gpt3-1.3b", training={"global_batch": 1024})
    start = time.perf_counter()
    df = cs.sweep("dgx-h100-superpod", workload, points, fidelity=fidelity, progress=False)
    wall = time.perf_counter() - start
    errors = int(df["error"].notna().sum())
    print(f"sweep: {len(df)} configurations at {fidelity} fidelity in {wall:.1f} s "
          f"({len(df) / wall * 60:.0f} per minute) on {os.cpu_count()} CPUs; {errors} error rows; "
          f"target <= 120 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fidelity", default=None, help="analytical when available, else flow")
    parser.add_argument("--configs", type=int, default=1000)
    a = parser.parse_args()
    import clustersim as cs

    fidelity = a.fidelity or ("analytical" if "analytical" in cs.fidelities() else "flow")
    quickstart()
    sweep(fidelity, a.configs)


if __name__ == "__main__":
    main()
