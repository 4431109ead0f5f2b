"""compare(): one workload on several cluster designs, one table (``clustersim compare``).

Each design is simulated (in its own child process, several at a time); the training-run figures
(time, cost and energy to train a number of tokens) and the Pareto marks come from the C++ comparison
(sim/cost/design_comparison.hpp), the same code as the command's table. A design is Pareto-optimal
when no other design is at least as fast and as cheap to train and better in one; designs whose model
does not fit in GPU memory cannot train, so the front is taken among the designs that fit (or among
all when none does: ``df.attrs["pareto_among"]`` says which).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _core
from .cluster import Cluster
from .errors import SimulationError, SpecError
from .report import Report
from .simulation import Algorithm, ClusterLike, WorkloadLike, _run, core_options, split_overrides
from .workload import Workload

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare", "COMPARE_COLUMNS"]

# The columns of compare(), in order: those of the command's table (JSON keys) and `error`.
COMPARE_COLUMNS: Tuple[str, ...] = (
    "design",
    "gpus",
    "step_time_s",
    "tokens_per_s",
    "mfu",
    "fits",
    "cluster_avg_kw",
    "energy_per_token_j",
    "capex_usd",
    "usd_per_million_tokens",
    "train_time_s",
    "train_cost_usd",
    "train_energy_kwh",
    "step_time_interval_s",
    "train_time_interval_s",
    "within_error_of",
    "goodput",
    "train_days_p10",
    "train_days_p50",
    "train_days_p90",
    "run_time_s",
    "run_cost_usd",
    "pareto",
    "error",
)


def _design_names(clusters: Sequence[Cluster], given: Sequence[Any]) -> List[str]:
    """The cluster's name (or what was given, when it has none); the core numbers repeated ones."""
    return [cluster.name or str(source) for cluster, source in zip(clusters, given)]


