#!/usr/bin/env python3
"""bench_host_tensor_calls: would the host's PyTorch calls per parameter tensor carry host_op_us over?

Issue 16 (docs/validation.md, "The host's calls per parameter tensor"): vTrain's single-node rows fit
training.host_op_us = 70 us, h100-device 90 us. Both loops make PyTorch calls per parameter tensor that
no op of clustersim's graph stands for: the project's H100 loop (calibration/microbench/gpt_train_step.py)
one per tensor after each micro-batch's backward (the main-gradient hook's p.grad.float()) and one per
step (p.copy_(m) after AdamW); DeepSpeed's fp16 optimizer five per tensor per step after a host wait
(deepspeed/runtime/fp16/fused_optimizer.py FP16_Optimizer.step, v0.10.0: the overflow check's x.float(),
.sum() and float(), p.grad.to(fp32), p.data.copy_). Each call is charged 19 us, the H100 host's
measured p.copy_(m) loop (calibration/data/device/h100-2026-11-28/traces*: median per tensor over the
14 profiled steps). This script estimates their effect with the shipped model, without changing it:

  h100-device    the calls C = tensors x (micro-batches + 1) x 19 us are hidden when the GPU is the
                 bottleneck and add to the host's time when the host is: step ~ max(predicted(d),
                 n d + C), n d the host-bound time (n from the prediction at 300 us per op);
  vtrain-*       the calls follow a host wait (DeepSpeed's overflow check reads every gradient), so
                 the GPU idles through them: a fixed step cost (a copy of the stack with step.fixed_s
                 = 5 x the critical stage's tensors x 19 us, rows grouped by tensors per stage).

    python3 bench/bench_host_tensor_calls.py --cli build/bin/clustersim --host-op-us 60,70,80,90
    python3 bench/bench_host_tensor_calls.py --datasets vtrain-single --rows fit --host-op-us 70
"""
import argparse
import collections
import copy
import csv
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_cross_validation as cv  # noqa: E402  (dataset_copy, run)

CALL_US = 19.0  # the H100 host's p.copy_(m) per tensor (workloads/stacks/README.md, docs/validation.md)
DEEPSPEED_CALLS_PER_TENSOR = 5.0
GPT_LAYER_TENSORS = 12  # weight and bias of QKV, projection, MLP up and down, two LayerNorms
DATA = os.path.join(cv.REPO, "calibration", "validation", "data")


def summary(errors):
    return (f"MAPE {100 * statistics.mean(abs(e) for e in errors):5.2f} %  median "
            f"{100 * statistics.median(abs(e) for e in errors):5.2f} %  bias {100 * statistics.mean(errors):+6.2f} %")


def rows_of(cli, path, jobs):
    out = json.loads(cv.run([cli, "validate", path, "--fidelity", "analytical", "--jobs", str(jobs), "--json"]))
    return {r["id"]: r for r in out["datasets"][0]["rows"] if r["status"] == "simulated"}


def h100(cli, name, grid, jobs, tmp):
    with open(os.path.join(DATA, name.replace("-", "_") + ".json")) as f:
        records = {r["id"]: r for r in json.load(f)["records"]}
    high = rows_of(cli, cv.dataset_copy(name, tmp, 300), jobs)
    for us in grid:
        rows = rows_of(cli, cv.dataset_copy(name, tmp, us), jobs)
        without, with_calls = [], []
        for i, r in rows.items():
            rec = records[i]
            measured = rec["step_ms"]
            predicted = measured * (1 + r["step_time_error"])
            host_bound = measured * (1 + high[i]["step_time_error"]) / 300.0 * us
            tensors = GPT_LAYER_TENSORS * rec["layers"] + 4  # + word and position embeddings, final norm
            calls_ms = tensors * (rec["gb"] // rec["mb"] + 1) * CALL_US * 1e-3
            without.append(r["step_time_error"])
            with_calls.append(max(predicted, host_bound + calls_ms) / measured - 1)
        print(f"{name:18s} {us:3d} us  without: {summary(without)}   with the calls: {summary(with_calls)}",
              flush=True)


def vtrain(cli, name, grid, jobs, tmp, fit_rows):
    csv_name = {"vtrain-single": "vtrain_ground_truth_single.csv", "vtrain-multi": "vtrain_ground_truth_multi.csv"}
    with open(os.path.join(DATA, csv_name[name])) as f:
        data = list(csv.DictReader(f))
    ids = [f"{i:04d}" for i in range(200 if fit_rows else len(data))]
    groups = collections.defaultdict(list)  # tensors of the critical stage -> row ids
    for i in ids:
        d = data[int(i)]
        layers, pp = int(d["# layers"]), int(d["pipeline parallelism"])
        groups[layers // pp * GPT_LAYER_TENSORS + (4 if pp == 1 else 3)].append(i)
    with open(os.path.join(cv.REPO, "workloads", "stacks", "megatron-deepspeed.json")) as f:
        stack = json.load(f)
    for us in grid:
        errors = []
        for tensors, group in sorted(groups.items()):
            s = copy.deepcopy(stack)
            s["id"] = f"megatron-deepspeed-{tensors}"
            s["step"]["fixed_s"] = DEEPSPEED_CALLS_PER_TENSOR * tensors * CALL_US * 1e-6
            s["sources"]["step.fixed_s"] = "bench_host_tensor_calls.py: DeepSpeed's calls per parameter tensor"
            stack_path = os.path.join(tmp, f"stack-{tensors}.json")
            with open(stack_path, "w") as f:
                json.dump(s, f)
            path = cv.dataset_copy(name, tmp, us, group)
            with open(path) as f:
                d = json.load(f)
            d["workload"].setdefault("training", {})["stack"] = stack_path
            with open(path, "w") as f:
                json.dump(d, f)
            errors += [r["step_time_error"] for r in rows_of(cli, path, jobs).values()]
        label = f"{name} rows 0000-0199" if fit_rows else name
        print(f"{label:18s} {us:3d} us  with the calls: {summary(errors)}  ({len(errors)} rows)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(cv.REPO, "build", "bin", "clustersim"))
    ap.add_argument("--datasets", default="h100-device,vtrain-single")
    ap.add_argument("--host-op-us", default="60,70,80,90")
    ap.add_argument("--rows", choices=["fit", "all"], default="all", help="vtrain-single: rows 0000-0199 or all")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    grid = [int(x) for x in args.host_op_us.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets.split(","):
            if name.startswith("vtrain"):
                vtrain(args.cli, name, grid, args.jobs, tmp, args.rows == "fit")
            else:
                h100(args.cli, name, grid, args.jobs, tmp)


if __name__ == "__main__":
    main()
