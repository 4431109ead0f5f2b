"""Sweeps: many simulations, one DataFrame row each.

:func:`sweep` runs the cartesian product of a grid of spec values (keys are dotted spec paths, as the
CLI's ``--set``) and returns one row per configuration: its parameters, the key report fields and an
``error`` column. A configuration that is invalid (a value out of range, a layout the GPU count does
not allow, a feature not simulated yet) is a row whose ``error`` names the file and the JSON path; a
configuration that does not fit in memory is a row with ``fits`` False. Neither raises.

Simulations run in parallel: by default on ``n_jobs`` threads, each waiting on the child process the
C++ core forks for its simulation (the GIL is released meanwhile), or on any
``concurrent.futures.Executor`` (a process pool, a Dask ``distributed.Client``: a cluster of machines).

:func:`best` searches the parallel configurations valid for the cluster's GPU count (tensor and
pipeline parallel degrees, data parallelism by derivation, micro-batch, recompute) for the one that
optimizes an objective (fastest step by default, or cheapest) and fits in memory.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import itertools
import json
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._spec import override_text
from .cluster import Cluster
from .errors import SimulationError, SpecError
from .simulation import Algorithm, ClusterLike, WorkloadLike, _run, core_options, resolve_key
from .workload import Workload

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["sweep", "best", "Best", "expand_grid", "parallel_configurations", "RESULT_COLUMNS"]

Grid = Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]

# Report fields of every row, in this order (then the power and cost fields once those are modelled).
RESULT_COLUMNS: Tuple[str, ...] = (
    "step_time_s",
    "tokens_per_s",
    "tflops_per_gpu",
    "mfu",
    "compute_s",
    "exposed_communication_s",
    "pipeline_bubble_s",
    "host_wait_s",
    "peak_bytes_per_gpu",
    "capacity_bytes",
    "fits",
    "gpus",
    "tp",
    "pp",
    "dp",
    "micro_batches",
)
_INTEGER_COLUMNS: Tuple[str, ...] = ("gpus", "tp", "pp", "dp", "micro_batches")
_OPTIONAL_COLUMNS: Tuple[Tuple[str, str], ...] = (
    ("power", "gpu_avg_w"),
    ("power", "cluster_avg_kw"),
    ("power", "energy_per_step_j"),
    ("power", "energy_per_token_j"),
    ("power", "peak_kw"),
    ("cost", "capex_usd"),
    ("cost", "usd_per_hour"),
    ("cost", "usd_per_step"),
    ("cost", "usd_per_million_tokens"),
)
# The run with failures, checkpoints and restarts (train_tokens=...): report time_to_train key -> column.
_TIME_TO_TRAIN_COLUMNS: Tuple[Tuple[str, str], ...] = (
    ("days_mean", "time_to_train_days"),
    ("days_p90", "time_to_train_days_p90"),
    ("goodput", "goodput"),
    ("cost_usd", "time_to_train_usd"),
    ("checkpoint_interval_s", "checkpoint_interval_s"),
)
# Grid keys that are options of the run, not spec paths: each configuration's value goes to the core.
_RUN_OPTION_KEYS: Tuple[str, ...] = ("checkpoint_interval_s",)

# One configuration for a worker: plain strings and lists, cheap to pickle for process pools and Dask.
#   (cluster JSON, cluster file, workload JSON, workload file,
#    cluster overrides, workload overrides, the core's keyword options (simulation.core_options))
_Task = Tuple[str, str, str, str, List[Tuple[str, str]], List[Tuple[str, str]], Dict[str, Any]]


def expand_grid(grid: Grid) -> List[Dict[str, Any]]:
    """The configurations of a grid: the cartesian product of a ``{key: values}`` mapping (a scalar
    value is a single choice), or a sequence of ``{key: value}`` mappings taken as they are."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        choices = [_as_choices(grid[k]) for k in keys]
        return [dict(zip(keys, combo)) for combo in itertools.product(*choices)]
    return [dict(config) for config in grid]


