"""serve(): inference serving, request by request (``clustersim serve``; docs/serving.md).

The serving spec (a preset such as ``llama3-8b-h100``, or a file) gives the model, the replicas and
their layout, the batching policy, the SLO and the traffic; the cluster gives the GPU, its links, power
and prices. The C++ core generates the requests, runs every replica's scheduler with iteration times
from the calibrated kernel model, and returns the report and its tables: one row per request, per
iteration, and the cluster's state sampled over time.

::

    import clustersim as cs
    r = cs.serve("dgx-h100", "llama3-8b-h100", overrides={"traffic.rate_rps": 30})
    r.summary["latency"]["ttft_s"]["p90"], r.requests.ttft_s.describe(), r.samples.plot(x="time_s")
    r.intervals[["predicted", "lo", "hi"]]   # the error bars per metric
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _core
from ._spec import override_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["serve", "find_max_rate", "search_layouts", "compare_serving", "LayoutSearch", "MaxRate", "Serving", "serving_presets", "serving_schedulers", "serving_schema"]

PathLike = Union[str, "os.PathLike[str]"]


def serving_presets() -> List[str]:
    """The built-in serving specs (``sim/serving/presets``)."""
    return list(_core.serving_presets())


def serving_schedulers() -> List[str]:
    """The batching policies ``scheduler.name`` accepts."""
    return list(_core.serving_schedulers())


def serving_schema() -> List[Dict[str, Any]]:
    """The serving spec's keys (path, type, range, default, unit, meaning), as the core declares them."""
    return json.loads(_core.serving_schema())


@dataclass(frozen=True)
class Serving:
    """A serving run: ``summary`` is the report (the stable keys of ``clustersim serve --json``),
    ``text`` the command's summary; ``requests`` (one row per request: arrival, tokens, status, TTFT,
    time between tokens, end-to-end latency, preemptions), ``iterations`` (one row per iteration, when
    recorded), ``samples`` (running, queued, KV blocks used over time) and ``intervals`` (the error bars,
    one row per metric) are DataFrames."""

    summary: Dict[str, Any]
    text: str
    _requests: Dict[str, list]
    _iterations: Dict[str, list]

    @property
    def requests(self) -> "pd.DataFrame":
        import pandas as pd

        return pd.DataFrame(self._requests)

    @property
    def iterations(self) -> "pd.DataFrame":
        import pandas as pd

        return pd.DataFrame(self._iterations)

    @property
    def samples(self) -> "pd.DataFrame":
        import pandas as pd

        return pd.DataFrame(self.summary["samples"])

    @property
    def intervals(self) -> "pd.DataFrame":
        """The error bars (``summary["intervals"]``, docs/serving.md): one row per metric with validation
        residuals (index ``metric``), the report's keys as columns, ``interval`` split into ``lo`` and
        ``hi`` (where the measured value is expected, 5th..95th percentile) and ``basis`` flattened
        (``basis.rows``, ``basis.mean_distance``, ``basis.widening``, ``basis.error_p50``...)."""
        import pandas as pd

        rows = []
        for metric, entry in self.summary["intervals"].items():
            row = {k: v for k, v in entry.items() if k != "interval"}
            row["lo"], row["hi"] = entry["interval"]
            rows.append(row)
        df = pd.json_normalize(rows, max_level=1)
        df.index = pd.Index(list(self.summary["intervals"]), name="metric")
        return df

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True)
class MaxRate:
    """The capacity search's result: ``max_rate_rps`` (a lower bound when ``upper_bound_reached``),
    ``probes`` (one row per simulated rate: rate_rps, ttft_p90_s, tbt_p99_s, slo_attainment, meets) and
    ``summary``, the report of the run at the maximum."""

    max_rate_rps: float
    upper_bound_reached: bool
    probes: "pd.DataFrame"
    summary: Dict[str, Any]


def find_max_rate(cluster: PathLike, serving: PathLike, *, overrides: Optional[Mapping[str, Any]] = None) -> MaxRate:
    """The highest arrival rate of the serving spec's traffic (same seed and duration) at which the TTFT
    p90 is at most ``slo.ttft_s`` and the p99 of the gaps between tokens at most ``slo.tbt_s``
    (``clustersim serve --find-max-rate``; docs/serving.md)."""
    import pandas as pd

    options = {"cluster": os.fspath(cluster), "serving": os.fspath(serving),
               "set": [f"{k}={override_text(v)}" for k, v in (overrides or {}).items()]}
    out = json.loads(_core.find_max_rate(options))
    return MaxRate(out["max_rate_rps"], out["upper_bound_reached"], pd.DataFrame(out["probes"]), out["report"])


