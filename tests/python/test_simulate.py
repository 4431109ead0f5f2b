"""simulate() and Report: values that follow from the definitions, DataFrame columns, round-trips,
agreement with the CLI, and isolation (a failing or crashing simulation raises; Python lives on)."""

from __future__ import annotations

import dataclasses
import json
import math
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

import clustersim as cs


def test_tokens_per_s_is_tokens_per_step_over_step_time(report: cs.Report, gpt: cs.Workload) -> None:
    assert report.step_time_s > 0
    assert report.tokens_per_s == pytest.approx(4096 * 2048 / report.step_time_s, rel=1e-12)
    assert report.tokens_per_s == pytest.approx(gpt.tokens_per_step / report.step_time_s, rel=1e-12)


def test_mfu_is_achieved_over_peak_flops(report: cs.Report) -> None:
    run = report.run
    achieved = run.model_flops_per_step / report.step_time_s / run.gpus
    assert report.tflops_per_gpu == pytest.approx(achieved / 1e12, rel=1e-12)
    assert report.mfu == pytest.approx(achieved / run.peak_flops_per_gpu, rel=1e-12)
    assert 0 < report.mfu < 1


def test_run_describes_the_simulated_layout(report: cs.Report) -> None:
    run = report.run
    assert (run.gpus, run.nodes, run.tp, run.pp, run.dp) == (16, 2, 1, 1, 16)
    assert run.micro_batches == 4096 // (2 * 16)  # global batch / (micro_batch x dp)
    assert (run.cluster, run.workload, run.gpu) == ("dgx-h100-superpod", "gpt3-1.3b", "h100-sxm5-80gb")


def test_breakdown_is_a_dataframe_that_adds_up_to_the_step(report: cs.Report) -> None:
    b = report.breakdown
    assert list(b.index) == ["compute", "exposed_communication", "pipeline_bubble", "host_wait"]
    assert list(b.columns) == ["time_s", "fraction"]
    assert b["time_s"].sum() == pytest.approx(report.step_time_s, rel=1e-9)
    assert b["fraction"].sum() == pytest.approx(1.0, rel=1e-9)
    assert b.loc["compute", "time_s"] > b.loc["exposed_communication", "time_s"] > 0


def test_communication_table_has_the_gradient_all_reduce(report: cs.Report) -> None:
    comm = report.communication
    assert list(comm.columns[:7]) == ["group", "collective", "algorithm", "bytes", "count", "time_s", "exposed_s"]
    dp = comm[(comm["group"] == "dp") & (comm["collective"] == "all_reduce")]
    assert len(dp) == 1
    # Data parallelism all-reduces the whole gradient buffer once per step.
    assert dp["bytes"].iloc[0] == report.memory.gradients_bytes
    assert dp["algorithm"].iloc[0] in cs.collective_algorithms()
    assert 0 < dp["exposed_s"].iloc[0] <= dp["time_s"].iloc[0]
    assert dp["exposed_s"].sum() == pytest.approx(report.breakdown.loc["exposed_communication", "time_s"], rel=1e-9)


def test_links_table_utilization_is_bytes_over_capacity(report: cs.Report) -> None:
    links = report.links
    assert list(links.columns[:7]) == ["id", "src", "dst", "kind", "bytes", "bandwidth_Bps", "utilization"]
    # Every key of the report's links is a column (newer reports add some: busy time, users).
    assert set(links.columns) == {"src", "dst"} | {k for link in report.to_dict()["links"] for k in link}
    assert len(links) > 0
    for row in links.itertuples():
        assert row.id == f"{row.src}->{row.dst}"
        assert row.utilization == pytest.approx(row.bytes / (row.bandwidth_Bps * report.step_time_s), rel=1e-9)
    assert list(links["utilization"]) == sorted(links["utilization"], reverse=True)  # hottest first


def test_memory_adds_up_and_fits(report: cs.Report) -> None:
    m = report.memory
    allocated = (m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes + m.logits_bytes
                 + m.transient_bytes + m.cp_kv_gather_bytes + m.fp8_saved_operands_bytes
                 + m.communication_buffers_bytes + m.workspace_bytes)
    assert m.allocated_peak_bytes == pytest.approx(allocated, rel=1e-12)
    assert m.reserved_peak_bytes == pytest.approx(m.allocated_peak_bytes + m.allocator_reserve_bytes, rel=1e-12)
    assert m.peak_bytes_per_gpu == pytest.approx(m.reserved_peak_bytes + m.cuda_context_bytes, rel=1e-12)
    assert m.framework_overhead_bytes == pytest.approx(
        m.workspace_bytes + m.allocator_reserve_bytes + m.cuda_context_bytes, rel=1e-12)
    assert m.peak_phase in ("loss", "backward", "optimizer")
    assert m.cuda_context_bytes == 400 * 2**20 and m.allocator_reserve_bytes > 0
    assert m.fits and report.fits and m.peak_bytes_per_gpu < m.capacity_bytes

