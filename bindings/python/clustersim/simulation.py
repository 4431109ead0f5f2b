"""simulate(): one training step of a workload on a cluster, in a child process.

SimGrid's engine cannot be restarted within a process, so the C++ core forks a child for every
simulation and reads the report back through a pipe. A simulation that fails or crashes raises
:class:`~clustersim.SpecError` or :class:`~clustersim.SimulationError` here; the interpreter (a
Jupyter kernel, a sweep driver) lives on. The GIL is released while the child runs.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _core
from ._spec import override_text
from .cluster import Cluster
from .report import Report
from .workload import Workload

__all__ = ["simulate", "fidelities", "collective_algorithms", "split_overrides", "resolve_key", "core_options", "Algorithm", "ClusterLike", "WorkloadLike"]

ClusterLike = Union[Cluster, str, "os.PathLike[str]", Mapping[str, Any]]
WorkloadLike = Union[Workload, str, "os.PathLike[str]", Mapping[str, Any]]
Overrides = List[Tuple[str, str]]


def fidelities() -> List[str]:
    """The network models a simulation can use (``fidelity=``)."""
    return list(_core.fidelities())


def collective_algorithms() -> List[str]:
    """The collective algorithms a simulation can use (``algorithm=``)."""
    return list(_core.collective_algorithms())


def split_overrides(overrides: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Splits dotted-path overrides between the cluster and the workload, as the CLI's ``--set`` does.

    A key is ``cluster.<path>``, ``workload.<path>``, or a path whose first key belongs to one spec
    only (``nodes``, ``fabric.…`` → cluster; ``training.…``, ``parallelism.…`` → workload). Returns
    ``(cluster_overrides, workload_overrides)`` keyed by the path inside each spec. Raises SpecError
    for a key that belongs to neither.
    """
    cluster: Dict[str, Any] = {}
    workload: Dict[str, Any] = {}
    for key, value in overrides.items():
        spec, path = resolve_key(key, value)
        (cluster if spec == "cluster" else workload)[path] = value
    return cluster, workload


def resolve_key(key: str, value: Any = 0) -> Tuple[str, str]:
    """``("cluster" | "workload", path inside that spec)`` for a dotted override key (see
    :func:`split_overrides`); ``value`` only appears in the error message."""
    cluster_part, workload_part = _core.split_overrides([f"{key}={override_text(value)}"])
    if cluster_part:
        return "cluster", str(cluster_part[0][0])
    return "workload", str(workload_part[0][0])


Algorithm = Union[str, Mapping[str, str], None]


def core_options(fidelity: Optional[str], algorithm: Algorithm, network_profile: Optional[str]) -> "CoreOptions":
    """The options as the C++ core takes them: a keyword dictionary of the values given (None: the
    core's default; ``algorithm`` a name, or ``{group: name}`` with ``"*"`` for every other group)."""
    options = {"fidelity": fidelity, "algorithm": algorithm, "network_profile": network_profile}
    return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in options.items() if v is not None}


CoreOptions = Dict[str, Any]


def _run(cluster: Tuple[str, str], workload: Tuple[str, str], options: CoreOptions, timeline_path: str = "",
         timeline_classes: Optional[int] = None) -> str:
    """One simulation by the C++ core (in a child process): the report's JSON text. A ``timeline_path``:
    the step's Chrome trace is written there."""
    extra = {"timeline_path": timeline_path or None, "timeline_classes": timeline_classes}
    return _core.simulate(cluster[0], cluster[1], workload[0], workload[1],
                          {**options, **{k: v for k, v in extra.items() if v is not None}})


def _run_with_timeline(cluster: Tuple[str, str], workload: Tuple[str, str], options: CoreOptions,
                       timeline: Union[bool, str, "os.PathLike[str]"],
                       timeline_classes: Optional[int]) -> Tuple[str, str]:
    """One simulation that records its timeline: (report JSON, trace text). ``timeline`` True: the trace
    goes through a temporary file; a path: it is written there and kept."""
    if timeline is True:
        with tempfile.TemporaryDirectory(prefix="clustersim-") as folder:
            path = os.path.join(folder, "timeline.json")
            text = _run(cluster, workload, options, path, timeline_classes)
            with open(path, encoding="utf-8") as f:
                return text, f.read()
    path = os.fspath(timeline)  # type: ignore[arg-type]
    text = _run(cluster, workload, options, path, timeline_classes)
    with open(path, encoding="utf-8") as f:
        return text, f.read()


