"""Parallel training and traces from Python: Workload.transformer's parallelism keywords reach the
simulated layout, bad layouts are SpecErrors naming the JSON path, trace workloads load and simulate."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import pytest

import clustersim as cs

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "workloads" / "traces"


def small(**parallelism: object) -> cs.Workload:
    """A 8-layer, 1024-wide transformer: fast at analytical fidelity."""
    return cs.Workload.transformer(name="small", layers=8, hidden=1024, heads=16, seq_len=1024, vocab=32000,
                                   global_batch=64, **parallelism)  # type: ignore[arg-type]


def test_parallelism_keywords_reach_the_spec_and_the_report() -> None:
    w = small(tp=4, pp=2, sequence_parallel=True, zero_stage=1, pipeline_schedule="interleaved",
              virtual_stages=2, order="tp-cp-ep-dp-pp", attention="unfused", recompute="selective",
              bucket_size_params=50_000_000)
    p = w.parallelism
    assert (p["tp"], p["pp"], p["sequence_parallel"], p["zero_stage"]) == (4, 2, True, 1)
    assert (p["pipeline_schedule"], p["virtual_stages"], p["order"]) == ("interleaved", 2, "tp-cp-ep-dp-pp")
    assert p["bucket_size_params"] == 50_000_000 and p["tp_comm_overlap"] is False
    assert w.training["attention"] == "unfused"
    r = cs.simulate(cs.Cluster.preset("dgx-h100-superpod", nodes=2), w, fidelity="analytical")
    assert (r.run.gpus, r.run.tp, r.run.pp, r.run.dp) == (16, 4, 2, 2)
    assert r.run.micro_batches == 64 // (1 * 2)
    groups = set(r.communication["group"])
    assert {"tp", "pp", "dp"} <= groups  # tensor, pipeline (send/recv) and data-parallel communication
    # Defaults stay the core's when a keyword is not given.
    assert small().training["attention"] == "flash" and small().parallelism["order"] == "tp-cp-ep-dp-pp"


def test_a_slow_host_makes_small_kernels_wait() -> None:
    # 8 layers of hidden 1024 on one GPU: kernels of tens of microseconds. A host issuing one op every
    # 1 ms bounds the step below by ops x 1 ms; without it the step is the kernels' time.
    cluster = cs.Cluster.preset("dgx-h100", nodes=1)
    fast = cs.simulate(cluster, small(dp=8, host_op_us=0.0), fidelity="analytical")
    slow = cs.simulate(cluster, small(dp=8, host_op_us=1000.0), fidelity="analytical")
    assert small(host_op_us=1000.0).training["host_op_us"] == 1000.0
    assert slow.step_time_s > 5 * fast.step_time_s
    assert slow.step_time_s >= slow.run.ops_simulated * 1e-3  # one class: every op issued 1 ms apart
    b, f = slow.breakdown["time_s"], fast.breakdown["time_s"]
    # the same kernels, at the clock the step's mean power allows (docs/power_and_cost.md): the GPU of
    # the slow host waits most of its step, so its clock is the same or higher ...
    assert slow.power.gemm_clock_MHz >= fast.power.gemm_clock_MHz
    assert f["compute"] * 0.99 < b["compute"] <= f["compute"] * (1 + 1e-9)
    assert f["host_wait"] == 0.0 and b["host_wait"] > 0.8 * slow.step_time_s  # ... waiting for the host
    assert b.sum() == pytest.approx(slow.step_time_s, rel=1e-9)


def test_fp8_recipe_keywords_and_the_gpu_check() -> None:
    cluster = cs.Cluster.preset("dgx-h100", nodes=1)
    w = small(dp=8, precision="fp8", fp8_recipe="current", fp8_weight_cache=False)
    assert (w.training["fp8_recipe"], w.training["fp8_weight_cache"]) == ("current", False)
    r = cs.simulate(cluster, w, fidelity="analytical")
    assert "fp8 recipe current" in r.provenance.calibration
    # At hidden 1024 the GEMMs are short: the amax passes and casts of every tensor (weights too, every
    # micro-batch) cost more than fp8 saves, and the step is slower than bf16 (fp8 pays off on wide layers).
    bf16 = cs.simulate(cluster, small(dp=8), fidelity="analytical")
    assert bf16.step_time_s < r.step_time_s < 1.5 * bf16.step_time_s
    with pytest.raises(cs.SpecError) as info:  # Hopper has no block-scaled (MX) tensor cores
        cs.simulate(cluster, small(dp=8, precision="fp8", fp8_recipe="mxfp8"), fidelity="analytical")
    assert info.value.json_path == "/training/fp8_recipe" and "expected one of delayed, current" in str(info.value)


def test_blockwise_fp8_runs_on_hopper_and_is_refused_without_its_kernels() -> None:
    # DeepSeek-V3's fine-grained fp8: DeepGEMM's kernels run on Hopper and Blackwell, not on CDNA 3.
    w = small(dp=8, precision="fp8", fp8_recipe="blockwise")
    r = cs.simulate(cs.Cluster.preset("dgx-h100", nodes=1), w, fidelity="analytical")
    assert "fp8 recipe blockwise" in r.provenance.calibration and r.step_time_s > 0.0
    with pytest.raises(cs.SpecError) as info:
        cs.simulate(cs.Cluster.preset("amd-mi300x-roce", nodes=1), w, fidelity="analytical")
    assert info.value.json_path == "/training/fp8_recipe"
    assert "has no block-scaled fp8 GEMM kernels" in str(info.value)
    assert "expected one of delayed, current, tensorwise (the recipes it runs)" in str(info.value)


def test_cp_comm_keyword_and_pytorchs_all_gather_context_parallelism() -> None:
    cluster = cs.Cluster.preset("dgx-h100", nodes=1)
    gathered = small(cp=4, dp=2, cp_comm="all_gather")
    assert gathered.parallelism["cp_comm"] == "all_gather"
    ring = cs.simulate(cluster, small(cp=4, dp=2), fidelity="analytical")
    ag = cs.simulate(cluster, gathered, fidelity="analytical")
    # the same attention steps, plus PyTorch's eager fp32 merges, packs and dK/dV accumulation
    assert ag.breakdown["time_s"]["compute"] > ring.breakdown["time_s"]["compute"]
    with pytest.raises(cs.SpecError) as info:
        small(cp=4, cp_comm="alltoall")
    assert info.value.json_path == "/parallelism/cp_comm" and "expected one of ring, all_gather" in str(info.value)


def test_moe_keywords_and_expert_parallelism() -> None:
    w = small(experts=8, top_k=2, expert_ffn_hidden=2048, load_imbalance=1.2, ep=2)
    assert w.model["moe"]["experts"] == 8 and w.model["moe"]["expert_ffn_hidden"] == 2048
    r = cs.simulate(cs.Cluster.preset("dgx-h100"), w, fidelity="analytical")
    assert r.run.ep == 2 and "ep" in set(r.communication["group"])


@pytest.mark.parametrize(
    "changes, json_path, message",
    [
        ({"parallelism.tp": 8, "model.kv_heads": 4}, "/parallelism/tp",
         "tp (8) must divide heads (16) and kv_heads (4)"),
        ({"parallelism.tp": 3}, "/parallelism",
         "tp * pp * cp = 3 * 1 * 1 = 3 does not divide the 16 GPUs of the cluster"),
        ({"parallelism.pp": 16, "parallelism.tp": 1}, "/parallelism/pp",
         "pp (16) must not exceed the number of layers (8)"),
        ({"parallelism.tp": 2, "parallelism.tp_comm_overlap": True}, "/parallelism/tp_comm_overlap", None),
        ({"parallelism.pp": 2, "parallelism.pipeline_schedule": "interleaved", "parallelism.virtual_stages": 8},
         "/parallelism/virtual_stages", None),
    ],
)
def test_an_invalid_parallel_layout_is_a_spec_error_with_the_json_path(changes: dict, json_path: str,
                                                                        message: object) -> None:
    cluster = cs.Cluster.preset("dgx-h100-superpod", nodes=2)
    with pytest.raises(cs.SpecError) as info:
        cs.simulate(cluster, small().updated(changes), fidelity="analytical")
    assert info.value.json_path == json_path
    assert info.value.file == "<Workload.transformer>"
    if message is not None:
        assert info.value.message == message
    with pytest.raises(cs.SpecError, match="order"):  # refused by the spec parser already
        small(order="pp-tp")


@pytest.mark.parametrize("name, gpus, fmt", [("native_dp2", 2, "clustersim"), ("chakra_pp2_dp2", 4, "chakra"),
                                             ("pytorch_dp2_a100", 2, "pytorch")])
def test_trace_workloads_load_and_simulate(name: str, gpus: int, fmt: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # a relative path, as a user in the repository would give it
    w = cs.Workload.from_json(f"workloads/traces/{name}.workload.json")
    assert w.is_trace and w.trace is not None and w.trace["format"] == fmt
    assert Path(w.trace["path"].replace("{rank}", "0")).is_absolute()  # resolved once: usable from anywhere
    cluster = cs.Cluster.preset("dgx-h100", node={"gpus": gpus})
    monkeypatch.chdir(tmp_path)  # simulated from elsewhere, copied, pickled: the same trace
    r = cs.simulate(cluster, pickle.loads(pickle.dumps(w)), fidelity="analytical")
    assert r.step_time_s > 0 and r.run.trace.startswith(fmt + " ")
    # A trace has no model: its tokens are unknown (NaN, with the reason), never 0.
    assert r.run.gpus == gpus and math.isnan(r.tokens_per_s) and "batch" in r.unknown["tokens_per_s"]
    assert r.fits is None and r.memory.peak_bytes_per_gpu is None  # no memory events in these traces
    assert r.power is not None and r.power.energy_per_token_j is None
    assert r.mfu > 0 and "mfu" not in r.unknown  # their compute ops carry flops (GEMM shapes, num_ops)
    assert cs.Workload.from_json(w.to_json()) == w
    assert "trace" in repr(w) and w.tokens_per_step == 0


def test_from_trace_and_a_trace_of_the_wrong_size() -> None:
    w = cs.Workload.from_trace(TRACES / "native" / "dp2_step.json", "clustersim")
    assert w.name == "dp2_step" and w.trace == {"format": "clustersim", "path": str(TRACES / "native" / "dp2_step.json")}
    with pytest.raises(cs.SpecError) as info:
        cs.simulate("dgx-h100", w, fidelity="analytical")
    assert info.value.json_path == "/trace/path"
    assert info.value.message == "the trace has 2 ranks but the cluster has 8 GPUs"
    with pytest.raises(ValueError, match="nothing to search"):
        cs.parallel_configurations("dgx-h100", w)


def test_power_and_cost_details_beyond_the_stable_keys() -> None:
    r = cs.simulate(cs.Cluster.preset("dgx-h100-superpod", nodes=2), small(), fidelity="analytical")
    p, c = r.power, r.cost
    assert p is not None and c is not None
    # Facility = IT x PUE; the energy per token is the step's energy over its tokens.
    assert p.cluster_avg_kw == pytest.approx(p.it_avg_kw * p.pue, rel=1e-9)
    assert p.energy_per_token_j == pytest.approx(p.energy_per_step_j / (64 * 1024), rel=1e-9)
    assert p.peak_kw >= p.cluster_avg_kw
    by_device = r.power_by_device
    assert list(by_device.columns[:6]) == ["device", "count", "avg_w", "energy_per_step_j", "fraction", "basis"]
    assert by_device["energy_per_step_j"].sum() == pytest.approx(p.energy_per_step_j, rel=1e-9)
    assert {"gpu", "facility"} <= set(by_device["device"])
    gpu_classes = r.power_by_gpu_class
    assert gpu_classes["energy_per_step_j"].sum() == pytest.approx(
        by_device.loc[by_device["device"] == "gpu", "energy_per_step_j"].sum(), rel=1e-9)
    # Dollars per hour: amortized capital + energy + operations; the bill of materials is the capex.
    assert c.usd_per_hour == pytest.approx(c.amortized_usd_per_hour + c.energy_usd_per_hour
                                           + c.operations_usd_per_hour, rel=1e-9)
    bom = r.bill_of_materials
    assert list(bom.columns[:5]) == ["item", "count", "unit_usd", "total_usd", "source"]
    assert bom["total_usd"].sum() == pytest.approx(c.capex_usd, rel=1e-9)
    assert "gpu_server" in set(bom["item"]) and c.tco_usd > c.capex_usd


def test_the_report_names_the_stack_and_an_unknown_stack_is_a_spec_error() -> None:
    cluster = cs.Cluster.preset("dgx-h100", nodes=1)
    default = cs.simulate(cluster, small(dp=8), fidelity="analytical")
    old = cs.simulate(cluster, small(dp=8, stack="megatron-deepspeed"), fidelity="analytical")
    assert default.run.stack == "megatron-core" and "the default" in default.provenance.stack
    assert old.run.stack == "megatron-deepspeed" and "workloads/stacks/megatron-deepspeed.json" in old.provenance.stack
    # The older stack (unfused kernels, per-tensor Adam, eager host) launches more ops and is slower.
    assert old.run.ops_simulated > default.run.ops_simulated
    assert old.step_time_s > default.step_time_s
    with pytest.raises(cs.SpecError, match="/training/stack"):
        cs.simulate(cluster, small(dp=8, stack="not-a-stack"), fidelity="analytical")
