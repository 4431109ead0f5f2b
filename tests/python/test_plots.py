"""Plots draw what the data says: bar heights are the breakdown, lines are the metric, the Pareto
front is the non-dominated set, the heatmap's cells are the link utilizations."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import clustersim as cs
from clustersim import plots


@pytest.fixture(scope="module")
def scaling() -> pd.DataFrame:
    return cs.sweep("dgx-h100-superpod", "gpt3-1.3b", grid={"nodes": [1, 2, 4, 8]}, progress=False)


def test_breakdown_bars_are_the_breakdown(report: cs.Report) -> None:
    small = cs.simulate("dgx-h100", "gpt3-1.3b")
    ax = plots.plot_breakdown([small, report], labels=["8 GPUs", "16 GPUs"])
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 3 * 2  # three components, two bars
    compute, exposed = heights[0:2], heights[2:4]
    assert compute == pytest.approx([small.breakdown.loc["compute", "time_s"], report.breakdown.loc["compute", "time_s"]])
    assert exposed[1] == pytest.approx(report.breakdown.loc["exposed_communication", "time_s"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["8 GPUs", "16 GPUs"]
    plt.close(ax.figure)


def test_breakdown_of_a_sweep_normalized_adds_up_to_one(scaling: pd.DataFrame) -> None:
    ax = plots.plot_breakdown(scaling, labels=[f"{n} nodes" for n in scaling["nodes"]], normalize=True)
    per_bar = np.array([p.get_height() for p in ax.patches]).reshape(3, len(scaling)).sum(axis=0)
    assert per_bar == pytest.approx([1.0] * len(scaling))
    plt.close(ax.figure)


def test_scaling_curve_and_ideal_line(scaling: pd.DataFrame) -> None:
    ax = plots.plot_scaling(scaling, x="gpus", y="tokens_per_s")
    measured, ideal = ax.get_lines()
    assert list(measured.get_xdata()) == [8, 16, 32, 64]
    assert list(measured.get_ydata()) == list(scaling["tokens_per_s"])
    first = scaling["tokens_per_s"].iloc[0]
    assert list(ideal.get_ydata()) == pytest.approx([first, 2 * first, 4 * first, 8 * first])
    # Data parallelism with a fixed global batch scales, but below ideal (communication grows).
    assert all(m <= i * (1 + 1e-12) for m, i in zip(measured.get_ydata(), ideal.get_ydata()))
    plt.close(ax.figure)


def test_pareto_front_is_the_non_dominated_set() -> None:
    df = pd.DataFrame({"cost": [1, 2, 3, 2, 4, 5], "time": [9, 5, 4, 6, 4, 1], "error": [None] * 5 + ["bad"]})
    front = plots.pareto_front(df, "cost", "time")
    # (2, 6) is dominated by (2, 5); (4, 4) by (3, 4); the error row is left out.
    assert list(zip(front["cost"], front["time"])) == [(1, 9), (2, 5), (3, 4)]
    ax = plots.plot_pareto(df, x="cost", y="time")
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [1, 2, 3]
    plt.close(ax.figure)


def test_link_heatmap_cells_are_utilizations(report: cs.Report) -> None:
    ax = plots.plot_link_heatmap(report)
    image = ax.get_images()[0].get_array()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    links = report.links
    for src, dst, u in zip(links["src"], links["dst"], links["utilization"]):
        assert image[labels.index(src), labels.index(dst)] == pytest.approx(u)
    assert int(np.isfinite(np.asarray(image.filled(np.nan), dtype=float)).sum()) == len(links)
    assert math.isclose(float(np.nanmax(image.filled(np.nan))), float(links["utilization"].max()))
    plt.close(ax.figure)


def test_topology_drawing_has_a_line_per_link_and_colours_the_busiest(superpod: cs.Cluster,
                                                                      report: cs.Report) -> None:
    import json

    from matplotlib.collections import LineCollection

    ax = plots.plot_topology(superpod, report)
    collections = [c for c in ax.collections if isinstance(c, LineCollection)]
    grey, hot = collections
    topo = json.loads(superpod.export("json"))
    undirected = {tuple(sorted((l["src"], l["dst"]))) for l in topo["links"]}
    assert len(grey.get_segments()) + len(hot.get_segments()) == len(undirected)
    busiest = {tuple(sorted(p)) for p in zip(report.links["src"], report.links["dst"])}
    assert len(hot.get_segments()) == len(busiest)
    assert max(hot.get_array()) == pytest.approx(report.links["utilization"].max())
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["gpu", "nvswitch"]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="max_devices"):
        plots.plot_topology(superpod, max_devices=10)
