#!/usr/bin/env python3
"""Leave-one-configuration-out figure of `clustersim calibrate --from-trace` (SYNTHETIC traces).

SYNTHETIC: no public PyTorch profiler traces of one transformer stack in several configurations were
found (HolisticTraceAnalysis publishes single ranks of TorchRec, AlexNet and toy models: the corpus
of workloads/traces/corpus), so the traces here are simulated by clustersim itself and rewritten as
Kineto traces (workloads/traces/synthetic/make_stack_trace.py). Each configuration's "true" stack is
a made-up profile (kernel-class factors, host cost per op, fixed per-step cost: TRUTH below) whose
class factors also vary with the configuration by a few percent (PER_CONFIG: the part of a real
stack's efficiency that depends on shapes, which one factor per class cannot capture). The figure is
therefore what the method recovers under known conditions, not an accuracy claim on real hardware.

For each configuration: fit on all the others' traces (`calibrate --from-trace` with every other
(trace, workload) pair), predict the left-out configuration's step with `training.stack: "<fitted>"`,
and compare with its "measured" (traced) step; the built-in stack's prediction (megatron-core, what
the workload would run without a profile) is shown beside it.

    python3 bench/bench_calibrate_from_trace.py [--cli build/bin/clustersim] [--json out.json]

About one minute on two cores (each configuration simulated a few times, analytical fidelity).
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYNTHETIC = os.path.join(REPO, "workloads", "traces", "synthetic")
sys.path.insert(0, SYNTHETIC)
import make_stack_trace  # noqa: E402

CLUSTER = "dgx-h100"
# The "true" stack: megatron-core's choices with made-up measured values.
TRUTH = {"gemm": 1.18, "attention": 1.35, "elementwise": 1.7, "normalization": 1.4, "optimizer": 1.2,
         "embedding": 1.5, "loss": 1.3}
TRUTH_HOST_US = 40.0
TRUTH_FIXED_S = 0.003
# Configurations (one DGX H100 node): (name, layers, tp, dp, micro_batch, per-configuration factor of
# the gemm, attention and elementwise scales).
CONFIGS = [
    ("tp1-dp8-mb1", 4, 1, 8, 1, (1.04, 0.97, 1.03)),
    ("tp2-dp4-mb2", 4, 2, 4, 2, (0.98, 1.02, 0.96)),
    ("tp4-dp2-mb2", 8, 4, 2, 2, (1.02, 1.05, 1.01)),
    ("tp8-dp1-mb4", 8, 8, 1, 4, (0.96, 0.99, 1.04)),
    ("tp2-dp4-mb1-l12", 12, 2, 4, 1, (1.01, 0.98, 0.99)),
]


def workload(name, layers, tp, dp, mb, stack=None):
    w = {"name": name, "description": "SYNTHETIC bench configuration (bench_calibrate_from_trace.py)",
         "model": {"type": "transformer", "layers": layers, "hidden": 2048, "heads": 16, "kv_heads": 16,
                   "ffn_hidden": 8192, "seq_len": 2048, "vocab": 51200, "activation": "gelu",
                   "tied_embeddings": True},
         "training": {"global_batch": 4 * mb * dp, "micro_batch": mb,  # 4 micro-batches per step
                      "precision": "bf16", "optimizer": "adam"},
         "parallelism": {"tp": tp, "pp": 1, "dp": dp}}
    if stack:
        w["training"]["stack"] = stack
    return w


def truth_stack(factors):
    with open(os.path.join(REPO, "workloads", "stacks", "megatron-core.json")) as f:
        s = json.load(f)
    s["id"] = "truth"
    s["name"] = "synthetic truth"
    s["description"] = "SYNTHETIC ground truth of bench_calibrate_from_trace.py"
    s["defaults"]["training.host_op_us"] = TRUTH_HOST_US
    s["step"]["fixed_s"] = TRUTH_FIXED_S
    scale = dict(TRUTH)
    for k, f in zip(("gemm", "attention", "elementwise"), factors):
        scale[k] *= f
    s["kernel_time_scale"] = scale
    for k in scale:
        s["sources"]["kernel_time_scale." + k] = "synthetic ground truth"
    s["sources"]["step.fixed_s"] = "synthetic ground truth"
    s["sources"]["training.host_op_us"] = "synthetic ground truth"
    return s


def run(cli, *args):
    r = subprocess.run([cli, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def step_s(cli, workload_path, timeline=None):
    args = ["simulate", "--cluster", CLUSTER, "--workload", workload_path, "--fidelity", "analytical", "--json"]
    if timeline:
        args += ["--timeline", timeline]
    return json.loads(run(cli, *args))["step_time_s"]


def dump(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "bin", "clustersim"))
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        traces = {}
        for name, layers, tp, dp, mb, factors in CONFIGS:
            stack = dump(os.path.join(tmp, f"truth-{name}.json"), truth_stack(factors))
            truth_w = dump(os.path.join(tmp, f"{name}.truth.workload.json"),
                           workload(name, layers, tp, dp, mb, os.path.basename(stack)))
            own_w = dump(os.path.join(tmp, f"{name}.workload.json"), workload(name, layers, tp, dp, mb))
            timeline = os.path.join(tmp, f"{name}.timeline.json")
            measured = step_s(a.cli, truth_w, timeline)
            with open(timeline) as f:
                tl = json.load(f)
            with open(stack) as f:
                trace = make_stack_trace.make_trace(tl, json.load(f))
            trace_path = dump(os.path.join(tmp, f"{name}.trace.json"), trace)
            builtin = step_s(a.cli, own_w)
            traces[name] = (trace_path, own_w, measured, builtin)
        for name, *_ in CONFIGS:
            others = [n for n, *_ in CONFIGS if n != name]
            profile = os.path.join(tmp, f"fit-without-{name}.json")
            args = ["calibrate", "--cluster", CLUSTER, "--id", f"fit-without-{name}", "--out", profile]
            for n in others:
                args += ["--from-trace", traces[n][0], "--workload", traces[n][1]]
            run(a.cli, *args)
            trace_path, own_w, measured, builtin = traces[name]
            with open(own_w) as f:
                w = json.load(f)
            w["training"]["stack"] = profile
            predicted = step_s(a.cli, dump(os.path.join(tmp, f"{name}.fitted.workload.json"), w))
            rows.append({"config": name, "measured_step_s": measured, "builtin_step_s": builtin,
                         "fitted_step_s": predicted, "builtin_error": builtin / measured - 1,
                         "fitted_error": predicted / measured - 1})
    print("leave-one-configuration-out, SYNTHETIC traces (see the docstring); step time, one DGX H100 node")
    print(f"{'left out':18}{'measured_ms':>13}{'built-in_ms':>13}{'error':>9}{'fitted_ms':>12}{'error':>9}")
    for r in rows:
        print(f"{r['config']:18}{r['measured_step_s'] * 1e3:13.2f}{r['builtin_step_s'] * 1e3:13.2f}"
              f"{r['builtin_error'] * 100:8.1f}%{r['fitted_step_s'] * 1e3:12.2f}{r['fitted_error'] * 100:8.1f}%")
    mean_b = sum(abs(r["builtin_error"]) for r in rows) / len(rows)
    mean_f = sum(abs(r["fitted_error"]) for r in rows) / len(rows)
    print(f"mean |error|: built-in stack {mean_b * 100:.1f}%, fitted on the other configurations {mean_f * 100:.1f}%")
    if a.json:
        dump(a.json, {"synthetic": True, "rows": rows, "mean_abs_error_builtin": mean_b,
                      "mean_abs_error_fitted": mean_f})


if __name__ == "__main__":
    main()