def simulate(
    cluster: ClusterLike,
    workload: WorkloadLike,
    *,
    fidelity: Optional[str] = None,
    algorithm: Algorithm = None,
    network_profile: Optional[str] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    timeline: Union[bool, str, "os.PathLike[str]"] = False,
    timeline_classes: Optional[int] = None,
    train_tokens: Union[None, int, float, str] = None,
    checkpoint_interval_s: Optional[float] = None,
    runs: Optional[int] = None,
    seed: Optional[int] = None,
    trace_host: Optional[str] = None,
    exhaustive: bool = False,
    adaptive_classes: bool = True,
) -> Report:
    """Simulates one training step of ``workload`` on ``cluster`` and returns its :class:`Report`.

    ``cluster`` and ``workload`` are spec objects, file paths, preset names or dictionaries.
    ``fidelity``: a network model of :func:`fidelities` (None: the core's default, ``flow``, SimGrid's
    max-min flows; ``analytical``, where built: fast, for sweeps). ``algorithm``: a collective algorithm of
    :func:`collective_algorithms` for every process group, or ``{"dp": "ring", "*": "tree"}`` per
    group (None: the core's default). ``network_profile``: link efficiencies and latencies, as the
    CLI's ``--network-profile`` (None: the core's default).
    ``overrides`` maps dotted paths to values, resolved like the CLI's ``--set``
    (``{"nodes": 64, "fabric.oversubscription": 2, "training.micro_batch": 4}``).
    ``timeline``: True records the step's timeline with the report (:meth:`Report.timeline`, a
    DataFrame; :func:`clustersim.plots.plot_timeline`); a file path also writes it there as a Chrome /
    Perfetto trace (the CLI's ``--timeline``). ``timeline_classes``: how many rank classes (pipeline
    stages, evenly spaced) it records (None: the core's default, 64).
    ``train_tokens`` (a number, or ``"15T"`` as the CLI's ``--train-tokens``): also the time to train
    that many tokens, with failures, checkpoints and restarts (:attr:`Report.time_to_train`;
    docs/time_to_train.md); ``checkpoint_interval_s`` (None: Young/Daly), ``runs`` (Monte Carlo runs)
    and ``seed`` go with it (None: the core's defaults).
    ``trace_host``: ``"measured"`` replays a PyTorch trace workload with its host, no op starting before
    its rank's CPU launched it in the trace (the CLI's ``--trace-host``; docs/traces.md, "A host-bound
    world"); None or ``"none"``: the GPU alone.
    ``exhaustive``: simulate every transfer, not one per class of identical transfers (the CLI's
    ``--exhaustive``; docs/performance.md): the same answer, slower on large clusters.
    ``adaptive_classes``: at analytical fidelity under adaptive routing too, one simulated transfer per
    class of identical transfers, checked at every launch (exact: where a check fails every transfer is
    replayed; docs/performance.md); False: adaptive routing replays every transfer.

    Raises :class:`~clustersim.SpecError` for bad input (file, JSON path, what was expected) and
    :class:`~clustersim.SimulationError` when the simulation cannot finish.
    """
    c = Cluster.coerce(cluster)
    w = Workload.coerce(workload)
    if overrides:
        cluster_overrides, workload_overrides = split_overrides(overrides)
        if cluster_overrides:
            c = c.updated(cluster_overrides)
        if workload_overrides:
            w = w.updated(workload_overrides)
    options = core_options(fidelity, algorithm, network_profile)
    if trace_host is not None:
        options["trace_host"] = trace_host  # the core checks it
    if exhaustive:
        options["exhaustive"] = True
    if not adaptive_classes:
        options["adaptive_classes"] = False
    training_run = {"train_tokens": train_tokens, "checkpoint_interval_s": checkpoint_interval_s, "runs": runs,
                    "seed": seed}
    options.update({k: v for k, v in training_run.items() if v is not None})  # the core checks them
    if timeline is False or timeline is None:
        return Report(json.loads(_run(c._as_core(), w._as_core(), options)))
    classes = None if timeline_classes is None else int(timeline_classes)  # the core checks it (SpecError)
    text, trace = _run_with_timeline(c._as_core(), w._as_core(), options, timeline, classes)
    return Report(json.loads(text), trace)
