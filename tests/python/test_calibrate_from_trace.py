"""calibrate --from-trace: a stack profile fitted to PyTorch profiler traces.

The synthetic trace is simulated by clustersim with a known stack (workloads/traces/synthetic/
truth-stack.json: gemm 0.8x, attention 1.3x, ..., host 50 us per op, 2 ms fixed per step) and rewritten
as a Kineto trace (make_stack_trace.py); the fit must give those values back (a closed form: one
ratio per class, the host's launch gaps, the step time) within 1e-6, and the fitted profile, named by
training.stack, must reproduce the traced step. Bad input exits 2 naming the trace and what is wrong.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

import clustersim as cs

REPO = Path(__file__).resolve().parents[2]
SYNTHETIC = REPO / "workloads" / "traces" / "synthetic"
sys.path.insert(0, str(SYNTHETIC))
import make_stack_trace  # noqa: E402

CLUSTER = "dgx-h100"
TRUTH = json.loads((SYNTHETIC / "truth-stack.json").read_text())


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """The synthetic trace of the tp 2 x dp 4 configuration and its simulated (true) step time."""
    tmp = tmp_path_factory.mktemp("fromtrace")
    timeline = tmp / "timeline.json"
    report = cs.simulate(CLUSTER, str(SYNTHETIC / "gpt-tp2-dp4.truth.workload.json"), fidelity="analytical",
                         timeline=str(timeline))
    trace = tmp / "trace.json"
    trace.write_text(json.dumps(make_stack_trace.make_trace(json.loads(timeline.read_text()), TRUTH)))
    return {"trace": trace, "step_s": report.step_time_s, "tmp": tmp}


def test_the_fit_recovers_the_known_stack(synthetic: Dict[str, Any]) -> None:
    result = cs.calibrate_from_trace(synthetic["trace"], str(SYNTHETIC / "gpt-tp2-dp4.workload.json"), CLUSTER,
                                     id="mine")
    profile, fit = result["profile"], result["fit"]
    classes = {c["kernel_class"]: c for c in fit["classes"]}
    for kernel_class, scale in TRUTH["kernel_time_scale"].items():
        if classes[kernel_class]["fitted"]:
            assert profile["kernel_time_scale"][kernel_class] == pytest.approx(scale, rel=1e-6), kernel_class
    # Every class the generator emits for this workload was measured (embedding is a lookup it folds in).
    assert {k for k, c in classes.items() if c["fitted"]} >= {"gemm", "attention", "elementwise", "normalization",
                                                              "optimizer", "loss"}
    assert profile["defaults"]["training.host_op_us"] == pytest.approx(50.0, rel=1e-6)
    assert profile["step"]["fixed_s"] == pytest.approx(0.002, rel=1e-6)
    run = fit["runs"][0]
    assert run["measured_step_s"] == pytest.approx(synthetic["step_s"], rel=1e-9)
    assert run["fitted_step_s"] == pytest.approx(synthetic["step_s"], rel=1e-6)
    assert run["starved_launches"] > 0 and run["launches"] == run["model_ops"]
    assert abs(run["builtin_step_s"] / run["measured_step_s"] - 1) > 0.05  # the built-in stack is off
    assert profile["id"] == "mine"
    assert "fitted from" in profile["sources"]["kernel_time_scale.gemm"]
    # cs.calibrate(from_trace=...) is the same fit.
    assert cs.calibrate(from_trace=synthetic["trace"], workload=str(SYNTHETIC / "gpt-tp2-dp4.workload.json"),
                        cluster=CLUSTER)["kernel_time_scale"] == profile["kernel_time_scale"]


def test_the_cli_writes_a_stable_profile_that_training_stack_uses(cli: Optional[str],
                                                                   synthetic: Dict[str, Any]) -> None:
    if cli is None:
        pytest.skip("the clustersim command is not built (set CLUSTERSIM_CLI)")
    tmp: Path = synthetic["tmp"]
    outs = []
    for i in range(2):
        out = tmp / f"fitted{i}.json"
        subprocess.run([cli, "calibrate", "--from-trace", str(synthetic["trace"]), "--workload",
                        str(SYNTHETIC / "gpt-tp2-dp4.workload.json"), "--cluster", CLUSTER, "--id", "fitted",
                        "--out", str(out)], capture_output=True, text=True, timeout=120, check=True)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]  # deterministic bytes
    workload = json.loads((SYNTHETIC / "gpt-tp2-dp4.workload.json").read_text())
    workload["training"]["stack"] = "fitted0.json"  # relative to the workload file
    (tmp / "w.json").write_text(json.dumps(workload))
    report = cs.simulate(CLUSTER, str(tmp / "w.json"), fidelity="analytical")
    assert report.run.stack == "fitted"
    assert report.step_time_s == pytest.approx(synthetic["step_s"], rel=1e-6)
    # Refitting with the workload naming the fitted profile gives it back: the factors are relative to
    # the kernel model, not to the workload's stack, and its fixed cost is not counted twice.
    refit = cs.calibrate_from_trace(synthetic["trace"], str(tmp / "w.json"), CLUSTER, id="fitted")["profile"]
    first = json.loads(outs[0])
    for k, v in first["kernel_time_scale"].items():
        assert refit["kernel_time_scale"][k] == pytest.approx(v, rel=1e-9), k
    assert refit["step"]["fixed_s"] == pytest.approx(first["step"]["fixed_s"], rel=1e-9)
    assert refit["defaults"]["training.host_op_us"] == pytest.approx(first["defaults"]["training.host_op_us"], rel=1e-9)


def test_a_workload_with_another_attention_kernel_is_fitted_relative_to_it(synthetic: Dict[str, Any]) -> None:
    """The same trace told it ran llm-foundry's Triton attention kernel (training.attention "triton",
    1.8x FlashAttention-2's time in the model): the attention factor is relative to that kernel (the
    truth's 1.3 / 1.8), the others are unchanged, and the fitted profile reproduces the step."""
    tmp: Path = synthetic["tmp"]
    workload = json.loads((SYNTHETIC / "gpt-tp2-dp4.workload.json").read_text())
    workload["training"]["attention"] = "triton"
    (tmp / "triton.json").write_text(json.dumps(workload))
    result = cs.calibrate_from_trace(synthetic["trace"], str(tmp / "triton.json"), CLUSTER, id="triton-fit")
    scales = result["profile"]["kernel_time_scale"]
    ratio = 1.80  # the registry's Triton / FlashAttention-2 time (workloads/attention_implementation.cpp)
    assert scales["attention"] == pytest.approx(TRUTH["kernel_time_scale"]["attention"] / ratio, rel=1e-6)
    assert scales["gemm"] == pytest.approx(TRUTH["kernel_time_scale"]["gemm"], rel=1e-6)
    (tmp / "triton-fit.json").write_text(json.dumps(result["profile"]))
    workload["training"]["stack"] = "triton-fit.json"
    (tmp / "triton-w.json").write_text(json.dumps(workload))
    report = cs.simulate(CLUSTER, str(tmp / "triton-w.json"), fidelity="analytical")
    assert report.step_time_s == pytest.approx(synthetic["step_s"], rel=1e-6)