def compare(
    workload: WorkloadLike,
    clusters: Sequence[ClusterLike],
    *,
    tokens: float = 1e12,
    fidelity: Optional[str] = None,
    algorithm: Algorithm = None,
    network_profile: Optional[str] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    n_jobs: int = -1,
    html: Optional[Any] = None,
    gpus: Optional[int] = None,
    budget_usd: Optional[float] = None,
) -> "pd.DataFrame":
    """Compares cluster designs for one workload: one row per design, in the order given.

    ``clusters``: Cluster objects, preset names, files or dicts. ``tokens``: the length of the training
    run (a float: 2e12). ``fidelity``, ``algorithm``, ``network_profile``, ``overrides``: as
    :func:`clustersim.simulate` (``overrides`` apply to every design, like the command's ``--set``).
    ``n_jobs``: simulations at once (-1: one per CPU). ``gpus``: size every design to this many GPUs by
    its own rules and leave the workload's data-parallel size to it (``clustersim compare --gpus``); a
    design that cannot reach it is a row with the reason. ``budget_usd``: instead, each design at the
    most GPUs its capital cost stays within (``clustersim compare --budget-usd``).

    Columns (:data:`COMPARE_COLUMNS`, those of ``clustersim compare``): ``design``, ``gpus``,
    ``step_time_s``, ``tokens_per_s``, ``mfu``, ``fits``, ``cluster_avg_kw`` (facility, PUE
    included), ``energy_per_token_j``, ``capex_usd``, ``usd_per_million_tokens``, ``train_time_s``,
    ``train_cost_usd``, ``train_energy_kwh`` (the whole run), ``step_time_interval_s`` and
    ``train_time_interval_s`` ((lo, hi) where the measured time is expected, from the validation errors
    of the nearest runs), ``within_error_of`` (the designs whose training-time intervals overlap this
    one's: which is faster is within the model's error), ``goodput``, ``train_days_p10`` / ``_p50`` /
    ``_p90``, ``run_time_s`` and ``run_cost_usd`` (the same run with failures, checkpoints and restarts:
    the report's time_to_train, docs/time_to_train.md; these rank the designs), ``pareto`` (bool) and
    ``error`` (None, or why
    the simulation failed). ``df.attrs``: ``workload``, ``tokens``, ``pareto_among``, ``text`` (the
    command's table), ``reports`` (design -> :class:`~clustersim.Report`) and ``html`` (the purchase
    report: one self-contained HTML page, ``clustersim compare --html``'s); ``html=PATH`` also writes it.

    Every spec is validated before any simulation runs: bad input raises SpecError; a simulation that
    fails is a row with its ``error``, as in the command.
    """
    import pandas as pd

    from .sweep import _worker_count

    w = Workload.coerce(workload)
    if isinstance(clusters, (str, Cluster)) or isinstance(clusters, Mapping):
        raise TypeError("clusters must be a sequence of clusters (Cluster objects, preset names, files, dicts)")
    if len(clusters) == 0:
        raise ValueError("give at least one cluster")
    specs = [Cluster.coerce(c) for c in clusters]
    if overrides:
        cluster_overrides, workload_overrides = split_overrides(overrides)
        if cluster_overrides:
            specs = [c.updated(cluster_overrides) for c in specs]
        if workload_overrides:
            w = w.updated(workload_overrides)
    tokens = float(tokens)
    if not tokens > 0:
        raise ValueError(f"tokens must be a positive number of tokens, got {tokens!r}")
    names = _design_names(specs, clusters)
    options = core_options(fidelity, algorithm, network_profile)
    options["train_tokens"] = tokens  # each design's run with failures ranks it, as in the command
    sizing_errors = [""] * len(specs)
    if gpus is not None and budget_usd is not None:
        raise ValueError("give gpus or budget_usd, not both")
    if gpus is not None or budget_usd is not None:
        # Each design sized as the command's --gpus / --budget-usd size it (sim/api/design_sizing).
        w = Workload._from_loaded(_core.workload_at_any_size(*w._as_core()))
        if budget_usd is not None:
            budget = float(budget_usd)
            if not budget > 0:
                raise ValueError(f"budget_usd must be a capital budget in US dollars > 0, got {budget_usd!r}")
            sized_to = f"a budget of {budget:g} USD"
            size = lambda spec: _core.size_cluster_to_budget(*spec._as_core(), *w._as_core(), budget)  # noqa: E731
        else:
            sized_to = f"{int(gpus)} GPUs"
            size = lambda spec: _core.size_cluster(*spec._as_core(), int(gpus))  # noqa: E731
        for i, spec in enumerate(specs):
            text, file, _changes, error = size(spec)
            if error:
                sizing_errors[i] = f"cannot be sized to {sized_to}: {error}"
            else:
                specs[i] = Cluster._from_loaded((text, file))

    def run(i: int) -> Tuple[str, str]:
        if sizing_errors[i]:
            return "", sizing_errors[i]
        try:
            return _run(specs[i]._as_core(), w._as_core(), options), ""
        except SimulationError as e:
            return "", str(e)
        except SpecError as e:
            if gpus is None and budget_usd is None:
                raise
            return "", f"cannot run at {specs[i].gpu_count} GPUs: {e}"

    workers = min(_worker_count(n_jobs), len(specs))
    with cf.ThreadPoolExecutor(workers) as pool:  # each thread waits on its simulation's child process
        results = list(pool.map(run, range(len(specs))))
    text_json, text, page = _core.compare(w.name, tokens, [(n, r, e) for n, (r, e) in zip(names, results)])
    comparison = json.loads(text_json)

    rows = []
    reports: Dict[str, Report] = {}
    for design in comparison["designs"]:
        report = design.pop("report", None)
        if report is not None:
            reports[design["design"]] = Report(report)
        for key in ("step_time_interval_s", "train_time_interval_s"):
            if design.get(key) is not None:
                design[key] = tuple(design[key])
        rows.append({"error": None, **design})
    df = pd.DataFrame(rows, columns=list(COMPARE_COLUMNS))
    df["fits"] = df["fits"].astype("boolean")
    df["pareto"] = df["pareto"].fillna(False).astype(bool)
    df["gpus"] = df["gpus"].astype("Int64")
    df.attrs.update({"workload": comparison["workload"], "tokens": comparison["tokens"],
                     "pareto_among": comparison["pareto_among"], "text": text, "reports": reports, "html": page})
    if html is not None:
        _core.write_output_file(os.fspath(html), page, "HTML report")
    return df

