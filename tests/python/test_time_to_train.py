"""Python reaches the time to train (issue 23): cs.simulate(..., train_tokens=...) gives the report's
time_to_train section, the same as the CLI's --train-tokens, and bad values raise SpecError naming the
option or the JSON path."""

from __future__ import annotations

import pytest

import clustersim as cs

SMALL = {"nodes": 2, "training.global_batch": 64, "training.micro_batch": 2}


def _report(**kwargs) -> cs.Report:
    return cs.simulate("dgx-h100-superpod", "gpt3-1.3b", fidelity="analytical", overrides=SMALL, **kwargs)


def test_train_tokens_give_the_section_with_its_steps_and_conserved_parts() -> None:
    report = _report(train_tokens="1B", runs=100, seed=3)
    t = report.time_to_train
    assert t is not None
    # 1e9 tokens / (64 sequences x 2,048 tokens) per step, rounded up: 7,630 steps.
    assert t["steps"] == 7630
    assert t["runs"] == 100 and t["seed"] == 3
    # The means of the four parts add up to the mean wall time (each run conserves it).
    parts = t["useful_s"] + t["checkpoint_s"] + t["lost_s"] + t["restart_total_s"]
    assert parts == pytest.approx(t["days_mean"] * 86400, rel=1e-9)
    assert t["useful_s"] == pytest.approx(7630 * t["effective_step_time_s"], rel=1e-9)
    assert 0 < t["goodput"] <= 1
    # Each cause's expected count: its rate per component-year x the built cluster's components x the
    # mean wall time; the 16 GPUs of the 2 nodes carry the GPU and HBM rates.
    for c in t["causes"]:
        assert c["expected"] == pytest.approx(c["per_year"] * c["components"] * t["days_mean"] / 365.25, rel=1e-9)
    assert {c["cause"]: c["components"] for c in t["causes"]}["gpu"] == 16
    assert {c["cause"]: c["components"] for c in t["causes"]}["software"] == 2
    # A number works as well as the CLI's suffix, and the same seed gives the same section.
    assert _report(train_tokens=1e9, runs=100, seed=3).time_to_train == t
    assert _report().time_to_train is None


def test_bad_training_run_values_raise_spec_errors() -> None:
    with pytest.raises(cs.SpecError, match="--train-tokens"):
        _report(train_tokens=0)
    with pytest.raises(cs.SpecError, match="/reliability/gpu_per_year"):
        cs.simulate("dgx-h100-superpod", "gpt3-1.3b", fidelity="analytical",
                    overrides={**SMALL, "reliability.gpu_per_year": -1}, train_tokens="1B")


def test_a_set_interval_and_stragglers_reach_the_section() -> None:
    report = cs.simulate("dgx-h100-superpod", "gpt3-1.3b", fidelity="analytical",
                         overrides={**SMALL, "reliability.straggler_cv": 0.05}, train_tokens="1B",
                         checkpoint_interval_s=600, runs=50)
    t = report.time_to_train
    assert t["checkpoint_interval_basis"] == "set" and t["checkpoint_interval_s"] == 600
    # The slowest of 16 GPUs: E[max] of 16 lognormal slowdowns of cv 0.05, about 1 + 1.77 x 0.05.
    assert 1.07 < t["straggler_inflation"] < 1.10
    assert t["effective_step_time_s"] == pytest.approx(report.step_time_s * t["straggler_inflation"], rel=1e-12)


def test_best_searches_the_checkpoint_interval_and_sweep_the_spare_nodes() -> None:
    # best() over checkpoint intervals around Young's (a tenth, Young's, ten times) by the run's mean days
    # picks Young's; the sweep's rows carry each run's days, goodput and cost, and more spare nodes
    # never lengthen the run (a failed node is replaced at once instead of waiting for its repair).
    big = {"nodes": 32, "training.global_batch": 512, "training.micro_batch": 2}
    young = cs.simulate("dgx-h100-superpod", "gpt3-1.3b", fidelity="analytical", overrides=big,
                        train_tokens="2T").time_to_train["young_daly_interval_s"]
    candidates = [{"checkpoint_interval_s": young * f} for f in (0.1, 1.0, 10.0)]
    b = cs.best(cs.Cluster.preset("dgx-h100-superpod", nodes=32), cs.Workload.preset("gpt3-1.3b", training={
        "global_batch": 512, "micro_batch": 2}), objective="time_to_train_days", candidates=candidates,
                fidelity="analytical", train_tokens="2T", n_jobs=1, progress=False)
    assert b.found and b.parameters == {"checkpoint_interval_s": young}
    days = b.candidates.set_index("checkpoint_interval_s")["time_to_train_days"]
    assert days[young] < days[young * 0.1] and days[young] < days[young * 10]
    df = cs.sweep("dgx-h100-superpod", "gpt3-1.3b", {"reliability.spare_nodes": [0, 4]}, fidelity="analytical",
                  train_tokens="2T", n_jobs=1, progress=False)
    assert {"time_to_train_days", "goodput", "time_to_train_usd"} <= set(df.columns)
    assert df["time_to_train_days"].iloc[1] <= df["time_to_train_days"].iloc[0]
    with pytest.raises(ValueError, match="train_tokens"):
        cs.sweep("dgx-h100-superpod", "gpt3-1.3b", {"checkpoint_interval_s": [60]}, progress=False)
