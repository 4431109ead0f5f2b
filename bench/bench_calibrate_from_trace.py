#!/usr/bin/env python3
"""Leave-one-configuration-out figure of `clustersim calibrate --from-trace`: synthetic traces, or real ones.

REAL (`--real [traces|traces-no-shapes|traces-compile]`): the project's own PyTorch 2.11 profiler
traces of six or seven configurations of one stack (calibration/microbench/gpt_train_step.py: PyTorch
GPT, 350M to 2.7B, one H100 SXM5 80GB, 2026-11-28; that folder of calibration/data/device/h100-2026-11-28:
eager with shapes recorded, eager without, torch.compile without; steps.json there gives each row's
unprofiled step). Each configuration's workload is the h100-device-rerun validation dataset's mapping
of its row; the built-in prediction is that dataset's (training.host_op_us 90, fitted on h100-device's
unprofiled steps), the fitted one drops that key so the profile's host cost applies. "measured" is the
traced step (ProfilerStep#1): the profiler's own host cost is in it, so the fitted host cost is the
profiled loop's, and the unprofiled step is printed beside it.

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

    python3 bench/bench_calibrate_from_trace.py [--real] [--cli build/bin/clustersim] [--json out.json]

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


REAL_TRACES = os.path.join(REPO, "calibration", "data", "device", "h100-2026-11-28")
REAL_DATASET = os.path.join(REPO, "calibration", "validation", "datasets", "h100-device-rerun.json")


def real_configurations(tmp, traces):
    """(name, trace, workload path, unprofiled step_s) per traced row, and a one-GPU cluster file."""
    with open(REAL_DATASET) as f:
        dataset = json.load(f)
    with open(os.path.join(REPO, "topologies", "presets", dataset["cluster"]["spec"] + ".json")) as f:
        cluster = json.load(f)
    cluster["node"]["gpus"], cluster["node"]["nics"] = 1, 1
    cluster_path = dump(os.path.join(tmp, "h100-1gpu.json"), cluster)
    with open(os.path.join(REAL_TRACES, traces, "steps.json")) as f:
        steps = json.load(f)["records"]
    configs = []
    for r in steps:
        w = copy.deepcopy(dataset["workload"])
        w["name"] = r["id"]
        w["model"].update(layers=r["layers"], hidden=r["hidden"], heads=r["heads"], ffn_hidden=r["ffn"],
                          seq_len=r["seq"], vocab=r["vocab"])
        w["training"].update(micro_batch=r["mb"], global_batch=r["gb"], recompute=r["recompute"])
        configs.append((r["id"], os.path.join(REAL_TRACES, traces, r["id"] + ".json.gz"),
                        dump(os.path.join(tmp, r["id"] + ".workload.json"), w), r["step_ms"] * 1e-3))
    return cluster_path, configs


def real(cli, traces):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cluster, configs = real_configurations(tmp, traces)
        for name, trace, workload_path, unprofiled in configs:
            others = [c for c in configs if c[0] != name]
            profile = os.path.join(tmp, f"fit-without-{name}.json")
            args = ["calibrate", "--cluster", cluster, "--id", f"fit-without-{name}", "--out", profile, "--json"]
            for _, t, w, _ in others:
                args += ["--from-trace", t, "--workload", w]
            fit = json.loads(run(cli, *args))
            own_fit = json.loads(run(cli, "calibrate", "--cluster", cluster, "--id", "own", "--json",
                                     "--from-trace", trace, "--workload", workload_path))
            own = own_fit["runs"][0]
            # GPU kernel time of the left-out step, apart from the host: measured, the model's, and the
            # model's with the class factors fitted on the other configurations.
            scales = {c["kernel_class"]: c["scale"] for c in fit["classes"]}
            kernels_measured = sum(c["measured_s"] for c in own_fit["classes"])
            kernels_builtin = sum(c["modelled_s"] for c in own_fit["classes"])
            kernels_fitted = sum(c["modelled_s"] * scales[c["kernel_class"]] for c in own_fit["classes"])
            with open(workload_path) as f:
                w = json.load(f)
            w["training"].pop("host_op_us")
            w["training"]["stack"] = profile
            fitted_path = dump(os.path.join(tmp, f"{name}.fitted.workload.json"), w)
            fitted = json.loads(run(cli, "simulate", "--cluster", cluster, "--workload", fitted_path, "--fidelity",
                                    "analytical", "--json"))["step_time_s"]
            measured = own["measured_step_s"]
            rows.append({"config": name, "measured_step_s": measured, "unprofiled_step_s": unprofiled,
                         "builtin_step_s": own["builtin_step_s"], "fitted_step_s": fitted,
                         "builtin_error": own["builtin_step_s"] / measured - 1, "fitted_error": fitted / measured - 1,
                         "fitted_host_op_us": fit["host_op_s"] * 1e6,
                         "kernels_measured_s": kernels_measured, "kernels_builtin_s": kernels_builtin,
                         "kernels_fitted_s": kernels_fitted,
                         "fitted_scales": {c["kernel_class"]: c["scale"] for c in fit["classes"]}})
    print(f"leave-one-configuration-out, REAL traces ({traces}): PyTorch GPT on one H100, 2026-11-28 (see the docstring)")
    print(f"{'left out':24}{'traced_ms':>10}{'unprof_ms':>10}{'built-in_ms':>12}{'error':>8}{'fitted_ms':>10}{'error':>8}"
          f"{'| kernels_ms':>12}{'built-in':>10}{'error':>8}{'fitted':>9}{'error':>8}")
    for r in rows:
        km, kb, kf = r["kernels_measured_s"], r["kernels_builtin_s"], r["kernels_fitted_s"]
        print(f"{r['config']:24}{r['measured_step_s'] * 1e3:10.1f}{r['unprofiled_step_s'] * 1e3:10.1f}"
              f"{r['builtin_step_s'] * 1e3:12.1f}{r['builtin_error'] * 100:7.1f}%{r['fitted_step_s'] * 1e3:10.1f}"
              f"{r['fitted_error'] * 100:7.1f}%{km * 1e3:12.1f}{kb * 1e3:10.1f}{(kb / km - 1) * 100:7.1f}%"
              f"{kf * 1e3:9.1f}{(kf / km - 1) * 100:7.1f}%")
    for label, key in (("built-in", "kernels_builtin_s"), ("fitted", "kernels_fitted_s")):
        mean = sum(abs(r[key] / r["kernels_measured_s"] - 1) for r in rows) / len(rows)
        print(f"GPU kernel time, mean |error|: {label} {mean * 100:.1f}%")
    return rows


def synthetic(cli):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        traces = {}
        for name, layers, tp, dp, mb, factors in CONFIGS:
            stack = dump(os.path.join(tmp, f"truth-{name}.json"), truth_stack(factors))
            truth_w = dump(os.path.join(tmp, f"{name}.truth.workload.json"),
                           workload(name, layers, tp, dp, mb, os.path.basename(stack)))
            own_w = dump(os.path.join(tmp, f"{name}.workload.json"), workload(name, layers, tp, dp, mb))
            timeline = os.path.join(tmp, f"{name}.timeline.json")
            measured = step_s(cli, truth_w, timeline)
            with open(timeline) as f:
                tl = json.load(f)
            with open(stack) as f:
                trace = make_stack_trace.make_trace(tl, json.load(f))
            trace_path = dump(os.path.join(tmp, f"{name}.trace.json"), trace)
            builtin = step_s(cli, own_w)
            traces[name] = (trace_path, own_w, measured, builtin)
        for name, *_ in CONFIGS:
            others = [n for n, *_ in CONFIGS if n != name]
            profile = os.path.join(tmp, f"fit-without-{name}.json")
            args = ["calibrate", "--cluster", CLUSTER, "--id", f"fit-without-{name}", "--out", profile]
            for n in others:
                args += ["--from-trace", traces[n][0], "--workload", traces[n][1]]
            run(cli, *args)
            trace_path, own_w, measured, builtin = traces[name]
            with open(own_w) as f:
                w = json.load(f)
            w["training"]["stack"] = profile
            predicted = step_s(cli, dump(os.path.join(tmp, f"{name}.fitted.workload.json"), w))
            rows.append({"config": name, "measured_step_s": measured, "builtin_step_s": builtin,
                         "fitted_step_s": predicted, "builtin_error": builtin / measured - 1,
                         "fitted_error": predicted / measured - 1})
    print("leave-one-configuration-out, SYNTHETIC traces (see the docstring); step time, one DGX H100 node")
    print(f"{'left out':18}{'measured_ms':>13}{'built-in_ms':>13}{'error':>9}{'fitted_ms':>12}{'error':>9}")
    for r in rows:
        print(f"{r['config']:18}{r['measured_step_s'] * 1e3:13.2f}{r['builtin_step_s'] * 1e3:13.2f}"
              f"{r['builtin_error'] * 100:8.1f}%{r['fitted_step_s'] * 1e3:12.2f}{r['fitted_error'] * 100:8.1f}%")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "bin", "clustersim"))
    ap.add_argument("--real", nargs="?", const="traces", choices=["traces", "traces-no-shapes", "traces-compile"],
                    help="the real H100 traces (a folder of calibration/data/device/h100-2026-11-28) instead of the "
                         "synthetic ones")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    rows = real(a.cli, a.real) if a.real else synthetic(a.cli)
    mean_b = sum(abs(r["builtin_error"]) for r in rows) / len(rows)
    mean_f = sum(abs(r["fitted_error"]) for r in rows) / len(rows)
    print(f"mean |error|: built-in stack {mean_b * 100:.1f}%, fitted on the other configurations {mean_f * 100:.1f}%")
    if a.json:
        dump(a.json, {"synthetic": not a.real, "rows": rows, "mean_abs_error_builtin": mean_b,
                      "mean_abs_error_fitted": mean_f})


if __name__ == "__main__":
    main()
