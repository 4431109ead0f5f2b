#!/usr/bin/env python3
"""Leave-one-source-out cross-validation: refit what clustersim fits without one source, predict it.

clustersim fits three things to measurements, each from its own sources (docs/validation.md,
"Cross-validation"); for every source this script refits what that source took part in, without it,
and prints the error on the source left out:

1. End-to-end runs (calibration/validation/datasets: vTrain, Megatron-LM, Korthikanti 2022,
   llm-foundry, NeMo). The one value fitted on them is `training.host_op_us` of the Megatron-DeepSpeed
   datasets (70 us: grid 0-100 us in steps of 10, least MAPE on vtrain-single rows 0000-0199; the
   stack's host waits for its GPU where DeepSpeed's code does, host_syncs, nothing fitted). Left
   out, vtrain-single's value is refitted by a grid and the same criterion on the other sources that
   carry it (vtrain-multi and h100-device, the other eager-PyTorch source), and vtrain-single is
   predicted with it. Every other dataset took part in no fit: its left-out error is its validation
   error, measured here.
2. GPU kernel timings (Vidur's operator tables, calibration/data/vidur/compute): per GPU, the shipped
   profile is fitted on Llama-2-7B and checked on Llama-2-70B (calibration/fit_profiles.sh); the other
   direction is fitted on 70B and checked on 7B.
3. nccl-tests tables (calibration/network/datasets.json, grouped by source: vtrain, vidur, published):
   each group's fit tables are turned into validation tables and the profile refitted without them.

    python3 bench/bench_cross_validation.py [--cli build/bin/clustersim] [--jobs 2] [--json out.json]
                                            [--skip end_to_end,kernels,network]

Run by hand (the end-to-end part simulates every validation row, 15 to 25 minutes on two cores).
Statistics: |error| median over the source's rows (step time for end-to-end datasets: a TFLOP/s
error e is the step-time error 1 / (1 + e) - 1; kernel time; bus bandwidth).
"""
import argparse
import copy
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
DATASETS = os.path.join(REPO, "calibration", "validation", "datasets")
DATA = os.path.join(REPO, "calibration", "data")  # calibration/data/README.md

# What the shipped fits used (docs/validation.md, calibration/fit_profiles.sh).
HOST_OP_GRID_US = [10 * i for i in range(11)]
# Sources besides vtrain-multi that pin an eager-PyTorch host cost per op (their descriptions set
# training.host_op_us): refitted together with vtrain-multi when vtrain-single is left out.
HOST_OP_SOURCES = ["h100-device"]
KERNEL_FITS = {
    "a100-sxm4-80gb": ("vidur/compute/a100/Llama-2-7b-hf/mlp.csv", "vidur/compute/a100/Llama-2-70b-hf/mlp.csv",
                       ["published/microbench.json#micro-0009..micro-0013,micro-0015"]),
    "h100-sxm5-80gb": ("vidur/compute/h100/Llama-2-7b-hf/mlp.csv", "vidur/compute/h100/Llama-2-70b-hf/mlp.csv",
                       ["published/microbench.json#micro-0019..micro-0032,micro-0034"]),
}