def _as_choices(values: Any) -> List[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        return [values]
    return list(values)


def _row_from_report(report: Mapping[str, Any]) -> Dict[str, Any]:
    """The sweep columns of one report (its JSON form)."""
    breakdown = report.get("breakdown") or {}
    memory = report.get("memory") or {}
    run = report.get("run") or {}
    layout = run.get("parallelism") or {}
    row: Dict[str, Any] = {
        "step_time_s": report.get("step_time_s"),
        "tokens_per_s": report.get("tokens_per_s"),
        "tflops_per_gpu": report.get("tflops_per_gpu"),
        "mfu": report.get("mfu"),
        "compute_s": breakdown.get("compute_s"),
        "exposed_communication_s": breakdown.get("exposed_communication_s"),
        "pipeline_bubble_s": breakdown.get("pipeline_bubble_s"),
        "host_wait_s": breakdown.get("host_wait_s", 0.0),
        "peak_bytes_per_gpu": memory.get("peak_bytes_per_gpu"),
        "capacity_bytes": memory.get("capacity_bytes"),
        "fits": memory.get("fits"),
        "gpus": run.get("gpus"),
        "tp": layout.get("tp"),
        "pp": layout.get("pp"),
        "dp": layout.get("dp"),
        "micro_batches": run.get("micro_batches"),
    }
    for section, key in _OPTIONAL_COLUMNS:
        value = (report.get(section) or {}).get(key)
        if value is not None:
            row[key] = value
    ttt = report.get("time_to_train")
    if ttt:
        for key, column in _TIME_TO_TRAIN_COLUMNS:
            row[column] = ttt.get(key)
    return row


def _run_task(task: _Task) -> Dict[str, Any]:
    """Simulates one configuration; bad input and failed simulations become an ``error`` entry."""
    cluster_json, cluster_file, workload_json, workload_file, c_over, w_over, options = task
    try:
        cluster = _core.parse_cluster(cluster_json, cluster_file, c_over)
        workload = _core.parse_workload(workload_json, workload_file, w_over)
        text = _run(cluster, workload, options)
    except (SpecError, SimulationError) as e:
        return {"error": str(e)}
    return {**_row_from_report(json.loads(text)), "error": None}


def _worker_count(n_jobs: int) -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0 (-1: one per CPU; 1: in this thread)")
    return max(1, cpus + 1 + n_jobs if n_jobs < 0 else n_jobs)


def _as_executor(executor: Any) -> cf.Executor:
    """A concurrent.futures executor; a Dask ``Client`` gives its own via ``get_executor()``."""
    if isinstance(executor, cf.Executor):
        return executor
    if hasattr(executor, "get_executor"):
        return executor.get_executor()  # type: ignore[no-any-return]
    raise TypeError(f"executor must be a concurrent.futures.Executor or a Dask Client, got {type(executor).__name__}")


def _progress_bar(total: int, enabled: bool) -> Any:
    try:  # a widget in Jupyter when ipywidgets is there, text on stderr otherwise
        import ipywidgets  # noqa: F401  # pyflakes: ignore

        from tqdm.auto import tqdm
    except ImportError:
        from tqdm import tqdm
    return tqdm(total=total, desc="clustersim sweep", unit="config", disable=not enabled, leave=enabled)


def _run_all(
    tasks: List[_Task], n_jobs: int, executor: Any, progress: bool, run: Callable[[_Task], Dict[str, Any]] = _run_task
) -> List[Dict[str, Any]]:
    results: List[Optional[Dict[str, Any]]] = [None] * len(tasks)
    bar = _progress_bar(len(tasks), progress)
    try:
        if executor is None and _worker_count(n_jobs) == 1:
            for i, task in enumerate(tasks):
                results[i] = run(task)
                bar.update(1)
        else:
            own = executor is None
            pool = cf.ThreadPoolExecutor(_worker_count(n_jobs)) if own else _as_executor(executor)
            try:
                futures = {pool.submit(run, task): i for i, task in enumerate(tasks)}
                for future in cf.as_completed(futures):
                    results[futures[future]] = future.result()
                    bar.update(1)
            finally:
                if own:
                    pool.shutdown(wait=True, cancel_futures=True)
    finally:
        bar.close()
    return [r if r is not None else {"error": "not run"} for r in results]


def sweep(
    base_cluster: ClusterLike,
    base_workload: WorkloadLike,
    grid: Grid,
    *,
    n_jobs: int = -1,
    executor: Any = None,
    fidelity: Optional[str] = None,
    algorithm: Algorithm = None,
    network_profile: Optional[str] = None,
    progress: bool = True,
    train_tokens: Union[None, int, float, str] = None,
) -> "pd.DataFrame":
    """Simulates every configuration of ``grid`` and returns one DataFrame row per configuration.

    ``grid`` maps dotted spec paths to lists of values, e.g. ``{"nodes": [4, 8, 16],
    "fabric.oversubscription": [1, 2, 4], "training.micro_batch": [1, 2]}`` (keys resolved like the
    CLI's ``--set``: a ``cluster.``/``workload.`` prefix, or a first key that belongs to one spec); its
    cartesian product is swept. A list of ``{path: value}`` mappings sweeps exactly those.

    Columns: the grid keys, then :data:`RESULT_COLUMNS` (step time, throughput, MFU, breakdown,
    memory and ``fits``, GPU count and layout), power and cost fields once modelled, and ``error``
    (None, or the message of the SpecError/SimulationError with file and JSON path). Rows are in
    grid order.

    ``n_jobs``: simulations at once on this machine (-1: one per CPU; 1: sequentially in this
    thread). ``executor``: any ``concurrent.futures.Executor`` or a Dask ``distributed.Client``
    instead (its workers need ``clustersim`` installed). ``fidelity``, ``algorithm``,
    ``network_profile``: as :func:`clustersim.simulate` (``fidelity="analytical"``, where built, is
    the fast one for large sweeps). ``progress``: show a tqdm progress bar.

    ``train_tokens`` (as :func:`clustersim.simulate`'s): every configuration also gets its run with
    failures, checkpoints and restarts, and the columns ``time_to_train_days`` (the mean run),
    ``time_to_train_days_p90``, ``goodput``, ``time_to_train_usd`` and ``checkpoint_interval_s``. The
    grid may then vary ``checkpoint_interval_s`` (an option of the run, not a spec path) and the
    cluster's ``reliability.*`` / ``storage.*`` keys (``reliability.spare_nodes``, ...).
    """
    import pandas as pd

    cluster = Cluster.coerce(base_cluster)
    workload = Workload.coerce(base_workload)
    configs = expand_grid(grid)
    keys: List[str] = []
    for config in configs:
        keys.extend(k for k in config if k not in keys)
    if train_tokens is None and any(k in _RUN_OPTION_KEYS for k in keys):
        raise ValueError("checkpoint_interval_s is an option of the time to train: give train_tokens too")
    target = {k: ("run", k) if k in _RUN_OPTION_KEYS else resolve_key(k, configs[0].get(k, 0) if configs else 0)
              for k in keys}  # SpecError: unknown key

    options = core_options(fidelity, algorithm, network_profile)
    if train_tokens is not None:
        options["train_tokens"] = train_tokens
    cluster_json, cluster_file = cluster._as_core()
    workload_json, workload_file = workload._as_core()
    tasks: List[_Task] = []
    for config in configs:
        c_over = [(target[k][1], override_text(v)) for k, v in config.items() if target[k][0] == "cluster"]
        w_over = [(target[k][1], override_text(v)) for k, v in config.items() if target[k][0] == "workload"]
        run_options = {**options, **{k: v for k, v in config.items() if target[k][0] == "run"}}
        tasks.append((cluster_json, cluster_file, workload_json, workload_file, c_over, w_over, run_options))

    results = _run_all(tasks, n_jobs, executor, progress)
    present = {k for r in results for k in r}
    optional = [key for _, key in _OPTIONAL_COLUMNS + _TIME_TO_TRAIN_COLUMNS if key in present and key not in keys]
    columns = keys + list(RESULT_COLUMNS) + optional + ["error"]
    rows = [{**config, **result} for config, result in zip(configs, results)]
    df = pd.DataFrame(rows, columns=columns)
    df["fits"] = df["fits"].astype("boolean")
    for column in _INTEGER_COLUMNS:
        df[column] = df[column].astype("Int64")  # stays integer where error rows leave holes
    df["error"] = df["error"].astype(object).where(df["error"].notna(), None)
    return df


# -- best ---------------------------------------------------------------------------------------------

# Objectives with an obvious direction; any other numeric column needs minimize= explicitly.
_DIRECTIONS: Dict[str, bool] = {
    "step_time_s": True,
    "tokens_per_s": False,
    "tflops_per_gpu": False,
    "mfu": False,
    "peak_bytes_per_gpu": True,
    "energy_per_step_j": True,
    "energy_per_token_j": True,
    "usd_per_step": True,
    "usd_per_million_tokens": True,
    "time_to_train_days": True,
    "time_to_train_days_p90": True,
    "time_to_train_usd": True,
    "goodput": False,
}


def _divisors(n: int) -> List[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def parallel_configurations(
    cluster: ClusterLike,
    workload: WorkloadLike,
    *,
    micro_batches: Optional[Sequence[int]] = None,
    recompute: Optional[Sequence[str]] = ("none", "selective", "full"),
    tp_within_node: bool = True,
    sequence_parallel: bool = True,
) -> List[Dict[str, Any]]:
    """The parallel layouts the arithmetic allows for the cluster's GPU count.

    tp divides the GPUs per node (``tp_within_node``; else the GPU count), the attention heads, the
    key/value heads and the MLP width; pp divides the layers; dp = GPUs / (tp x pp x cp) (cp, ep and the
    ZeRO stage are the workload's); the micro-batch (powers of two up to 8 by default) times dp divides
    the global batch. With tp > 1, ``sequence_parallel`` (Megatron's usual setting) is turned on where
    the tokens of a micro-batch split evenly over the tp ranks. ``recompute``: the choices to cross
    with (None: leave the key out, the workload's setting). Whether the simulator accepts a layout is
    not checked here: :func:`best` reports refused ones as error rows. Keys: ``parallelism.tp``,
    ``parallelism.pp``, ``parallelism.dp``, ``parallelism.sequence_parallel``,
    ``training.micro_batch``, ``training.recompute``.
    """
    c = Cluster.coerce(cluster)
    w = Workload.coerce(workload)
    if w.is_trace:
        raise ValueError("a trace workload has a fixed parallel layout: there is nothing to search")
    gpus = c.gpu_count
    model, training, parallelism = w.model, w.training, w.parallelism
    cp = int(parallelism["cp"])  # the normalized spec has every key
    heads = int(model["heads"])
    kv_heads = int(model.get("kv_heads") or heads)
    global_batch = int(training["global_batch"])
    seq_len = int(model["seq_len"])
    if micro_batches is None:
        micro_batches = [mb for mb in (1, 2, 4, 8) if mb <= global_batch]
    configs: List[Dict[str, Any]] = []
    for tp in _divisors(min(c.gpus_per_node, gpus) if tp_within_node else gpus):
        if heads % tp or kv_heads % tp or int(model["ffn_hidden"]) % tp:
            continue
        for pp in _divisors(int(model["layers"])):
            if gpus % (tp * pp * cp) != 0:
                continue
            dp = gpus // (tp * pp * cp)
            for mb in micro_batches:
                if global_batch % (mb * dp) != 0:
                    continue
                layout: Dict[str, Any] = {"parallelism.tp": tp, "parallelism.pp": pp, "parallelism.dp": dp}
                if sequence_parallel and tp > 1:
                    layout["parallelism.sequence_parallel"] = (mb * seq_len // cp) % tp == 0
                layout["training.micro_batch"] = mb
                for rc in recompute if recompute is not None else [None]:
                    configs.append(layout if rc is None else {**layout, "training.recompute": rc})
    return configs


@dataclasses.dataclass(frozen=True)
class Best:
    """The result of :func:`best`.

    ``parameters``: the winning configuration (dotted spec paths) or None when no candidate ran and
    fit; ``cluster`` and ``workload``: the base specs with those parameters; ``row``: its sweep row;
    ``candidates``: every candidate's row, the feasible ones first, best first.
    """

    objective: str
    minimize: bool
    parameters: Optional[Dict[str, Any]]
    cluster: Optional[Cluster]
    workload: Optional[Workload]
    row: Optional["pd.Series"]
    candidates: "pd.DataFrame"

    @property
    def found(self) -> bool:
        """Whether some candidate ran and fit in memory."""
        return self.parameters is not None


def best(
    cluster: ClusterLike,
    workload: WorkloadLike,
    *,
    objective: str = "step_time_s",
    minimize: Optional[bool] = None,
    candidates: Optional[Sequence[Mapping[str, Any]]] = None,
    micro_batches: Optional[Sequence[int]] = None,
    recompute: Sequence[str] = ("none", "selective", "full"),
    tp_within_node: bool = True,
    require_fit: bool = True,
    n_jobs: int = -1,
    executor: Any = None,
    fidelity: Optional[str] = None,
    algorithm: Algorithm = None,
    network_profile: Optional[str] = None,
    progress: bool = True,
    train_tokens: Union[None, int, float, str] = None,
) -> Best:
    """Searches parallel configurations for the best one by ``objective`` that fits in memory.

    By default the candidates are the layouts of :func:`parallel_configurations` (tp within a node,
    pp, dp derived, sequence parallelism with tp, ``micro_batches``), each tried with the cheapest
    ``recompute`` first: a layout that does not fit is tried again with the next choice (selective,
    then full recompute), since recomputation only adds work. ``candidates`` instead gives the
    configurations to simulate, as they are. Every candidate is simulated (as a :func:`sweep`);
    candidates the simulator refuses stay in ``Best.candidates`` with their ``error``.
    ``objective`` is a sweep column: ``step_time_s`` (fastest, the default), ``tokens_per_s``, ``mfu``,
    ``usd_per_million_tokens`` or ``usd_per_step`` (cheapest), ``energy_per_token_j``, ...;
    ``minimize`` defaults to the column's natural direction. ``fidelity="analytical"`` makes large
    searches fast. With ``train_tokens`` the objective may be ``time_to_train_days`` (goodput-adjusted
    days of the run with failures), ``time_to_train_usd`` or ``goodput``, and ``candidates`` may vary
    ``checkpoint_interval_s`` and the cluster's ``reliability.spare_nodes`` (:func:`sweep`). Raises
    ValueError when no candidate reported the objective at all.
    """
    import pandas as pd

    c = Cluster.coerce(cluster)
    w = Workload.coerce(workload)
    if minimize is None:
        if objective not in _DIRECTIONS:
            raise ValueError(f"objective {objective!r}: say whether to minimize it (minimize=True or False)")
        minimize = _DIRECTIONS[objective]
    run = dict(n_jobs=n_jobs, executor=executor, fidelity=fidelity, algorithm=algorithm,
               network_profile=network_profile, progress=progress, train_tokens=train_tokens)
    if candidates is not None:
        grid = list(candidates)
        df = sweep(c, w, grid, **run)  # type: ignore[arg-type]
    else:
        layouts = parallel_configurations(c, w, micro_batches=micro_batches, recompute=None,
                                          tp_within_node=tp_within_node)
        grid, frames = [], []
        todo = layouts
        for choice in recompute:  # the layouts that did not fit, again with more recomputation
            if not todo:
                break
            stage = [{**layout, "training.recompute": choice} for layout in todo]
            frame = sweep(c, w, stage, **run)  # type: ignore[arg-type]
            grid.extend(stage)
            frames.append(frame)
            todo = [layout for layout, ok, fits in zip(todo, frame["error"].isna(), frame["fits"])
                    if ok and fits is not pd.NA and not bool(fits)]
        df = pd.concat(frames, ignore_index=True) if frames else sweep(c, w, [], **run)  # type: ignore[arg-type]
    if objective not in df.columns or (df["error"].isna().any() and df.loc[df["error"].isna(), objective].isna().all()):
        raise ValueError(f"no candidate reported {objective!r} (the report does not model it yet)")
    ok = df["error"].isna() & (df["fits"].fillna(False).astype(bool) if require_fit else True)
    rank = df[objective] if minimize else -df[objective]
    order = sorted(range(len(df)), key=lambda i: (not ok.iloc[i], df["error"].iloc[i] is not None, rank.iloc[i]))
    ranked = df.iloc[order].reset_index(drop=True)
    if not ok.any():
        return Best(objective, minimize, None, None, None, None, ranked)
    winner = ranked.iloc[0]
    keys = list(dict.fromkeys(k for config in grid for k in config))
    parameters = {k: _plain(winner[k]) for k in keys if not _missing(winner[k])}
    parts: Dict[str, Dict[str, Any]] = {"cluster": {}, "workload": {}}
    for k, v in parameters.items():
        if k in _RUN_OPTION_KEYS:
            continue  # an option of the run (in `parameters`), not of a spec
        spec, path = resolve_key(k, v)
        parts[spec][path] = v
    return Best(objective, minimize, parameters, c.updated(parts["cluster"]), w.updated(parts["workload"]), winner,
                ranked)


def _missing(value: Any) -> bool:
    """None, NaN or pd.NA: the key was not part of this candidate."""
    import pandas as pd

    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
