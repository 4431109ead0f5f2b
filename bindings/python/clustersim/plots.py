"""Plots (matplotlib) of reports and sweeps. Every function draws on ``ax`` (a new figure's axes when
None) and returns the axes, so plots compose and can be checked in tests.

- :func:`plot_breakdown`: where the step time goes (compute, exposed communication, bubble, host), stacked
  bars per report or per sweep row.
- :func:`plot_scaling`: a metric against GPU count (or any column), one line per group, with the ideal
  linear scaling from the smallest configuration.
- :func:`plot_link_heatmap`: utilization of the busiest links, as a source x destination matrix.
- :func:`plot_pareto`: two objectives to minimize (cost vs time, GPUs vs time), the Pareto front
  highlighted; :func:`pareto_front` gives its rows. A :func:`clustersim.compare` table brings its own
  front (its ``pareto`` column, computed by the C++ comparison).
- :func:`plot_timeline`: the step's timeline as a Gantt chart, a row per rank class x stream.
- :func:`plot_topology`: the built cluster drawn in layers (GPUs at the bottom, then NVSwitches, NICs,
  leaves, spines, cores), every link a line, the report's busiest links coloured by utilization.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Union

from .report import Report

if TYPE_CHECKING:
    from .cluster import Cluster
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["plot_breakdown", "plot_scaling", "plot_link_heatmap", "plot_pareto", "pareto_front", "plot_timeline",
           "plot_topology", "TOPOLOGY_LAYERS",
           "BREAKDOWN_COLUMNS", "TIMELINE_COLOURS"]

# The rows of plot_topology, bottom to top, by device kind; other kinds go above them.
TOPOLOGY_LAYERS = ("gpu", "nvswitch", "pcie_switch", "host_bridge", "nic", "leaf_switch", "spine_switch", "core_switch")

# Slice colours of plot_timeline, by category.
TIMELINE_COLOURS = {"compute": "#4C72B0", "collective": "#DD8452", "p2p": "#55A868"}

# The breakdown columns of a sweep, bottom to top of a bar, with their legend labels and colours.
BREAKDOWN_COLUMNS = (
    ("compute_s", "compute", "#4C72B0"),
    ("exposed_communication_s", "exposed communication", "#DD8452"),
    ("pipeline_bubble_s", "pipeline bubble", "#8C8C8C"),
    ("host_wait_s", "waiting for the host", "#C44E52"),
)


def _axes(ax: Optional["Axes"]) -> "Axes":
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new_ax = plt.subplots()
    return new_ax


def _breakdown_frame(data: Union[Report, Sequence[Report], "pd.DataFrame"], labels: Optional[Sequence[str]]) -> "pd.DataFrame":
    import pandas as pd

    if isinstance(data, Report):
        data = [data]
    if isinstance(data, pd.DataFrame):
        df = data.reindex(columns=[c for c, _, _ in BREAKDOWN_COLUMNS]).copy()
        df.index = list(labels) if labels is not None else [str(i) for i in data.index]
        return df
    rows = []
    for report in data:
        b = report.breakdown["time_s"]
        rows.append({"compute_s": b["compute"], "exposed_communication_s": b["exposed_communication"],
                     "pipeline_bubble_s": b["pipeline_bubble"], "host_wait_s": b["host_wait"]})
    default = [f"{r.run.gpus} GPUs" for r in data]
    return pd.DataFrame(rows, index=list(labels) if labels is not None else default)


def plot_breakdown(
    data: Union[Report, Sequence[Report], "pd.DataFrame"],
    *,
    labels: Optional[Sequence[str]] = None,
    normalize: bool = False,
    ax: Optional["Axes"] = None,
) -> "Axes":
    """Stacked bars of the step time's breakdown, one bar per report or per sweep row.

    ``data``: a Report, a list of them, or a sweep DataFrame (rows with an error are drawn empty).
    ``labels``: the bars' labels (default: GPU count, or the DataFrame index). ``normalize``: fractions
    of the step instead of seconds.
    """
    ax = _axes(ax)
    df = _breakdown_frame(data, labels).fillna(0.0)
    if normalize:
        total = df.sum(axis=1).where(lambda s: s > 0, 1.0)
        df = df.div(total, axis=0)
    bottom = [0.0] * len(df)
    positions = list(range(len(df)))
    for column, label, colour in BREAKDOWN_COLUMNS:
        values = df[column].tolist()
        if column == "host_wait_s" and not any(values):
            continue  # drawn only when the host held some op back (training.host_op_us)
        ax.bar(positions, values, bottom=bottom, label=label, color=colour)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(positions)
    ax.set_xticklabels([str(i) for i in df.index], rotation=45 if len(df) > 6 else 0, ha="right" if len(df) > 6 else "center")
    ax.set_ylabel("fraction of step" if normalize else "step time (s)")
    ax.set_title("Where the step goes")
    ax.legend()
    return ax


def plot_scaling(
    df: "pd.DataFrame",
    *,
    x: str = "gpus",
    y: str = "tokens_per_s",
    by: Optional[str] = None,
    ideal: bool = True,
    log: bool = True,
    ax: Optional["Axes"] = None,
) -> "Axes":
    """A metric against scale: one line per value of ``by`` (or one line), from a sweep DataFrame.

    ``ideal`` draws the linear scaling of ``y`` with ``x`` from each line's smallest ``x`` (dashed).
    Rows with an error are left out.
    """
    ax = _axes(ax)
    ok = df[df["error"].isna()] if "error" in df.columns else df
    groups = [(None, ok)] if by is None else list(ok.groupby(by, sort=True))
    for key, group in groups:
        g = group.sort_values(x)
        label = y if key is None else f"{by}={key!s}"
        (line,) = ax.plot(g[x], g[y], marker="o", label=label)
        if ideal and len(g) > 1:
            x0, y0 = float(g[x].iloc[0]), float(g[y].iloc[0])
            ax.plot(g[x], [y0 * float(v) / x0 for v in g[x]], linestyle="--", color=line.get_color(), alpha=0.5,
                    label=f"ideal ({label})")
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"Scaling of {y}")
    ax.legend()
    return ax


def plot_link_heatmap(report: Report, *, ax: Optional["Axes"] = None, cmap: str = "viridis") -> "Axes":
    """Utilization of the report's busiest links as a matrix: rows are the sending devices, columns
    the receiving ones, colour the fraction of the step the link was busy."""
    import numpy as np

    ax = _axes(ax)
    links = report.links
    devices: List[str] = sorted(set(links["src"]) | set(links["dst"]))
    index = {d: i for i, d in enumerate(devices)}
    grid = np.full((len(devices), len(devices)), np.nan)
    for src, dst, u in zip(links["src"], links["dst"], links["utilization"]):
        grid[index[src], index[dst]] = u
    image = ax.imshow(grid, cmap=cmap, vmin=0.0, vmax=max(1e-9, float(np.nanmax(grid))) if len(devices) else 1.0)
    ax.set_xticks(range(len(devices)))
    ax.set_yticks(range(len(devices)))
    ax.set_xticklabels(devices, rotation=90, fontsize=7)
    ax.set_yticklabels(devices, fontsize=7)
    ax.set_xlabel("to")
    ax.set_ylabel("from")
    ax.set_title("Link utilization (busiest links)")
    ax.figure.colorbar(image, ax=ax, label="utilization")
    return ax


def pareto_front(df: "pd.DataFrame", x: str, y: str) -> "pd.DataFrame":
    """The rows not dominated in (``x``, ``y``), both minimized, sorted by ``x``. Rows with an error
    or a missing value are left out."""
    ok = df[df[x].notna() & df[y].notna()]
    if "error" in ok.columns:
        ok = ok[ok["error"].isna()]
    ordered = ok.sort_values([x, y])
    keep = []
    best_y = float("inf")
    for i, value in zip(ordered.index, ordered[y]):
        if value < best_y:
            keep.append(i)
            best_y = float(value)
    return ordered.loc[keep]


def plot_pareto(
    df: "pd.DataFrame",
    *,
    x: str,
    y: str = "step_time_s",
    label: Optional[str] = None,
    front: Optional[str] = None,
    ax: Optional["Axes"] = None,
) -> "Axes":
    """Every configuration as a point in (``x``, ``y``), both to minimize (e.g. x =
    ``usd_per_million_tokens`` or ``gpus``, y = ``step_time_s``), the Pareto front as a line.
    ``label``: a column whose value annotates the front's points. ``front``: a boolean column that
    marks the front (a :func:`clustersim.compare` table's ``pareto``, on train cost x train time); None:
    the front of (``x``, ``y``) is computed (:func:`pareto_front`)."""
    ax = _axes(ax)
    ok = df[df[x].notna() & df[y].notna()]
    ax.scatter(ok[x], ok[y], color="#BBBBBB", label="configurations" if front is None else "designs")
    on_front = pareto_front(df, x, y) if front is None else ok[ok[front].fillna(False).astype(bool)].sort_values(x)
    ax.plot(on_front[x], on_front[y], marker="o", color="#C44E52", label="Pareto front")
    if label is not None:
        named = ok if front is not None else on_front  # a comparison's designs are few: name them all
        for _, row in named.iterrows():
            ax.annotate(str(row[label]), (row[x], row[y]), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"{y} vs {x}")
    ax.legend()
    return ax


def plot_timeline(
    report: Report,
    *,
    start_s: Optional[float] = None,
    end_s: Optional[float] = None,
    max_rows: int = 32,
    ax: Optional["Axes"] = None,
) -> "Axes":
    """The step's timeline as a Gantt chart: a row per rank class x stream (compute, then the
    communication streams), a bar per op coloured by category (:data:`TIMELINE_COLOURS`).

    ``report`` must carry a timeline (``simulate(..., timeline=True)``). ``start_s``/``end_s``: a
    window of the step (seconds; default the whole step). ``max_rows``: at most this many rows (the
    first rank classes). Returns the axes; ``ax.get_yticklabels()`` name the rows.
    """
    ax = _axes(ax)
    df = report.timeline()
    if start_s is not None:
        df = df[df["end_s"] >= start_s]
    if end_s is not None:
        df = df[df["start_s"] <= end_s]
    classes = list(dict.fromkeys(df["rank_class"].astype(str)))  # in order of first start
    keys = sorted({(str(c), str(s)) for c, s in zip(df["rank_class"], df["stream"])},
                  key=lambda k: (classes.index(k[0]), k[1]))[:max_rows]
    row_of = {k: i for i, k in enumerate(keys)}
    seen = set()
    for (cls, stream, category), group in df.groupby(["rank_class", "stream", "category"], observed=True, sort=False):
        row = row_of.get((str(cls), str(stream)))
        if row is None:
            continue
        name = str(category)
        ax.broken_barh(list(zip(group["start_s"], group["duration_s"])), (row - 0.4, 0.8),
                       facecolors=TIMELINE_COLOURS.get(name, "#8C8C8C"), label=None if name in seen else name)
        seen.add(name)
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels([f"{c} | {s}" for c, s in keys], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(start_s if start_s is not None else 0.0, end_s if end_s is not None else report.step_time_s)
    ax.set_xlabel("time in the step (s)")
    ax.set_title("Timeline of one step")
    if seen:
        ax.legend(loc="upper right", fontsize=7)
    return ax


def plot_topology(
    cluster: "Cluster",
    report: Optional[Report] = None,
    *,
    ax: Optional["Axes"] = None,
    cmap: str = "inferno_r",
    max_devices: int = 5000,
) -> "Axes":
    """The cluster's devices in layers by kind (:data:`TOPOLOGY_LAYERS`: GPUs at the bottom, then
    NVSwitches, NICs, leaves, spines, cores), each layer ordered by node, and a line per link (both
    directions drawn once). With a ``report``, its busiest links (``report.links``) are coloured by
    utilization, the larger of the two directions, on a colour bar; the other links are light grey.
    Devices without links (NVSwitch chips, counted for power and cost only) are not drawn. Refuses
    clusters of more than ``max_devices`` devices (a drawing of them would be a grey block)."""
    import json

    import matplotlib.colors as mcolors
    import numpy as np
    from matplotlib.collections import LineCollection

    ax = _axes(ax)
    topo = json.loads(cluster.export("json"))
    devices = topo["devices"]
    if len(devices) > max_devices:
        raise ValueError(f"{len(devices)} devices: more than max_devices={max_devices}; draw a smaller cluster")
    linked = {l["src"] for l in topo["links"]} | {l["dst"] for l in topo["links"]}
    kinds = [k for k in TOPOLOGY_LAYERS if any(d["kind"] == k and d["id"] in linked for d in devices)]
    kinds += sorted({d["kind"] for d in devices if d["id"] in linked} - set(kinds))
    position = {}
    for row, kind in enumerate(kinds):
        layer = sorted((d for d in devices if d["kind"] == kind and d["id"] in linked),
                       key=lambda d: (d.get("node", -1), d.get("local_index", 0), d["id"]))
        for i, d in enumerate(layer):
            position[d["id"]] = ((i + 0.5) / len(layer), float(row))
    name = {d["id"]: d["name"] for d in devices}
    used = {}
    if report is not None:
        for src, dst, u in zip(report.links["src"], report.links["dst"], report.links["utilization"]):
            key = tuple(sorted((src, dst)))
            used[key] = max(used.get(key, 0.0), float(u))
    pairs = {}
    for l in topo["links"]:
        key = tuple(sorted((name[l["src"]], name[l["dst"]])))
        pairs.setdefault(key, (l["src"], l["dst"]))
    grey, hot, values = [], [], []
    for key, (a, b) in sorted(pairs.items()):
        segment = [position[a], position[b]]
        if key in used:
            hot.append(segment)
            values.append(used[key])
        else:
            grey.append(segment)
    ax.add_collection(LineCollection(grey, colors="#d0d0d0", linewidths=0.4, zorder=1, label="links"))
    if hot:
        norm = mcolors.Normalize(vmin=0.0, vmax=max(1e-9, max(values)))
        lines = LineCollection(hot, cmap=cmap, norm=norm, linewidths=2.0, zorder=2, label="busiest links")
        lines.set_array(np.asarray(values))
        ax.add_collection(lines)
        ax.figure.colorbar(lines, ax=ax, label="utilization (busier direction)")
    xs = [p[0] for p in position.values()]
    ys = [p[1] for p in position.values()]
    ax.scatter(xs, ys, s=8, c="#333333", zorder=3)
    ax.set_yticks(range(len(kinds)))
    ax.set_yticklabels(kinds)
    ax.set_xticks([])
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(-0.5, len(kinds) - 0.5)
    ax.set_title(f"{topo['spec'].get('name', 'cluster')}: {len(position)} devices, {len(pairs)} links")
    return ax