def run(args, **kw):
    proc = subprocess.run(args, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed (status {proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def median_abs(values):
    return statistics.median(abs(v) for v in values) if values else float("nan")


def dataset_copy(name, tmp, host_op_us=None, limit_ids=None):
    """A copy of a shipped description with absolute paths, optionally another host_op_us / rows."""
    with open(os.path.join(DATASETS, name + ".json")) as f:
        d = json.load(f)
    d["data"]["path"] = os.path.normpath(os.path.join(DATASETS, d["data"]["path"]))
    spec = d["cluster"]["spec"]
    if "/" in spec or spec.endswith(".json"):
        d["cluster"]["spec"] = os.path.normpath(os.path.join(DATASETS, spec))
    if host_op_us is not None:
        d["workload"].setdefault("training", {})["host_op_us"] = host_op_us
    if limit_ids is not None:
        d["select"] = limit_ids
    path = os.path.join(tmp, f"{name}-{host_op_us}-{len(limit_ids or [])}.json")
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def validate(cli, path, jobs):
    out = json.loads(run([cli, "validate", path, "--fidelity", "analytical", "--jobs", str(jobs), "--json"]))
    rows = [r for r in out["datasets"][0]["rows"] if r["status"] == "simulated"]
    return [r["step_time_error"] for r in rows], [r["error"] for r in rows]


def end_to_end(cli, jobs, tmp):
    names = sorted(n[:-5] for n in os.listdir(DATASETS) if n.endswith(".json"))
    results = []
    for name in names:
        with open(os.path.join(DATASETS, name + ".json")) as f:
            host = json.load(f)["workload"].get("training", {}).get("host_op_us")
        if name == "vtrain-single":
            # Refit host_op_us without vtrain-single: on every other source whose step carries an eager
            # PyTorch host cost per op: vtrain-multi (Megatron-DeepSpeed; its kernels hide the host, so
            # alone it leaves the value undetermined) and h100-device (a PyTorch eager loop on one GPU,
            # whose description fits its own host_op_us).
            others = [n for n in names if n != name and n.startswith("vtrain")]
            host_sources = others + [n for n in names if n in HOST_OP_SOURCES]
            grid = []
            for us in HOST_OP_GRID_US:
                errors = []
                for other in host_sources:
                    _, e = validate(cli, dataset_copy(other, tmp, us), jobs)
                    errors += e
                grid.append((statistics.mean(abs(x) for x in errors), us))
                print(f"  refit host_op_us without {name}: {us:3d} us -> MAPE {100 * grid[-1][0]:.2f} % on "
                      f"{', '.join(host_sources)}", flush=True)
            best = min(grid)[1]  # least MAPE, the smallest value on ties
            spread = max(g[0] for g in grid) - min(g[0] for g in grid)
            shipped_host = f"{host} us" if host is not None else "the stack's default"
            note = f"host_op_us = {best} us (shipped: {shipped_host})"
            if spread < 1e-3:
                note += f"; undetermined: the other datasets' MAPE moves {100 * spread:.3f} points over the grid"
            step, _ = validate(cli, dataset_copy(name, tmp, best), jobs)
            shipped, _ = validate(cli, dataset_copy(name, tmp), jobs)
            results.append({"source": name, "kind": "end_to_end", "refit": note,
                            "rows": len(step), "median_abs_error": median_abs(step),
                            "in_sample_median_abs_error": median_abs(shipped)})
        else:
            step, _ = validate(cli, os.path.join(DATASETS, name + ".json"), jobs)
            # A dataset whose description sets host_op_us was fitted on itself (h100-device: no other
            # source runs PyTorch eager on one GPU, so there is nothing to refit it on): its figure is in-sample.
            refit = ("nothing was fitted on it" if host is None else
                     f"in-sample: host_op_us = {host} us was fitted on it and no other source carries it")
            results.append({"source": name, "kind": "end_to_end", "refit": refit,
                            "rows": len(step), "median_abs_error": median_abs(step),
                            "in_sample_median_abs_error": median_abs(step)})
        r = results[-1]
        print(f"  {name:26s} {r['rows']:5d} rows  left out: median |step-time error| "
              f"{100 * r['median_abs_error']:5.1f} %  ({r['refit']})", flush=True)
    return results


HELD_OUT_LINE = re.compile(r"^\s+(\S+)\s+(\d+)\s+([\d.]+)%\s+([\d.]+)%\s+(-?[\d.]+)%$", re.M)


def held_out_all(text):
    """(rows, median, p90) of the held-out measurements: the 'all' line, else the only operation line."""
    lines = [m for m in HELD_OUT_LINE.finditer(text[text.find("held out"):])]
    pick = [m for m in lines if m.group(1) == "all"] or (lines if len(lines) == 1 else [])
    if not pick:
        return (sum(int(m.group(2)) for m in lines), float("nan"), float("nan"))
    m = pick[0]
    return (int(m.group(2)), float(m.group(3)) / 100, float(m.group(4)) / 100)


def kernels(cli, tmp):
    results = []
    for gpu, (small, large, extra) in KERNEL_FITS.items():
        for fit, left_out in ((small, large), (large, small)):
            text = run([cli, "calibrate", "--gpu", gpu, fit, *extra, "--held-out", left_out, "--data", DATA,
                        "--out", os.path.join(tmp, f"{gpu}.json")])
            rows, median, p90 = held_out_all(text)
            results.append({"source": left_out, "kind": "kernel", "refit": f"{gpu} profile fitted on {fit}",
                            "rows": rows, "median_abs_error": median, "p90_abs_error": p90})
            print(f"  {left_out:45s} {rows:6d} kernels  left out: median |time error| {100 * median:5.1f} %, "
                  f"p90 {100 * p90:5.1f} %  (fitted on {os.path.basename(os.path.dirname(fit))})", flush=True)
        # The published figures the fit uses (attention, fp8 GEMMs), left out: fitted on Vidur's 7B only.
        for record in extra:
            text = run([cli, "calibrate", "--gpu", gpu, small, "--held-out", record, "--data", DATA,
                        "--out", os.path.join(tmp, f"{gpu}.json")])
            sections = [(m.group(1), int(m.group(2)), float(m.group(3)) / 100)
                        for m in HELD_OUT_LINE.finditer(text[text.find("held out"):])]
            for op, rows, median in sections:
                results.append({"source": f"{record} ({op})", "kind": "kernel", "refit": f"{gpu} profile fitted on {small}",
                                "rows": rows, "median_abs_error": median})
                print(f"  {record + ' (' + op + ')':45s} {rows:6d} figures  left out: median |error| {100 * median:5.1f} %  "
                      f"(fitted on Vidur's 7B only)", flush=True)
    return results


def table_group(t):
    """The source group of a network table: the first folder of its data file; tables carried inline in
    datasets.json are published ones (calibration/network/README.md names each one's source)."""
    return t["path"].split("/")[0] if "path" in t else "published"


TABLE_LINE = re.compile(r"^\s+(\S+)\s+(fit|validate)\s+\S+\s+(\d+)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%", re.M)


def network(cli, tmp):
    with open(os.path.join(REPO, "calibration", "network", "datasets.json")) as f:
        datasets = json.load(f)
    results = []
    groups = sorted({(t["profile"], table_group(t)) for t in datasets["tables"] if t["role"] == "fit"})
    for profile, group in groups:
        d = copy.deepcopy(datasets)
        left = [t["id"] for t in d["tables"] if t["profile"] == profile and table_group(t) == group]
        for t in d["tables"]:
            if t["id"] in left:
                t["role"] = "validate"
        path = os.path.join(tmp, f"network-{profile}-{group}.json")
        with open(path, "w") as f:
            json.dump(d, f)
        out_dir = os.path.join(tmp, f"profiles-{profile}-{group}")
        os.makedirs(out_dir, exist_ok=True)
        proc = subprocess.run([cli, "calibrate-network", "--datasets", path, "--data-dir", DATA, "--out-dir", out_dir,
                               "--profile", profile], capture_output=True, text=True)
        if proc.returncode != 0:
            results.append({"source": f"{profile}: {group} tables", "kind": "network", "refit": "cannot fit without them",
                            "rows": 0, "median_abs_error": None, "reason": proc.stderr.strip().splitlines()[-1]})
            print(f"  {profile}: {group:10s} cannot refit without these tables: {results[-1]['reason']}", flush=True)
            continue
        medians = {m.group(1): (int(m.group(3)), float(m.group(4)) / 100) for m in TABLE_LINE.finditer(proc.stdout)}
        per_table = {t: medians[t] for t in left if t in medians}
        median_of_medians = statistics.median(v[1] for v in per_table.values()) if per_table else float("nan")
        results.append({"source": f"{profile}: {group} tables", "kind": "network",
                        "refit": f"{profile} without {', '.join(left)}", "rows": sum(v[0] for v in per_table.values()),
                        "median_abs_error": median_of_medians,
                        "per_table": {t: v[1] for t, v in per_table.items()}})
        print(f"  {profile}: {group:10s} tables {', '.join(left)}: left out, median of table medians "
              f"{100 * median_of_medians:5.1f} % bus bandwidth error", flush=True)
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(REPO, "build", "bin", "clustersim"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--skip", default="", help="comma-separated parts to skip: end_to_end, kernels, network")
    a = p.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if "kernels" not in skip:
            print("GPU kernel sources (clustersim calibrate), each left out of the fit:")
            results += kernels(a.cli, tmp)
        if "network" not in skip:
            print("nccl-tests sources (clustersim calibrate-network), each group left out of the fit:")
            results += network(a.cli, tmp)
        if "end_to_end" not in skip:
            print("End-to-end sources (clustersim validate, analytical fidelity), each left out of the fit:")
            results += end_to_end(a.cli, a.jobs, tmp)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
