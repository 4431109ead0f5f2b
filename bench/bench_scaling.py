#!/usr/bin/env python3
"""Speed benchmark of the demo simulation at growing scale (run by hand, not a timed test).

Simulates GPT-3 1.3B data-parallel training on the DGX H100 SuperPOD preset at 8, 64, 512 and
2,048 GPUs (1, 8, 64 and 256 nodes) at flow fidelity and prints, per size, the wall-clock seconds
and the peak resident memory of the simulation process, with the simulated step time.

    python3 bench/bench_scaling.py [--cli build/bin/clustersim] [--nodes 1 8 64 256]
"""
import argparse
import json
import os
import subprocess
import sys
import time


def run(cli, nodes, extra):
    args = [cli, "simulate", "--cluster", "dgx-h100-superpod", "--set", f"cluster.nodes={nodes}",
            "--workload", "gpt3-1.3b", "--json"] + extra
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"clustersim failed for {nodes} nodes:\n{err.decode()}")
    return wall, json.loads(out)


def measure_one(cli, nodes, extra):
    """Runs in a fresh process so that RUSAGE_CHILDREN's max RSS belongs to this size alone."""
    import resource
    wall, report = run(cli, nodes, extra)
    rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"wall_s": wall, "peak_rss_bytes": rss_kib * 1024, "step_time_s": report["step_time_s"],
                      "ops": report["run"]["ops_simulated"], "flows": report["run"]["transfers_simulated"],
                      "mfu": report["mfu"]}))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=os.path.join(here, "..", "build", "bin", "clustersim"))
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 8, 64, 256])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("extra", nargs="*", help="more clustersim arguments, after --")
    a = parser.parse_args()
    if a.one is not None:
        measure_one(a.cli, a.one, a.extra)
        return
    print(f"{'GPUs':>6} {'nodes':>6} {'wall s':>9} {'peak RSS MiB':>13} {'step s':>9} {'MFU':>6} "
          f"{'ops':>7} {'flows':>9}")
    for nodes in a.nodes:
        line = subprocess.run([sys.executable, __file__, "--cli", a.cli, "--one", str(nodes), "--"] + a.extra,
                              check=True, capture_output=True, text=True).stdout
        m = json.loads(line)
        print(f"{nodes * 8:>6} {nodes:>6} {m['wall_s']:>9.2f} {m['peak_rss_bytes'] / 2**20:>13.1f} "
              f"{m['step_time_s']:>9.4f} {m['mfu']:>6.3f} {m['ops']:>7} {m['flows']:>9}", flush=True)


if __name__ == "__main__":
    main()
