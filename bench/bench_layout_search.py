#!/usr/bin/env python3
"""The serving layout search's speed (issue 20's target: a capacity search over 50 layouts in <= 2 min).

Five cluster designs x tp {1, 2, 4, 8, 16} x pp {1, 2} = 50 layouts of Llama 3 70B (the llama3-70b-h100
serving preset, fp8, chunked prefill) at a target rate, through `clustersim serve --search-layouts`.
Prints the wall seconds of each of --repeat runs, the serving runs the search made, and the cheapest
layout. Run by hand: `python3 bench/bench_layout_search.py [--cli build/bin/clustersim] [--repeat 3]`.
"""
import argparse
import json
import statistics
import subprocess
import time

DESIGNS = ["dgx-h100-superpod", "dgx-h200-superpod", "dgx-b200-superpod", "aws-p5", "azure-nd-h200-v5"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", default="build/bin/clustersim")
    p.add_argument("--serving", default="llama3-70b-h100")
    p.add_argument("--target-rate", type=float, default=20.0)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    cmd = [a.cli, "serve", "--search-layouts", "--serving", a.serving, "--target-rate", str(a.target_rate),
           "--tp", "1,2,4,8,16", "--pp", "1,2", "--json"]
    for d in DESIGNS:
        cmd += ["--cluster", d]
    walls = []
    out = None
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        walls.append(time.perf_counter() - t0)
    layouts = out["layouts"]
    by_status = {s: sum(1 for c in layouts if c["status"] == s) for s in ("meets", "fails_slo", "infeasible")}
    runs = sum(c["runs"] for c in layouts)
    print(f"layouts {len(layouts)} ({by_status}), serving runs {runs}")
    print(f"wall s: {' '.join(f'{w:.2f}' for w in walls)}  median {statistics.median(walls):.2f}  (target <= 120)")
    if out["cheapest"] is not None:
        c = layouts[out["cheapest"]]
        print(f"cheapest: {c['design']} {c['replicas']} x tp {c['tp']} x pp {c['pp']} = {c['gpus']} GPUs, "
              f"${c['usd_per_hour']:.2f}/h, TTFT p90 {c['ttft_p90_s']:.3f} s")


if __name__ == "__main__":
    main()
