"""simulate(timeline=...), Report.timeline() and plots.plot_timeline: the step's ops as a DataFrame that
agrees with the report, carried by the report (pickles with it) and paid for only when asked."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

import clustersim as cs
from clustersim import plots
from clustersim.report import TIMELINE_COLUMNS


@pytest.fixture(scope="module")
def small() -> cs.Workload:
    """A 4-layer transformer, 8 micro-batches per data-parallel rank on 8 GPUs: a short timeline."""
    return cs.Workload.transformer(name="tiny", layers=4, hidden=1024, heads=16, seq_len=1024, vocab=32000,
                                   global_batch=64)


@pytest.fixture(scope="module")
def dp_report(small: cs.Workload) -> cs.Report:
    """Data parallel on 8 GPUs: every rank does the same work, one rank class."""
    return cs.simulate(cs.Cluster.preset("dgx-h100"), small, fidelity="analytical",
                       timeline=True)


def test_timeline_columns_and_categories(dp_report: cs.Report) -> None:
    t = dp_report.timeline()
    assert tuple(t.columns) == TIMELINE_COLUMNS
    assert tuple(t.columns[:12]) == ("rank_class", "ranks", "stream", "name", "category", "start_s", "end_s",
                                     "duration_s", "bytes", "flops", "communicator", "algorithm")
    assert set(t["category"]) <= {"compute", "collective", "p2p"}
    assert {"compute", "collective"} <= set(t["category"])
    assert (t["end_s"] - t["start_s"] - t["duration_s"]).abs().max() < 1e-12
    assert t["start_s"].min() >= 0 and t["end_s"].max() == pytest.approx(dp_report.step_time_s, rel=1e-9)
    assert list(t["start_s"]) == sorted(t["start_s"])
    # Collectives name their communicator and algorithm; compute ops carry flops.
    coll = t[t["category"] == "collective"]
    assert set(coll["communicator"]) == {"dp"} and coll["algorithm"].notna().all()
    assert (t.loc[t["category"] == "compute", "flops"] > 0).any()
    assert set(t["ranks"]) == {"all ranks (rank 0 and 7 more: identical work)"}


def test_compute_slices_add_up_to_the_breakdown(dp_report: cs.Report) -> None:
    # One rank class, and it is the critical one: its compute stream's busy time is the report's compute.
    t = dp_report.timeline()
    compute = t[t["category"] == "compute"]
    assert compute["duration_s"].sum() == pytest.approx(dp_report.breakdown.loc["compute", "time_s"], rel=1e-9)


def test_the_collectives_of_the_timeline_are_the_reports(dp_report: cs.Report) -> None:
    t = dp_report.timeline()
    comm = dp_report.communication
    coll = t[t["category"] == "collective"]
    assert len(coll) == comm["count"].sum()
    assert coll["duration_s"].sum() == pytest.approx(comm["time_s"].sum(), rel=1e-9)


def test_pipeline_stages_are_rank_classes_with_send_recv(small: cs.Workload) -> None:
    r = cs.simulate(cs.Cluster.preset("dgx-h100"), small.updated({"parallelism.pp": 2}),
                    fidelity="analytical", timeline=True)
    t = r.timeline()
    assert t["rank_class"].nunique() == 2
    p2p = t[t["category"] == "p2p"]
    assert len(p2p) > 0 and set(p2p["communicator"]) == {"pp"} and (p2p["bytes"] > 0).all()
    trace = r.timeline_trace()
    assert {e["ph"] for e in trace["traceEvents"]} >= {"M", "X", "s", "f"}  # flow arrows send -> recv


def test_timeline_file_pickling_and_reports_without_one(dp_report: cs.Report, small: cs.Workload,
                                                        tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    r = cs.simulate(cs.Cluster.preset("dgx-h100"), small, fidelity="analytical", timeline=path)
    assert json.loads(path.read_text())["traceEvents"] and r.has_timeline
    assert r == dp_report  # the same report either way
    again = pickle.loads(pickle.dumps(dp_report))
    assert again.has_timeline and again.timeline().equals(dp_report.timeline())
    reread = cs.Report.from_json(dp_report.to_json(), timeline=path)
    assert len(reread.timeline()) == len(dp_report.timeline())
    plain = cs.Report.from_dict(dp_report.to_dict())  # to_dict is the CLI's report: no timeline in it
    assert not plain.has_timeline and "timeline" not in plain.to_dict()
    with pytest.raises(ValueError, match="timeline=True"):
        plain.timeline()


def test_a_bad_timeline_path_is_a_spec_error(small: cs.Workload, tmp_path: Path) -> None:
    with pytest.raises(cs.SpecError) as info:
        cs.simulate(cs.Cluster.preset("dgx-h100"), small, fidelity="analytical",
                    timeline=tmp_path / "no" / "such" / "dir" / "t.json")
    assert info.value.message == "cannot write the timeline file: No such file or directory"


def test_plot_timeline_draws_a_row_per_class_and_stream(dp_report: cs.Report) -> None:
    ax = plots.plot_timeline(dp_report)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    t = dp_report.timeline()
    assert len(labels) == len(t.groupby(["rank_class", "stream"], observed=True))
    assert any("compute" in label for label in labels)
    assert ax.get_xlim() == (0.0, dp_report.step_time_s)


def test_output_files_are_written_whole_or_not_at_all(dp_report: cs.Report, tmp_path: Path) -> None:
    # The Python writers share the CLI's helper: a temporary beside the target, renamed over it.
    target = tmp_path / "report.json"
    target.write_text("previous contents")
    dp_report.to_json(target)
    assert json.loads(target.read_text())["step_time_s"] == dp_report.step_time_s
    dp_report.save_timeline(tmp_path / "step.json")
    assert "traceEvents" in json.loads((tmp_path / "step.json").read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "step.json"]  # no temporary left
    with pytest.raises(cs.SpecError) as info:
        dp_report.to_json(tmp_path)  # a directory in the way
    assert info.value.message == "cannot write the report file: it is a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "step.json"]