def test_a_profile_fitted_on_a_stack_with_memory_passes_keeps_them(synthetic: Dict[str, Any]) -> None:
    """The workload says the trace ran pytorch-fsdp2 (foreach AdamW: 52 + 8 bytes per parameter beyond the
    fused kernel, workloads/stacks/README.md; its FSDP copies apply to ZeRO-3 only, this workload is
    ZeRO-0): the fitted profile carries the stack's memory passes and their sources, and named by
    training.stack it reproduces the step the fit simulated with it (a profile that dropped the passes
    would run the optimizer's extra passes nowhere and come out faster)."""
    tmp: Path = synthetic["tmp"]
    workload = json.loads((SYNTHETIC / "gpt-tp2-dp4.workload.json").read_text())
    workload["training"]["stack"] = "pytorch-fsdp2"
    (tmp / "fsdp2.json").write_text(json.dumps(workload))
    result = cs.calibrate_from_trace(synthetic["trace"], str(tmp / "fsdp2.json"), CLUSTER, id="fsdp2-fit")
    profile = result["profile"]
    builtin = json.loads((REPO / "workloads" / "stacks" / "pytorch-fsdp2.json").read_text())
    assert profile["memory_passes"] == builtin["memory_passes"]
    for key in builtin["memory_passes"]:
        assert profile["sources"]["memory_passes." + key] == builtin["sources"]["memory_passes." + key]
    (tmp / "fsdp2-fit.json").write_text(json.dumps(profile))
    workload["training"]["stack"] = "fsdp2-fit.json"
    (tmp / "fsdp2-w.json").write_text(json.dumps(workload))
    report = cs.simulate(CLUSTER, str(tmp / "fsdp2-w.json"), fidelity="analytical")
    assert report.step_time_s == pytest.approx(result["fit"]["runs"][0]["fitted_step_s"], rel=1e-6)
    # Without the passes (the profile as it was written before), the same step is shorter.
    del profile["memory_passes"]
    for key in builtin["memory_passes"]:
        del profile["sources"]["memory_passes." + key]
    (tmp / "fsdp2-fit.json").write_text(json.dumps(profile))
    dropped = cs.simulate(CLUSTER, str(tmp / "fsdp2-w.json"), fidelity="analytical")
    assert dropped.step_time_s < report.step_time_s

def _cli_error(cli: str, trace: Path, workload: Path) -> subprocess.CompletedProcess:
    return subprocess.run([cli, "calibrate", "--from-trace", str(trace), "--workload", str(workload), "--cluster",
                           CLUSTER], capture_output=True, text=True, timeout=120)


