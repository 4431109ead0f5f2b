#!/usr/bin/env python3
"""Accuracy of clustersim against published training runs (run by hand, not a timed test).

Runs `clustersim validate all --json` (vTrain multi-node and single-node A100 iteration times, the
Megatron-LM A100 2021 and H100 2024 TFLOP/s tables) and prints, per dataset, how many rows were
simulated, unsupported or failed, the error statistics over the simulated rows (MAPE, median, 90th
percentile and max of |error|, bias = mean signed error; error = (predicted - measured) / measured)
against the issue's targets, the wall time, and the most common reasons rows were not simulated.

    python3 bench/bench_validation.py [--cli build/bin/clustersim] [--fidelity flow|analytical]
                                      [--jobs 2] [--limit N] [--dataset all] [--out results.json]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

# Targets of issue 6 (measured figures go in the closing note).
TARGETS = {
    "vtrain-multi": {"mape": 0.10, "p90_abs_error": 0.20},
    "megatron-a100-2021": {"median_abs_error": 0.10},
    "megatron-h100-2024": {"median_abs_error": 0.10},
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(here, "..", "build", "bin", "clustersim"))
    p.add_argument("--fidelity", default="flow")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--limit", type=int, default=0, help="only the first N rows of each dataset")
    p.add_argument("--dataset", nargs="+", default=["all"])
    p.add_argument("--out", help="also write clustersim's results JSON here")
    a = p.parse_args()

    args = [a.cli, "validate", *a.dataset, "--json", "--fidelity", a.fidelity, "--jobs", str(a.jobs)]
    if a.limit:
        args += ["--limit", str(a.limit)]
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"clustersim validate failed (status {proc.returncode}):\n{proc.stderr}")
    results = json.loads(proc.stdout)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=2)

    print(f"clustersim validate ({a.fidelity} fidelity, {a.jobs} jobs): {wall:.1f} s wall")
    header = f"{'dataset':20s} {'metric':18s} {'rows':>5s} {'sim':>5s} {'unsup':>5s} {'fail':>5s} " \
             f"{'MAPE':>7s} {'median':>7s} {'p90':>7s} {'max':>7s} {'bias':>7s}  targets"
    print(header)
    print("-" * len(header))
    for d in results["datasets"]:
        s = d["summary"]
        stats = [s["mape"], s["median_abs_error"], s["p90_abs_error"], s["max_abs_error"], s["bias"]]
        cells = " ".join(f"{100 * v:6.1f}%" if s["simulated"] else f"{'-':>7s}" for v in stats)
        verdicts = []
        for key, limit in TARGETS.get(d["dataset"], {}).items():
            ok = s["simulated"] > 0 and s[key] <= limit
            verdicts.append(f"{key} <= {100 * limit:.0f}%: {'met' if ok else 'NOT met'}")
        if verdicts and s["simulated"] < s["rows"]:
            verdicts.append(f"over {s['simulated']} of {s['rows']} rows")
        print(f"{d['dataset']:20s} {d['metric']:18s} {s['rows']:5d} {s['simulated']:5d} {s['unsupported']:5d} "
              f"{s['failed']:5d} {cells}  {'; '.join(verdicts)}")
    for d in results["datasets"]:
        reasons = collections.Counter(
            f"{r['status']}: {r['reason'].splitlines()[0].split(';')[0].split('(')[0].strip()}"
            for r in d["rows"] if r["status"] != "simulated")
        if reasons:
            print(f"\n{d['dataset']}: rows not simulated")
            for reason, n in reasons.most_common(5):
                print(f"  {n:5d} x {reason}")
        worst = sorted((r for r in d["rows"] if r["status"] == "simulated"), key=lambda r: -abs(r["error"]))[:3]
        if worst:
            print(f"{d['dataset']}: largest errors")
            for r in worst:
                print(f"  {r['id']:10s} {r['config']:52s} measured {r['measured']:10.2f} "
                      f"predicted {r['predicted']:10.2f} ({100 * r['error']:+.1f}%)")


if __name__ == "__main__":
    main()
