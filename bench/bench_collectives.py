#!/usr/bin/env python3
"""Speed of one collective at scale (run by hand, not a timed test).

A 1 GiB all-reduce over 2,048 GPUs (256 DGX H100 nodes) and 16,384 GPUs (2,048 nodes; a 3-tier
fat-tree) of the rail-optimized DGX H100 SuperPOD preset, at flow and analytical fidelity, with the
ring, the tree and the selector's choice. Prints wall seconds, peak RSS and the simulated figures.

    python3 bench/bench_collectives.py [--cli build/bin/clustersim] [--nodes 256 2048]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time


def measure(cli, nodes, fidelity, algorithm, extra):
    args = [cli, "collective", "--cluster", "dgx-h100-superpod", "--set", f"nodes={nodes}", "--min-bytes", "1G",
            "--max-bytes", "1G", "--fidelity", fidelity, "--algorithm", algorithm, "--json"] + extra
    start = time.perf_counter()
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    row = json.loads(out)[0]
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"wall_s": wall, "rss": rss, **row}))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", default=os.path.join(here, "..", "build", "bin", "clustersim"))
    p.add_argument("--nodes", type=int, nargs="+", default=[256, 2048])
    p.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    p.add_argument("extra", nargs="*")
    a = p.parse_args()
    if a.one:
        measure(a.cli, int(a.one[0]), a.one[1], a.one[2], a.extra)
        return
    print(f"{'GPUs':>6} {'fidelity':>10} {'algorithm':>10} {'chosen':>8} {'wall s':>8} {'RSS MiB':>8} "
          f"{'time us':>10} {'busbw GB/s':>10}")
    for nodes in a.nodes:
        for fidelity in ("analytical", "flow"):
            for algorithm in ("ring", "tree", "auto"):
                line = subprocess.run([sys.executable, __file__, "--cli", a.cli, "--one", str(nodes), fidelity,
                                       algorithm, "--"] + a.extra, check=True, capture_output=True, text=True).stdout
                m = json.loads(line)
                print(f"{nodes * 8:>6} {fidelity:>10} {algorithm:>10} {m['algorithm']:>8} {m['wall_s']:>8.2f} "
                      f"{m['rss'] / 2**20:>8.1f} {m['time_us']:>10.1f} {m['busbw_GBps']:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
