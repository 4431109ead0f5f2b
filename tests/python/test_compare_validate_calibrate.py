"""compare(), validate() and calibrate(): the commands' results as DataFrames, computed by the same C++
(the comparison's training-run figures and Pareto marks, the validation statistics, the kernel fit)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Optional

import pytest

import clustersim as cs
from clustersim import plots
from clustersim.compare import COMPARE_COLUMNS
from clustersim.validation import VALIDATION_COLUMNS

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "calibration" / "data"  # the measurements shipped with the repository, as the C++ tests find them
DESIGNS = ["dgx-h100-superpod", "hgx-h100-roce", "dgx-a100-superpod"]


@pytest.fixture(scope="module")
def workload() -> cs.Workload:
    return cs.Workload.preset("gpt3-1.3b", training={"global_batch": 256})


@pytest.fixture(scope="module")
def table(workload: cs.Workload) -> "object":
    return cs.compare(workload, DESIGNS, tokens=2e12, fidelity="analytical", overrides={"nodes": 2})


def test_compare_has_one_row_per_design_and_a_pareto_column(table: "object", workload: cs.Workload) -> None:
    df = table
    assert list(df.columns) == list(COMPARE_COLUMNS)
    assert list(df["design"]) == DESIGNS and df["error"].isna().all()
    assert df["pareto"].dtype == bool and df["pareto"].any()
    assert list(df["gpus"]) == [16, 16, 16]
    # Training-run figures: steps = tokens / tokens per step, each costing a step's time and dollars.
    reports = df.attrs["reports"]
    for row in df.itertuples():
        r = reports[row.design]
        steps = 2e12 / workload.tokens_per_step
        assert row.train_time_s == pytest.approx(steps * r.step_time_s, rel=1e-9)
        assert row.train_cost_usd == pytest.approx(steps * r.cost.usd_per_step, rel=1e-9)
        assert row.train_energy_kwh == pytest.approx(steps * r.power.energy_per_step_j / 3.6e6, rel=1e-9)
        # The same run with failures, checkpoints and restarts (the report's time_to_train) ranks it.
        ttt = r.time_to_train
        assert row.goodput == ttt["goodput"] and 0 < row.goodput <= 1
        assert row.run_time_s == pytest.approx(ttt["days_mean"] * 86400, rel=1e-12)
        assert row.run_time_s >= row.train_time_s * (1 - 1e-12)
    # No design on the front is beaten on both time and cost (of the run with failures) by another.
    for a in df[df["pareto"]].itertuples():
        assert not any(b.run_time_s <= a.run_time_s and b.run_cost_usd < a.run_cost_usd
                       for b in df.itertuples() if b.design != a.design)
    assert df.attrs["tokens"] == 2e12
    assert df.attrs["pareto_among"] == ("designs that fit in memory, by the run's time and cost with failures, "
                                        "checkpoints and restarts")
    assert "clustersim compare" in df.attrs["text"] and "pareto" in df.attrs["text"]
    ax = plots.plot_pareto(df, x="train_cost_usd", y="train_time_s", label="design", front="pareto")
    assert len(ax.texts) == 3


def test_compare_carries_each_designs_interval_and_which_are_within_the_models_error(
        table: "object", workload: cs.Workload) -> None:
    df = table
    reports = df.attrs["reports"]
    steps = 2e12 / workload.tokens_per_step
    for row in df.itertuples():
        lo, hi = row.step_time_interval_s
        assert (lo, hi) == reports[row.design].step_time_interval_s
        assert 0 < lo < hi
        # The training-time interval is the step's, times the steps of the run.
        assert row.train_time_interval_s == pytest.approx((steps * lo, steps * hi), rel=1e-9)
        # Overlap is symmetric and follows from the intervals.
        for other in df.itertuples():
            if other.design == row.design:
                continue
            olo, ohi = other.train_time_interval_s
            overlap = olo <= row.train_time_interval_s[1] and row.train_time_interval_s[0] <= ohi
            assert (other.design in row.within_error_of) == overlap
    basis = reports[DESIGNS[0]].step_time_interval_basis
    assert basis["rows"] >= 20 and sum(basis["datasets"].values()) == basis["rows"]
    assert basis["widening"] == pytest.approx(1 + basis["mean_distance"])


def test_compare_agrees_with_the_command(cli: Optional[str], table: "object") -> None:
    if cli is None:
        pytest.skip("the clustersim command is not built (set CLUSTERSIM_CLI)")
    args = [cli, "compare", "--workload", "gpt3-1.3b", "--set", "training.global_batch=256", "--set", "nodes=2",
            "--fidelity", "analytical", "--tokens", "2e12", "--json"]
    for d in DESIGNS:
        args += ["--cluster", d]
    out = json.loads(subprocess.run(args, capture_output=True, text=True, timeout=120, check=True).stdout)
    for design, row in zip(out["designs"], table.itertuples()):  # type: ignore[attr-defined]
        assert design["design"] == row.design and design["pareto"] == row.pareto
        assert design["train_cost_usd"] == row.train_cost_usd and design["step_time_s"] == row.step_time_s


def test_purchase_report_renders_in_headless_chromium(table: "object", workload: cs.Workload,
                                                      tmp_path: Path) -> None:
    # The page compare() returns is the one html= writes; headless Chromium (Debian's package, installed
    # by ./setup.sh test) loads it offline without a console error, and its DOM holds the designs table
    # with a row per design, the charts, and a point per design on the time-vs-cost chart.
    import shutil

    page = table.attrs["html"]
    path = tmp_path / "report.html"
    again = cs.compare(workload, DESIGNS, tokens=2e12, fidelity="analytical", overrides={"nodes": 2}, html=path)
    assert path.read_text(encoding="utf-8") == page == again.attrs["html"]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is needed (apt-get install chromium; ./setup.sh test installs it)"
    run = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                          "--v=0", "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    console_errors = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Failed to load" in line]
    assert not console_errors, console_errors
    assert '<table id="designs">' in dom and dom.count("<svg") >= 4
    for design in table.design:  # type: ignore[attr-defined]
        assert f"<tr><td>{design}</td>" in dom
    assert dom.count('<circle class="point') == len(table)
    assert dom.count('class="point pareto"') == int(table.pareto.sum())  # type: ignore[attr-defined]


def test_compare_at_a_gpu_count_agrees_with_the_command(cli: Optional[str]) -> None:
    # compare(gpus=N) sizes each design as `clustersim compare --gpus N` does (the same rows, the same
    # errors), the workload preset's dp 24 left to the cluster.
    assert cli is not None, "set CLUSTERSIM_CLI"
    designs = ["hgx-h100-roce", "dgx-h100"]
    df = cs.compare("gpt3-175b", designs, gpus=1024, fidelity="analytical")
    args = [cli, "compare", "--workload", "gpt3-175b", "--gpus", "1024", "--fidelity", "analytical", "--json"]
    for d in designs:
        args += ["--cluster", d]
    out = json.loads(subprocess.run(args, capture_output=True, text=True, timeout=300).stdout)
    assert list(df.design) == [d["design"] for d in out["designs"]]
    ok, bad = df.iloc[0], df.iloc[1]
    assert ok.gpus == 1024 and ok.step_time_s == out["designs"][0]["step_time_s"]
    assert df.attrs["reports"]["hgx-h100-roce"].to_dict()["run"]["parallelism"]["dp"] == 16
    assert bad.error == out["designs"][1]["error"] and "single_node" in bad.error


def test_compare_at_a_budget_agrees_with_the_command(cli: Optional[str]) -> None:
    # compare(budget_usd=X) sizes each design as `clustersim compare --budget-usd X` does.
    assert cli is not None, "set CLUSTERSIM_CLI"
    designs = ["dgx-h100-superpod", "dgx-b200-superpod", "dgx-h100"]
    df = cs.compare("gpt3-1.3b", designs, budget_usd=20e6, fidelity="analytical", tokens=3e11)
    args = [cli, "compare", "--workload", "gpt3-1.3b", "--budget-usd", "20M", "--fidelity", "analytical",
            "--tokens", "300B", "--json"]
    for d in designs:
        args += ["--cluster", d]
    out = json.loads(subprocess.run(args, capture_output=True, text=True, timeout=300).stdout)
    for row, d in zip(df.itertuples(), out["designs"]):
        assert row.design == d["design"]
        if "error" in d:  # the same reason (the budget printed as each front end was given it)
            assert row.error.split(" USD: ", 1)[1] == d["error"].split(" USD: ", 1)[1]
        else:
            assert row.gpus == d["gpus"] and row.capex_usd == d["capex_usd"] <= 20e6
    assert df.iloc[2].gpus == 8  # a single server does not grow: its 8 GPUs are what the budget buys
    with pytest.raises(ValueError, match="not both"):
        cs.compare("gpt3-1.3b", designs, budget_usd=1e6, gpus=64)


def test_compare_refuses_bad_input_before_simulating(workload: cs.Workload) -> None:
    with pytest.raises(cs.SpecError):
        cs.compare(workload, ["dgx-h100-superpod", "no-such-cluster"], fidelity="analytical")
    with pytest.raises(ValueError, match="tokens"):
        cs.compare(workload, DESIGNS, tokens=0)
    with pytest.raises(TypeError):
        cs.compare(workload, "dgx-h100-superpod")  # type: ignore[arg-type]


def test_repeated_designs_are_numbered(workload: cs.Workload) -> None:
    df = cs.compare(workload, ["dgx-h100", "dgx-h100"], fidelity="analytical")
    assert list(df["design"]) == ["dgx-h100", "dgx-h100 #2"]
    assert df["step_time_s"].iloc[0] == df["step_time_s"].iloc[1] and df["pareto"].all()  # a tie: both


def test_validate_returns_rows_and_a_summary() -> None:
    assert {"vtrain-multi", "vtrain-single"} <= set(cs.validation_datasets())
    rows, summary = cs.validate("vtrain-multi", fidelity="analytical", limit=2, jobs=2)
    assert list(rows.columns) == list(VALIDATION_COLUMNS) and len(rows) == 2
    assert list(rows["id"]) == ["0000", "0001"]
    simulated = rows[rows["status"] == "simulated"]
    assert (simulated["error"] == (simulated["predicted"] - simulated["measured"]) / simulated["measured"]).all()
    assert summary["rows"] == 2 and summary["simulated"] == len(simulated)
    errors = simulated["error"]
    assert summary["mape"] == pytest.approx(errors.abs().mean(), rel=1e-12)
    assert summary["bias"] == pytest.approx(errors.mean(), rel=1e-12)
    assert summary["max_abs_error"] == pytest.approx(errors.abs().max(), rel=1e-12)
    for key in ("median_abs_error", "p90_abs_error"):
        assert 0 <= summary[key] <= summary["max_abs_error"]
    assert summary["metric"] == "iteration_time_ms" and summary["unit"] == "ms" and summary["total_rows"] == 109
    assert summary["fidelity"] == "analytical" and summary["assumptions"]
    with pytest.raises(cs.SpecError):
        cs.validate("no-such-dataset", limit=1)
    with pytest.raises(cs.SpecError) as info:
        cs.validate("vtrain-multi", fidelity="quantum", limit=1)
    assert info.value.file == "--fidelity"


def test_validate_h100_device_compares_step_time_and_the_allocated_peak() -> None:
    rows, summary = cs.validate("h100-device", fidelity="analytical", limit=3, jobs=2)
    assert list(rows.columns) == list(VALIDATION_COLUMNS) and len(rows) == 3
    assert summary["peak_memory"] == {"counts": "allocated", "unit": "GiB"}
    # The first row, gpt-350m micro-batch 1: 7.37 GiB measured (torch.cuda.max_memory_allocated).
    first = rows.iloc[0]
    assert first["id"] == "gpt-350m-mb1-gb1" and first["status"] == "simulated"
    assert first["measured_peak_memory_bytes"] == pytest.approx(7.37 * 2**30, rel=1e-12)
    errors = (rows["predicted_peak_memory_bytes"] - rows["measured_peak_memory_bytes"]) / rows["measured_peak_memory_bytes"]
    assert (rows["peak_memory_error"] == errors).all()
    assert rows["peak_memory_error"].abs().max() < 0.01  # the memory model is within 1 % on these rows
    peak = summary["peak_memory_errors"]
    assert peak["rows"] == 3 and peak["max_abs_error"] == pytest.approx(errors.abs().max(), rel=1e-12)
    # A dataset without peak memory has none.
    rows, summary = cs.validate("vtrain-multi", fidelity="analytical", limit=1)
    assert summary["peak_memory"] is None and summary["peak_memory_errors"] is None
    assert rows["measured_peak_memory_bytes"].isna().all()


def _data() -> Path:
    assert (DATA / "vidur").is_dir(), f"the measurements are not at {DATA}"
    return DATA


def _same_fit(a: object, b: object) -> bool:
    """Equal JSON values, numbers to 1e-6 relative (a refit's last digits vary with the CPU)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_fit(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_fit(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-6, abs=1e-12)
    return a == b


def test_calibrate_round_trip_reproduces_the_shipped_profile(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data()
    shipped = cs.calibration_profile("h100-sxm5-80gb")
    path = tmp_path / "h100.json"
    # Fitting the shipped profile's own measurements as calibration/fit_profiles.sh does (from the
    # repository, data in calibration/data, recorded in each value's source) gives the shipped profile back.
    monkeypatch.chdir(REPO)
    profile = cs.calibrate(shipped["fitted_on"], gpu="h100-sxm5-80gb", held_out=shipped["held_out"],
                           description=shipped["description"], data_dir="calibration/data", out=path)
    # The same fit: equal to the shipped profile but for the optimizer's last digits (about 1e-9
    # relative), which vary with the CPU's floating point.
    assert _same_fit(profile, shipped)
    assert cs.calibration_profile(path) == profile == json.loads(path.read_text())
    assert cs.calibration_profile(profile) == profile
    held_out = cs.kernel_accuracy(profile, profile["held_out"], data_dir=data)
    assert list(held_out.columns) == ["metric", "operation", "count", "median_abs_error", "p90_abs_error",
                                      "median_error"]
    overall = held_out[(held_out["metric"] == "time") & (held_out["operation"] == "all")].iloc[0]
    assert overall["count"] > 10_000 and overall["median_abs_error"] < 0.10  # calibration/README.md: 8.0 %
    # The fit helps: the catalogue's uncalibrated values miss the held-out kernels by more.
    before = cs.kernel_accuracy(None, profile["held_out"], gpu="h100-sxm5-80gb", data_dir=data)
    assert before.loc[(before["metric"] == "time") & (before["operation"] == "all"), "median_abs_error"].iloc[0] \
        > overall["median_abs_error"]


def test_calibrate_with_fixed_parameters_reproduces_the_shipped_h200_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    # calibration/fit_profiles.sh fits the H200 to its own microbenchmarks with gemm_memory_efficiency
    # fixed (--fixed): the sweep cannot pin it, so it keeps the catalogue's value and is not in the profile.
    shipped = cs.calibration_profile("h200-sxm-141gb")
    assert "gemm_memory_efficiency" not in shipped["parameters"]
    monkeypatch.chdir(REPO)
    profile = cs.calibrate(shipped["fitted_on"], gpu="h200-sxm-141gb", held_out=shipped["held_out"],
                           description=shipped["description"], data_dir="calibration/data",
                           fixed=["gemm_memory_efficiency"])
    assert _same_fit(profile, shipped)
    with pytest.raises(cs.SpecError, match="expected a parameter of the kernel fit"):
        cs.calibrate(shipped["fitted_on"], gpu="h200-sxm-141gb", data_dir="calibration/data", fixed=["no_such"])


def test_kernel_errors_per_measurement_agree_with_the_summary() -> None:
    data = _data()
    files = ["published/microbench.json#micro-0028..micro-0032,micro-0077..micro-0082"]
    errors = cs.kernel_errors("h100-sxm5-80gb", files, data_dir=data)
    assert len(errors) == 11
    # STREAM records are compared by time, the published GEMM tables by throughput (as the command does).
    stream, gemm = errors[errors["operation"] != "gemm"], errors[errors["operation"] == "gemm"]
    assert set(stream["metric"]) == {"time"} and set(gemm["metric"]) == {"throughput"}
    assert ((stream["predicted_s"] / stream["time_s"] - 1) - stream["error"]).abs().max() < 1e-12
    assert ((gemm["time_s"] / gemm["predicted_s"] - 1) - gemm["error"]).abs().max() < 1e-12
    summary = cs.kernel_accuracy("h100-sxm5-80gb", files, data_dir=data)
    assert list(summary["metric"]) == ["time"] * 6 + ["throughput"] * 2
    pooled = summary[(summary["metric"] == "throughput") & (summary["operation"] == "all")].iloc[0]
    assert pooled["count"] == 6
    assert pooled["median_abs_error"] == pytest.approx(gemm["error"].abs().median(), rel=1e-12)


def test_kernel_durations_leave_out_the_gemm_librarys_host_side_cost(tmp_path: Path) -> None:
    # The same GEMM record, once from DeepGEMM (a profiler's kernel duration) and once from cuBLASLt
    # (per call): the predicted kernel duration is shorter by gemm_launch_us - kernel_launch_us.
    record = {"kind": "gemm", "gpu": "NVIDIA H800 (SXM)", "dtype": "fp8", "M": 64, "N": 7168, "K": 2048, "tflops": 295}
    path = tmp_path / "microbench.json"
    path.write_text(json.dumps([dict(record, id="micro-0001", library="DeepGEMM (JIT, Hopper wgmma)"),
                                dict(record, id="micro-0002", library="cuBLASLt")]))
    kernels = cs.read_measurements(path)
    assert list(kernels["timing"]) == ["kernel_duration", "per_call"]
    errors = cs.kernel_errors("h100-sxm5-80gb", [path])
    parameters = cs.calibration_profile("h100-sxm5-80gb")["parameters"]
    host_side_s = (parameters["gemm_launch_us"]["value"] - parameters["kernel_launch_us"]["value"]) * 1e-6
    assert host_side_s > 2e-6  # the shipped H100 profile: 4.5 us against 1.5 us
    assert errors["predicted_s"].iloc[1] - errors["predicted_s"].iloc[0] == pytest.approx(host_side_s, rel=1e-9)


def test_calibration_errors_name_the_file() -> None:
    with pytest.raises(cs.SpecError, match="no such measurement file"):
        cs.calibrate(["no/such/file.json"], gpu="h100-sxm5-80gb", data_dir=os.devnull)
    with pytest.raises(cs.SpecError, match="no calibration profile for 'b200'"):
        cs.calibration_profile("b200")


def test_validate_counts_are_checked_by_the_core() -> None:
    # The request (sim/api/validation_request) refuses a count below 1 as the CLI's --jobs 0 is refused;
    # nothing is simulated.
    with pytest.raises(cs.SpecError, match="--jobs: expected a positive integer, got 0"):
        cs.validate("vtrain-single", jobs=0)
    with pytest.raises(cs.SpecError, match="--limit: expected a positive integer, got -1"):
        cs.validate("vtrain-single", limit=-1)
