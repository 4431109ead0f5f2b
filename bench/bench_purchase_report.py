#!/usr/bin/env python3
"""The purchase report's cost (issue 23's target: the HTML report of a 3-design comparison in <= 2 s,
under 5 MB): `clustersim compare --html` of three designs, each simulated with its run of the tokens;
prints the wall seconds of --repeat runs of the whole command and the page's size.

Run by hand: `python3 bench/bench_purchase_report.py [--cli build/bin/clustersim] [--repeat 3]`.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

DESIGNS = ["dgx-h100-superpod", "dgx-b200-superpod", "dgx-a100-superpod"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", default="build/bin/clustersim")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "report.html")
        cmd = [a.cli, "compare", "--workload", "gpt3-1.3b", "--fidelity", "analytical", "--tokens", "300B",
               "--set", "nodes=16", "--set", "workload.parallelism.dp=128", "--html", page]
        for d in DESIGNS:
            cmd += ["--cluster", d]
        walls = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            walls.append(time.perf_counter() - t0)
        size = os.path.getsize(page)
    print(f"compare --html of {len(DESIGNS)} designs (simulations included): wall s "
          f"{' '.join(f'{w:.2f}' for w in walls)}, median {statistics.median(walls):.2f} (target <= 2)")
    print(f"page {size / 1024:.1f} KiB (target < 5 MB)")


if __name__ == "__main__":
    main()