@dataclass(frozen=True)
class LayoutSearch:
    """The layout search's result (``clustersim serve --search-layouts``; docs/serving.md): ``table``, one
    row per design and tp x pp layout (replicas, gpus, status, ttft_p90_s, tbt_p99_s, usd_per_hour,
    usd_per_million_output_tokens, cheapest, on_frontier...), ``cheapest`` (its row, or None when no
    layout meets the SLO), the target rate and the SLO, and ``text``, the command's table."""

    target_rate_rps: float
    ttft_p90_max_s: float
    tbt_p99_max_s: float
    table: "pd.DataFrame"
    text: str

    @property
    def cheapest(self) -> Optional["pd.Series"]:
        rows = self.table[self.table["cheapest"]]
        return None if rows.empty else rows.iloc[0]

    @property
    def frontier(self) -> "pd.DataFrame":
        """The layouts meeting the SLO that no other is both cheaper and faster than, by $ per hour."""
        return self.table[self.table["on_frontier"]].sort_values("usd_per_hour")

    def plot(self, ax=None):
        """$ per hour against TTFT p90 of every layout meeting the SLO, the frontier joined, the
        cheapest marked; returns the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        meets = self.table[self.table["status"] == "meets"]
        for design, rows in meets.groupby("design", sort=False):
            ax.scatter(rows["ttft_p90_s"], rows["usd_per_hour"], label=design)
            for _, r in rows.iterrows():
                ax.annotate(f"tp{r.tp} pp{r.pp} x{r.replicas}", (r.ttft_p90_s, r.usd_per_hour), fontsize=7,
                            xytext=(3, 3), textcoords="offset points")
        front = self.frontier.sort_values("ttft_p90_s")
        ax.plot(front["ttft_p90_s"], front["usd_per_hour"], "k--", linewidth=1, label="frontier")
        best = self.cheapest
        if best is not None:
            ax.scatter([best.ttft_p90_s], [best.usd_per_hour], s=160, facecolors="none", edgecolors="red",
                       label="cheapest")
        ax.axvline(self.ttft_p90_max_s, color="grey", linewidth=0.8, linestyle=":")
        ax.set_xlabel("TTFT p90 (s)")
        ax.set_ylabel("deployment cost ($ per hour)")
        ax.set_title(f"layouts meeting the SLO at {self.target_rate_rps:g} requests/s")
        ax.legend(fontsize=7)
        return ax

    def __repr__(self) -> str:
        return self.text


def search_layouts(
    clusters: Union[PathLike, Sequence[PathLike]],
    serving: PathLike,
    *,
    target_rate_rps: Optional[float] = None,
    tp: Sequence[int] = (1, 2, 4, 8),
    pp: Sequence[int] = (1,),
    overrides: Optional[Mapping[str, Any]] = None,
) -> LayoutSearch:
    """For each cluster design and each tp x pp layout, the fewest replicas whose run of the serving
    spec's traffic at ``target_rate_rps`` (default: ``traffic.rate_rps``) meets its SLO, what each
    deployment costs per hour, the cheapest and the cost-latency frontier
    (``clustersim serve --search-layouts``). Raises SpecError for bad input as the command does."""
    import pandas as pd

    if isinstance(clusters, (str, os.PathLike)):
        clusters = [clusters]
    options = {"clusters": [os.fspath(c) for c in clusters], "serving": os.fspath(serving),
               "set": [f"{k}={override_text(v)}" for k, v in (overrides or {}).items()],
               "target_rate_rps": target_rate_rps, "tp": [int(v) for v in tp], "pp": [int(v) for v in pp]}
    text_json, text = _core.search_layouts(options)
    out = json.loads(text_json)
    return LayoutSearch(out["target_rate_rps"], out["slo"]["ttft_p90_max_s"], out["slo"]["tbt_p99_max_s"],
                        pd.DataFrame(out["layouts"]), text)


def compare_serving(
    serving: PathLike,
    clusters: Sequence[PathLike],
    *,
    overrides: Optional[Mapping[str, Any]] = None,
) -> "pd.DataFrame":
    """One serving deployment on several cluster designs (``clustersim compare --serving``;
    docs/serving.md): one row per design, in the order given, with the run of the spec's traffic
    (``ttft_p90_s``, ``tbt_p99_s``, ``throughput_rps``, ``usd_per_hour``,
    ``usd_per_million_output_tokens``...), the highest rate meeting the SLO (``max_rate_rps``) with
    ``usd_per_million_output_tokens_at_max``, ``pareto``, and ``error`` where the deployment cannot run
    on the design. ``df.attrs["text"]`` is the command's table."""
    import pandas as pd

    options = {"clusters": [os.fspath(c) for c in clusters], "serving": os.fspath(serving),
               "set": [f"{k}={override_text(v)}" for k, v in (overrides or {}).items()]}
    text_json, text = _core.compare_serving(options)
    rows = [{k: v for k, v in d.items() if k != "report"} for d in json.loads(text_json)["designs"]]
    df = pd.DataFrame(rows)
    if "error" not in df:
        df["error"] = ""
    df["error"] = df["error"].fillna("")
    df.attrs["text"] = text
    return df


def serve(
    cluster: PathLike,
    serving: PathLike,
    *,
    overrides: Optional[Mapping[str, Any]] = None,
    timeline: Optional[PathLike] = None,
    timeline_requests: Optional[int] = None,
    sample_interval_s: Optional[float] = None,
    iterations: int = 1 << 20,
) -> Serving:
    """Serves the traffic of ``serving`` (a spec file or preset name) on ``cluster`` (a cluster spec file
    or preset name). ``overrides``: dotted paths as ``--set`` takes them (``traffic.rate_rps``,
    ``replica.replicas``, ``cluster.nodes``...). ``timeline``: write the requests as a Perfetto trace
    there. ``iterations``: keep a row for each of the first N iterations (default 1,048,576, about 100 MB
    as a DataFrame; an hour of traffic on 64 replicas has tens of millions; 0: none;
    ``summary["requests"]["iterations"]`` counts them all).
    Raises SpecError for bad input (file and JSON path) as the command does."""
    options: Dict[str, Any] = {
        "cluster": os.fspath(cluster),
        "serving": os.fspath(serving),
        "set": [f"{k}={override_text(v)}" for k, v in (overrides or {}).items()],
        "timeline_path": os.fspath(timeline) if timeline is not None else None,
        "timeline_requests": timeline_requests,
        "sample_interval_s": sample_interval_s,
        "iteration_records": int(iterations),
    }
    out = _core.serve(options)
    return Serving(json.loads(out["report"]), out["text"], out["requests"], out["iterations"])