def test_bad_traces_exit_2_naming_the_file(cli: Optional[str], tmp_path: Path) -> None:
    if cli is None:
        pytest.skip("the clustersim command is not built (set CLUSTERSIM_CLI)")
    workload = SYNTHETIC / "gpt-tp2-dp4.workload.json"
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 10}]}))
    r = _cli_error(cli, empty, workload)
    assert r.returncode == 2, r.stderr
    assert str(empty) in r.stderr and "no GPU kernel" in r.stderr and "ProfilerStep#3" in r.stderr
    # Three GEMM kernels cannot be a step of a 4-layer GPT (hundreds of ops).
    small = tmp_path / "small.json.gz"
    events = [{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 10.0 * i,
               "dur": 5.0, "args": {"stream": 7}} for i in range(3)]
    with gzip.open(small, "wt") as f:
        json.dump({"traceEvents": events}, f)
    r = _cli_error(cli, small, workload)
    assert r.returncode == 2, r.stderr
    assert str(small) in r.stderr and "3 compute kernels" in r.stderr and "not of this workload" in r.stderr
    # A workload with a trace instead of a model: the workload file and its path.
    r = _cli_error(cli, small, REPO / "workloads" / "traces" / "pytorch_dp2_a100.workload.json")
    assert r.returncode == 2 and "/trace" in r.stderr, r.stderr


def test_a_real_trace_gives_a_sane_stable_profile() -> None:
    """HTA's DDP trace (rank 0 of 2, A100, a convolutional network: workloads/traces/corpus/README.md),
    fitted against a stand-in 2-GPU transformer workload: real profiler output (launch events matched by
    correlation id, NCCL kernels on their own stream, memcpy activities) through the whole fit. No
    public transformer trace was found, so this checks the plumbing and the closed forms on real data,
    not the accuracy of the stand-in's values."""
    corpus = REPO / "workloads" / "traces" / "corpus" / "hta_ddp_nccl_rank0.json.gz"
    cluster = cs.Cluster.preset("dgx-a100-superpod", nodes=1).updated({"node.gpus": 2})
    workload = {"name": "stand-in", "model": {"type": "transformer", "layers": 4, "hidden": 1024, "heads": 8,
                                              "ffn_hidden": 4096, "seq_len": 1024, "vocab": 32000},
                "training": {"global_batch": 4, "micro_batch": 1, "precision": "bf16"},
                "parallelism": {"tp": 1, "pp": 1, "dp": 2}}
    first = cs.calibrate_from_trace(corpus, workload, cluster, id="hta-ddp")
    again = cs.calibrate_from_trace(corpus, workload, cluster, id="hta-ddp")
    assert json.dumps(first) == json.dumps(again)  # deterministic
    fit, profile = first["fit"], first["profile"]
    run = fit["runs"][0]
    # Counted in the file by hand (python: the "kernel" events launched inside ProfilerStep#6).
    assert run["step"] == "ProfilerStep#6"
    assert run["compute_kernels"] + run["communication_kernels"] == 900 and run["communication_kernels"] == 7
    assert run["launches"] == 900 and 0 < run["starved_launches"] < 900
    # Sane: every fitted factor finite and within 1e-3..1e3 (a stand-in workload), host time per launch
    # between 1 us and 1 ms, the fixed cost within the step, and the fit closing the step exactly.
    for c in fit["classes"]:
        assert (1e-3 < c["scale"] < 1e3) if c["fitted"] else c["scale"] == 1.0
        if c["fitted"]:
            assert profile["kernel_time_scale"][c["kernel_class"]] == c["scale"]
    assert 1e-6 < run["launch_gap_s"] < 1e-3
    assert fit["host_op_s"] == pytest.approx(run["launch_gap_s"] * run["launches"] / run["model_ops"], rel=1e-12)
    assert profile["defaults"]["training.host_op_us"] == pytest.approx(fit["host_op_s"] * 1e6, rel=1e-12)
    assert 0.0 <= fit["step_fixed_s"] < run["measured_step_s"]
    assert run["fitted_step_s"] == pytest.approx(run["measured_step_s"], rel=1e-9)
    assert 0.0 < fit["communication_overlapped_fraction"] < 1.0
    assert "hta_ddp_nccl_rank0" in profile["sources"]["kernel_time_scale.gemm"]


def test_a_bad_step_is_the_cores_spec_error() -> None:
    # The --step rule lives in read_kernel_timeline: Python gets the CLI's SpecError, not a bare ValueError
    # from a failed number conversion.
    from clustersim import _core

    cluster = cs.Cluster.preset("dgx-h100-superpod", nodes=1)
    workload = cs.Workload.preset("gpt3-1.3b")
    with pytest.raises(cs.SpecError, match=r'expected a step number >= 0 \(ProfilerStep#N\) or "last", got "abc"'):
        _core.fit_stack(*cluster._as_core(), {"traces": ["no-such-trace.json"], "workloads": [workload._as_core()],
                                              "step": "abc"})