def test_power_and_cost_follow_from_the_step(report: cs.Report) -> None:
    # energy = average facility power x step time; dollars per step = dollars per hour x step time
    assert report.power.energy_per_step_j == pytest.approx(report.power.cluster_avg_kw * 1e3 * report.step_time_s,
                                                           rel=1e-6)
    assert report.power.gpu_avg_w > 0
    # the clock under the power cap, set by the step's mean power (docs/power_and_cost.md): the H100's
    # large GEMMs between the sustained clock of a GEMM loop and the 1830 MHz boost clock, and no GPU
    # class above the 700 W TDP on average (0.5 %: the clock is solved on analytical replays, this
    # report's step is the flow backend's, which agrees with them to about 0.2 %)
    assert 0 < report.power.tensor_duty_cycle < 1
    assert report.power.tensor_power_budget_w >= 700
    assert 0 < report.power.gemm_clock_MHz <= 1830
    assert "step-averaged power" in report.power.clock_basis
    assert all(w <= 700 * 1.005 for w in report.power_by_gpu_class["avg_w_per_gpu"])
    assert report.cost.usd_per_step == pytest.approx(report.cost.usd_per_hour * report.step_time_s / 3600, rel=1e-6)
    assert report.cost.capex_usd > 0


def test_report_round_trips_through_dict_and_json(report: cs.Report, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    report.to_json(path)
    assert cs.Report.from_json(path) == report
    assert cs.Report.from_json(report.to_json()) == report
    assert cs.Report.from_dict(report.to_dict()) == report
    d = report.to_dict()
    assert set(d) >= {"step_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "breakdown", "communication",
                      "links", "memory", "power", "cost", "provenance"}
    assert report.provenance.fidelity == "flow"
    assert "Step time" in report.summary() and "Step time" in str(report)


def test_report_sections_are_the_core_schema(report: cs.Report) -> None:
    # The dataclasses are built from the core's report schema (_core.report_schema): their fields are
    # the section's keys in the report's order, less its tables (DataFrames), run.parallelism inline.
    d = report.to_dict()
    tables = {"power": {"by_device", "gpu_classes"}, "cost": {"bill_of_materials"},
              "provenance": {"derived_defaults"}}
    for cls, key in ((cs.Memory, "memory"), (cs.Power, "power"), (cs.Cost, "cost"), (cs.Provenance, "provenance")):
        assert [f.name for f in dataclasses.fields(cls)] == [k for k in d[key] if k not in tables.get(key, ())]
    run_keys: List[str] = []
    for k, v in d["run"].items():
        run_keys.extend(v if k == "parallelism" else [k])
    assert [f.name for f in dataclasses.fields(cs.RunInfo)] == run_keys
    assert (report.run.tp, report.run.dp) == (d["run"]["parallelism"]["tp"], d["run"]["parallelism"]["dp"])
    assert report.power.pue == d["power"]["pue"] and report.memory.fits is d["memory"]["fits"]
    # Defaults are the C++ structs' (RunInfo: tp = 1; PowerStats: pue = 1.0; MemoryStats: fits = true).
    assert (cs.RunInfo().tp, cs.Power().pue, cs.Memory().fits, cs.Provenance().extrapolated) == (1, 1.0, True, ())
    # The tables' columns too: the bill of materials as the core writes its lines.
    assert list(report.bill_of_materials.columns) == list(d["cost"]["bill_of_materials"][0])


def test_same_report_as_the_cli(cli: Optional[str], report: cs.Report) -> None:
    if cli is None:
        pytest.skip("the clustersim command is not built (set CLUSTERSIM_CLI)")
    run = subprocess.run([cli, "simulate", "--cluster", "dgx-h100-superpod", "--workload", "gpt3-1.3b",
                          "--set", "nodes=2", "--json"], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(run.stdout) == report.to_dict()


def test_specs_can_be_given_as_names_files_and_dicts(report: cs.Report, superpod: cs.Cluster,
                                                     gpt: cs.Workload, tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    gpt.to_json(path)
    by_name = cs.simulate("dgx-h100-superpod", "gpt3-1.3b", overrides={"nodes": 2})
    by_dict = cs.simulate(superpod.to_dict(), str(path))
    assert by_name.step_time_s == by_dict.step_time_s == report.step_time_s


def test_exhaustive_flow_replay_gives_the_same_report() -> None:
    # The bench's 405B-class step on 1,024 GPUs under D-mod-K: one SimGrid flow per class of identical
    # transfers (the default) and every transfer (exhaustive=True) give the same report, as the CLI's
    # --exhaustive (docs/performance.md, session 16).
    bench = Path(__file__).resolve().parents[2] / "bench" / "data" / "llama3-405b-class.json"
    overrides = {"cluster.nodes": 128, "fabric.tiers": 3, "fabric.switch_radix": 128, "fabric.routing": "d_mod_k",
                 "parallelism.dp": 8, "training.global_batch": 128}
    classes = cs.simulate("dgx-h100-superpod", str(bench), fidelity="flow", overrides=overrides)
    exhaustive = cs.simulate("dgx-h100-superpod", str(bench), fidelity="flow", overrides=overrides, exhaustive=True)
    assert classes.to_dict() == exhaustive.to_dict()
    assert classes.step_time_s == pytest.approx(7.1822, abs=1e-4)


def test_overrides_resolve_like_the_cli_set() -> None:
    r = cs.simulate("dgx-h100-superpod", "gpt3-1.3b",
                    overrides={"cluster.nodes": 4, "training.micro_batch": 4, "fabric.oversubscription": 2})
    assert (r.run.gpus, r.run.micro_batches) == (32, 4096 // (4 * 32))
    assert cs.split_overrides({"nodes": 1, "workload.training.micro_batch": 2, "parallelism.tp": 1}) == (
        {"nodes": 1}, {"training.micro_batch": 2, "parallelism.tp": 1})


def test_a_model_too_big_for_memory_is_reported_not_raised(superpod: cs.Cluster, gpt: cs.Workload) -> None:
    r = cs.simulate(superpod, gpt.updated({"model.layers": 240}))
    assert not r.fits
    assert r.memory.peak_bytes_per_gpu > r.memory.capacity_bytes
    assert r.step_time_s > 0


def test_input_refused_inside_the_simulation_names_the_json_path(superpod: cs.Cluster, gpt: cs.Workload) -> None:
    # 4096 sequences split into micro-batches of 512 (the spec is valid alone) but not on 16
    # data-parallel ranks: the simulation's check against the cluster refuses it.
    workload = gpt.updated({"training.micro_batch": 512})
    with pytest.raises(cs.SpecError) as info:
        cs.simulate(superpod, workload)
    assert info.value.file == "workloads/presets/gpt3-1.3b.json"
    assert info.value.json_path == "/training/global_batch"
    assert info.value.message == "global_batch (4096) must be a multiple of micro_batch * dp = 512 * 16 = 8192"


def test_unknown_fidelity_is_a_spec_error(superpod: cs.Cluster, gpt: cs.Workload) -> None:
    with pytest.raises(cs.SpecError) as info:
        cs.simulate(superpod, gpt, fidelity="quantum")
    assert info.value.file == "--fidelity"
    assert 'got "quantum"' in info.value.message


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGABRT, signal.SIGKILL])
def test_a_crashing_simulation_process_raises_and_python_lives_on(sig: int, superpod: cs.Cluster,
                                                                   gpt: cs.Workload, report: cs.Report) -> None:
    with pytest.raises(cs.SimulationError) as info:
        cs._core._crash_in_child(int(sig))
    assert f"killed by signal {int(sig)}" in str(info.value)
    assert isinstance(info.value, RuntimeError)
    # The interpreter is intact and simulates again.
    assert cs.simulate(superpod, gpt).step_time_s == report.step_time_s


def test_a_crash_does_not_end_a_separate_interpreter() -> None:
    # The same from a fresh interpreter: it prints after the crash and exits normally.
    code = ("import clustersim as cs\n"
            "try:\n    cs._core._crash_in_child(11)\nexcept cs.SimulationError as e:\n    print('caught', e)\n"
            "print('alive')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["caught the simulation process was killed by signal 11 (Segmentation fault)",
                                       "alive"]


def test_simulations_from_threads_agree(superpod: cs.Cluster, gpt: cs.Workload, report: cs.Report) -> None:
    # The GIL is released while the child process runs: threads simulate at once, each its own step.
    results: List[Tuple[int, float]] = []
    nodes = [1, 2, 4, 2]

    def work(n: int) -> None:
        results.append((n, cs.simulate(superpod.updated(nodes=n), gpt).step_time_s))

    threads = [threading.Thread(target=work, args=(n,)) for n in nodes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    by_nodes = dict(results)
    assert by_nodes[2] == report.step_time_s
    assert by_nodes[1] > by_nodes[2] > by_nodes[4]
    assert all(math.isfinite(v) for v in by_nodes.values())


def test_algorithm_per_process_group(superpod: cs.Cluster, gpt: cs.Workload) -> None:
    for name in ("ring", "tree"):
        if name not in cs.collective_algorithms():
            pytest.skip(f"no {name} algorithm in this build")
        comm = cs.simulate(superpod, gpt, algorithm={"dp": name}).communication
        assert set(comm.loc[comm["group"] == "dp", "algorithm"]) == {name}
    with pytest.raises(cs.SpecError):
        cs.simulate(superpod, gpt, algorithm="no-such-algorithm")
    # An algorithm the group cannot run (NVLS reduces inside one node; dp spans 2) is refused, never
    # replaced: the option, the communicator and why.
    with pytest.raises(cs.SpecError) as info:
        cs.simulate(superpod, gpt, algorithm={"dp": "nvls"})
    assert info.value.file == "--algorithm dp"
    assert info.value.json_path == ""
    assert info.value.message == ("communicator 'dp' (16 ranks): the nvls algorithm cannot run this all_reduce: "
                                  "NVLS reduces inside one NVSwitch domain")
    assert str(info.value) == "--algorithm dp: " + info.value.message


def test_analytical_fidelity_is_the_fast_model(report: cs.Report, superpod: cs.Cluster, gpt: cs.Workload) -> None:
    if "analytical" not in cs.fidelities():
        pytest.skip("no analytical backend in this build")
    fast = cs.simulate(superpod, gpt, fidelity="analytical")
    assert fast.provenance.fidelity == "analytical"
    assert fast.tokens_per_s == pytest.approx(gpt.tokens_per_step / fast.step_time_s, rel=1e-12)
    # On 16 GPUs the all-reduce hides behind compute: both network models give nearly the same step.
    assert fast.step_time_s == pytest.approx(report.step_time_s, rel=0.05)


def test_simulate_options_are_checked_by_the_core(gpt: cs.Workload) -> None:
    # The module takes a keyword dict: an unknown option and a timeline of 0 rank classes are refused by
    # the core's SimulationRequest (sim/api), as the CLI's --timeline-ranks 0 is.
    from clustersim import _core

    cluster = cs.Cluster.preset("dgx-h100-superpod", nodes=1)
    with pytest.raises(cs.SpecError, match="unknown option 'fidelty'"):
        _core.simulate(*cluster._as_core(), *gpt._as_core(), {"fidelty": "flow"})
    with pytest.raises(cs.SpecError, match="positive number of rank classes"):
        cs.simulate(cluster, gpt, timeline=True, timeline_classes=0)


def test_adaptive_classes_keep_the_report_of_gpt3_on_1024_gpus() -> None:
    # adaptive_classes (the default since session 17): one simulated transfer per class of identical
    # transfers under the preset's adaptive routing, checked at every launch against the load in flight
    # (exact, docs/performance.md): the report of GPT-3 175B on 1,024 GPUs (the preset's 2-tier fabric)
    # is the exhaustive replay's, as with the classes off for adaptive routing only.
    cluster = cs.Cluster.coerce("dgx-h100-superpod").updated({"nodes": 128})
    workload = cs.Workload.coerce("gpt3-175b").updated({"parallelism.dp": 16})
    exhaustive = cs.simulate(cluster, workload, fidelity="analytical", exhaustive=True)
    classes = cs.simulate(cluster, workload, fidelity="analytical")
    off = cs.simulate(cluster, workload, fidelity="analytical", adaptive_classes=False)
    assert classes.to_dict() == exhaustive.to_dict()
    assert off.to_dict() == exhaustive.to_dict()
    assert classes.step_time_s > 0
