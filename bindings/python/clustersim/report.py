"""Report: what one simulation found (docs/architecture.md, "Report", stable keys).

Scalars are attributes (``step_time_s``, ``tokens_per_s``, ``tflops_per_gpu``, ``mfu``; the error bar
``step_time_interval_s`` with its ``step_time_interval_basis``); sections are
small frozen dataclasses (``memory``, ``power``, ``cost``, ``provenance``, ``run``); the tables are
pandas DataFrames (``breakdown``, ``communication``, ``links``, ``power_by_device``,
``power_by_gpu_class``, ``bill_of_materials``, and ``timeline()`` when the simulation recorded one).
``to_dict()`` / ``to_json()`` give the exact JSON the CLI writes with ``--json``, and
``Report.from_json`` reads it back. Times in seconds, sizes in bytes, power in watts, money in US
dollars.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Type, TypeVar, Union

from . import _core

if TYPE_CHECKING:  # pandas is imported when a table is first asked for: `import clustersim` stays fast
    import pandas as pd

__all__ = ["Report", "Memory", "Power", "Cost", "Provenance", "RunInfo", "TIMELINE_COLUMNS"]

# The columns of Report.timeline(), in order.
TIMELINE_COLUMNS: Tuple[str, ...] = (
    "rank_class",
    "ranks",
    "stream",
    "name",
    "category",
    "start_s",
    "end_s",
    "duration_s",
    "bytes",
    "flops",
    "communicator",
    "algorithm",
    "kernel",
    "collective",
    "peer_offset",
    "op",
)

_T = TypeVar("_T")


def _section(cls: Type[_T], data: Optional[Mapping[str, Any]]) -> _T:
    """A dataclass from a JSON object, ignoring keys it does not know (newer reports)."""
    data = data or {}
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


# The report's keys as the core writes them (sim/report/report_schema.hpp): per section path ("memory",
# "run.parallelism", "power.by_device"), its keys in order with their JSON type and default.
_SCHEMA: Dict[str, List[Dict[str, Any]]] = json.loads(_core.report_schema())["sections"]
_PYTHON_TYPES: Dict[str, Any] = {"integer": int, "number": float, "boolean": bool, "string": str, "array": tuple}


def _columns(path: str) -> List[str]:
    """The columns of the report's table at ``path`` ("communication", "power.by_device"), in order."""
    return [f["key"] for f in _SCHEMA[path]]


def _dataclass_fields(path: str) -> List[Tuple[str, Any, Any]]:
    """The scalar and array keys of the section at ``path`` in the report's order, an object's keys in
    its place (``run.parallelism``'s tp, pp, ...), with the core's defaults. Tables are left to
    :class:`Report`'s DataFrames."""
    out: List[Tuple[str, Any, Any]] = []
    for f in _SCHEMA[path]:
        if f["type"] == "object":
            out.extend(_dataclass_fields(f"{path}.{f['key']}"))
        elif f["type"] != "table":
            default = tuple(f["default"]) if f["type"] == "array" else f["default"]
            out.append((f["key"], _PYTHON_TYPES[f["type"]], dataclasses.field(default=default)))
    return out


def _dataclass(name: str, path: str, doc: str) -> Any:
    """A frozen dataclass of the report's section at ``path`` (its fields: :func:`_dataclass_fields`)."""
    return dataclasses.make_dataclass(
        name, _dataclass_fields(path), frozen=True, namespace={"__doc__": doc, "__module__": __name__}
    )


Memory = _dataclass(
    "Memory",
    "memory",
    """Memory per GPU, in bytes, at the moment of the step when it peaks (``peak_phase``: ``loss``,
    ``backward`` or ``optimizer``), against the GPU's capacity. The lines the framework allocates
    (weights to workspace) sum to ``allocated_peak_bytes`` (torch.cuda.max_memory_allocated);
    ``reserved_peak_bytes`` adds the caching allocator's reserve, ``peak_bytes_per_gpu`` also the CUDA
    context. ``framework_overhead_bytes`` = workspace + allocator reserve + CUDA context.""",
)

Power = _dataclass(
    "Power",
    "power",
    """Average power and energy of one step (watts, kilowatts, joules). Facility figures include the
    PUE, ``it_avg_kw`` does not; ``peak_kw`` is the facility power with every GPU at the highest-power
    activity it had in the step. The clock under the power cap: ``gemm_clock_MHz`` (a large GEMM's),
    ``tensor_power_budget_w`` (what tensor kernels may draw while they run), ``tensor_duty_cycle`` (their
    share of the step), ``clock_basis`` (how it was set) and ``clock_cap_modelled``. Per device kind:
    :attr:`Report.power_by_device`.""",
)

Cost = _dataclass(
    "Cost",
    "cost",
    """Capital and running cost (US dollars). ``usd_per_hour`` is the sum of the amortized capital,
    energy and operations per hour; ``tco_usd`` the capital plus lifetime energy and operations. The
    bill of materials: :attr:`Report.bill_of_materials`.""",
)

Provenance = _dataclass(
    "Provenance",
    "provenance",
    """Which models computed the numbers: ``fidelity``, ``network``, ``calibration``, ``stack`` (the
    software stack assumed, and where its profile comes from) and ``extrapolated`` (models used outside
    their fitted domain).""",
)

RunInfo = _dataclass(
    "RunInfo",
    "run",
    """What was simulated: cluster, workload, layout (tp, pp, dp, cp, ep), sizes and how much work the
    simulator did (``stack``: training.stack, the default stack when the workload names none, "" for a
    trace; ``trace``: "FORMAT PATH" when the workload was a trace).""",
)


def _table(rows: List[Dict[str, Any]], columns: List[str]) -> "pd.DataFrame":
    """A DataFrame with the stable ``columns`` first, then any key newer reports add (in order)."""
    import pandas as pd

    extra: List[str] = []
    for row in rows:
        extra.extend(k for k in row if k not in columns and k not in extra)
    return pd.DataFrame(rows, columns=columns + extra)


def _number(value: Any) -> float:
    """A report scalar: null (unknown) reads as NaN."""
    return math.nan if value is None else float(value)


def _present(section: Optional[Mapping[str, Any]]) -> bool:
    """Power and cost are null until their models exist."""
    return bool(section) and any(v is not None for v in section.values())  # type: ignore[union-attr]


def _timeline_frame(trace: Mapping[str, Any]) -> "pd.DataFrame":
    """One row per "X" slice of a Chrome trace written by clustersim (sim/report/timeline.hpp)."""
    import pandas as pd

    classes: Dict[Any, Tuple[str, str]] = {}  # pid -> (class name, ranks label)
    streams: Dict[Tuple[Any, Any], str] = {}  # (pid, tid) -> stream label
    slices = []
    for e in trace.get("traceEvents") or []:
        ph = e.get("ph")
        if ph == "X":
            slices.append(e)
        elif ph == "M" and e.get("name") == "process_name":
            label = str((e.get("args") or {}).get("name", ""))
            classes[e.get("pid")] = (label.split(" (rank ", 1)[0], label)
        elif ph == "M" and e.get("name") == "thread_name":
            streams[(e.get("pid"), e.get("tid"))] = str((e.get("args") or {}).get("name", ""))
    columns: Dict[str, List[Any]] = {c: [] for c in TIMELINE_COLUMNS}
    for e in slices:
        args = e.get("args") or {}
        pid, tid = e.get("pid"), e.get("tid")
        name, label = classes.get(pid, (str(pid), str(pid)))
        start = float(e.get("ts", 0.0)) * 1e-6  # the format's microseconds
        duration = float(e.get("dur", 0.0)) * 1e-6
        columns["rank_class"].append(name)
        columns["ranks"].append(label)
        columns["stream"].append(streams.get((pid, tid), f"stream {tid}"))
        columns["name"].append(e.get("name", ""))
        columns["category"].append(e.get("cat", ""))
        columns["start_s"].append(start)
        columns["end_s"].append(start + duration)
        columns["duration_s"].append(duration)
        columns["bytes"].append(float(args.get("bytes", 0.0)))
        columns["flops"].append(float(args.get("flops", 0.0)))
        columns["communicator"].append(args.get("communicator"))
        columns["algorithm"].append(args.get("algorithm"))
        columns["kernel"].append(args.get("kernel"))
        columns["collective"].append(args.get("collective"))
        columns["peer_offset"].append(args.get("peer_offset"))
        columns["op"].append(args.get("op"))
    df = pd.DataFrame(columns, columns=list(TIMELINE_COLUMNS))
    for c in ("rank_class", "ranks", "stream", "category"):
        df[c] = df[c].astype("category")
    df["op"] = df["op"].astype("Int64")
    df["peer_offset"] = df["peer_offset"].astype("Int64")
    return df.sort_values("start_s", kind="stable").reset_index(drop=True)


class Report:
    """The report of one simulated training step. Build it with :func:`clustersim.simulate`.

    A report may carry the step's timeline (``simulate(..., timeline=True)``): the Chrome / Perfetto
    trace text, kept with the report (it pickles with it) and read by :meth:`timeline`. Reports of
    simulations that did not ask for one (sweeps) carry none and pay nothing for it.
    """

    __slots__ = ("_data", "_timeline", "_timeline_frame")

    def __init__(self, data: Mapping[str, Any], timeline: Optional[str] = None) -> None:
        """A report from its JSON form (a dict) and, optionally, its timeline's Chrome trace text;
        see :meth:`from_dict` / :meth:`from_json`."""
        self._data: Dict[str, Any] = copy.deepcopy(dict(data))
        self._timeline: Optional[str] = timeline
        self._timeline_frame: Optional["pd.DataFrame"] = None

    def __getstate__(self) -> Tuple[Dict[str, Any], Optional[str]]:
        return (self._data, self._timeline)

    def __setstate__(self, state: Tuple[Dict[str, Any], Optional[str]]) -> None:
        self._data, self._timeline = state
        self._timeline_frame = None

    # -- JSON ---------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Report":
        """A report from the dictionary of :meth:`to_dict` (or of ``clustersim simulate --json``)."""
        return cls(data)

    @classmethod
    def from_json(
        cls, source: Union[str, "os.PathLike[str]"], *, timeline: Optional[Union[str, "os.PathLike[str]"]] = None
    ) -> "Report":
        """A report from JSON text or from a file written by :meth:`to_json` or ``--out``; ``timeline``:
        the trace file written with it (``clustersim simulate --timeline``, :meth:`save_timeline`)."""
        trace = None
        if timeline is not None:
            with open(timeline, encoding="utf-8") as f:
                trace = f.read()
        if isinstance(source, str) and source.lstrip().startswith("{"):
            return cls(json.loads(source), trace)
        with open(source, encoding="utf-8") as f:
            return cls(json.load(f), trace)

    def to_dict(self) -> Dict[str, Any]:
        """The report as a dictionary (a copy), keyed as docs/architecture.md's stable report keys."""
        return copy.deepcopy(self._data)

    def to_json(self, path: Optional[Union[str, "os.PathLike[str]"]] = None, *, indent: Optional[int] = 2) -> str:
        """The report as JSON text; also written to ``path`` when given."""
        text = json.dumps(self._data, indent=indent)
        if path is not None:
            _core.write_output_file(os.fspath(path), text + "\n", "report file")
        return text

    # -- scalars and sections -----------------------------------------------------------------------
    @property
    def step_time_s(self) -> float:
        """Simulated time of one training step, seconds (slowest rank, first kernel to optimizer end)."""
        return float(self._data["step_time_s"])

    @property
    def step_time_interval_s(self) -> Optional[Tuple[float, float]]:
        """Where the measured step time is expected (lo, hi), seconds: from the validation errors of the
        runs nearest to this one (docs/validation.md, "Error bars"); None without residuals."""
        interval = self._data.get("step_time_interval_s")
        return None if interval is None else (float(interval[0]), float(interval[1]))

    @property
    def step_time_interval_basis(self) -> Optional[Dict[str, Any]]:
        """What the interval was derived from: ``rows`` (validation rows), ``datasets`` (name -> rows),
        ``mean_distance``, ``max_distance``, the neighbours' step-time error percentiles, ``widening``
        and the ``rule``; None without residuals."""
        return self._data.get("step_time_interval_basis")

    @property
    def tokens_per_s(self) -> float:
        """Training throughput: global batch x sequence length / step time (NaN when unknown: a trace
        without batch sizes; :attr:`unknown` says why)."""
        return _number(self._data["tokens_per_s"])

    @property
    def tflops_per_gpu(self) -> float:
        """Model flops (no recompute) per second per GPU, in TFLOP/s (NaN when unknown)."""
        return _number(self._data["tflops_per_gpu"])

    @property
    def mfu(self) -> float:
        """Model flops utilization: ``tflops_per_gpu`` over the GPU's dense peak for the precision (NaN
        when unknown)."""
        return _number(self._data["mfu"])

    @property
    def unknown(self) -> Dict[str, str]:
        """The figures the run cannot know, by JSON path (``"tokens_per_s"``, ``"memory.peak_bytes_per_gpu"``),
        with the reason (``"the trace has no batch or sequence size"``). Their values are NaN (scalars)
        or None (section fields)."""
        return dict(self._data.get("unknown") or {})

    @property
    def memory(self) -> Memory:
        """Memory per GPU: weights, gradients, optimizer, activations, buffers, peak vs capacity."""
        return _section(Memory, self._data.get("memory"))

    @property
    def fits(self) -> Optional[bool]:
        """Whether the peak memory per GPU fits in the GPU's capacity (``memory.fits``); None when the
        peak is unknown."""
        fits = self._data.get("memory", {}).get("fits", True)
        return None if fits is None else bool(fits)

    @property
    def power(self) -> Optional[Power]:
        """Power and energy, or None while power is not modelled."""
        section = self._data.get("power")
        return _section(Power, section) if _present(section) else None

    @property
    def cost(self) -> Optional[Cost]:
        """Cost, or None while cost is not modelled."""
        section = self._data.get("cost")
        return _section(Cost, section) if _present(section) else None

    @property
    def time_to_train(self) -> Optional[Dict[str, Any]]:
        """The training run's section (days p10/p50/p90, goodput, interruptions by cause in
        ``causes``, time lost to checkpoints, recomputation and restarts, energy and cost; keys as in
        the JSON report, docs/time_to_train.md), or None when no ``train_tokens`` were asked for."""
        section = self._data.get("time_to_train")
        return dict(section) if section else None

    @property
    def provenance(self) -> Provenance:
        """Fidelity, network model and GPU parameters behind the numbers."""
        p = dict(self._data.get("provenance") or {})
        p["extrapolated"] = tuple(p.get("extrapolated") or ())
        return _section(Provenance, p)

    @property
    def run(self) -> RunInfo:
        """What was simulated (cluster, workload, GPUs, parallel layout, batch, sizes)."""
        r = dict(self._data.get("run") or {})
        r.update(r.pop("parallelism", None) or {})
        return _section(RunInfo, r)

    # -- tables -------------------------------------------------------------------------------------
    @property
    def breakdown(self) -> "pd.DataFrame":
        """Where the critical rank's step goes: index ``component`` (compute, exposed_communication,
        pipeline_bubble, host_wait: ready ops waiting for the CPU to issue them, ``training.host_op_us``),
        columns ``time_s`` and ``fraction`` of the step. The rows add up to the step."""
        import pandas as pd

        b = self._data.get("breakdown") or {}
        names = ["compute", "exposed_communication", "pipeline_bubble", "host_wait"]
        times = [float(b.get(f"{n}_s", 0.0)) for n in names]
        step = self.step_time_s
        df = pd.DataFrame(
            {"time_s": times, "fraction": [t / step if step > 0 else 0.0 for t in times]},
            index=pd.Index(names, name="component"),
        )
        return df

    @property
    def communication(self) -> "pd.DataFrame":
        """Collectives per process group: ``group, collective, algorithm, bytes, count, time_s,
        exposed_s`` (summed over calls; ``exposed_s`` is the part not hidden behind compute), then
        any column a newer report adds (``protocol``: NCCL's wire protocol, LL, LL128 or Simple)."""
        return _table([dict(r) for r in self._data.get("communication") or []], _columns("communication"))

    @property
    def links(self) -> "pd.DataFrame":
        """The busiest links, hottest first: ``id, src, dst, kind, bytes, bandwidth_Bps, utilization``
        (the fraction of the step the link was busy), then any column a newer report adds (e.g.
        ``busy_s``, ``users``: the process groups that used the link)."""
        columns = ["id", "src", "dst"] + [c for c in _columns("links") if c != "id"]
        rows = []
        for link in self._data.get("links") or []:
            src, _, dst = str(link.get("id", "")).partition("->")
            rows.append({"src": src, "dst": dst, **link})
        return _table(rows, columns)

    @property
    def power_by_device(self) -> "pd.DataFrame":
        """The step's energy per kind of device: ``device`` (gpu, host, nvswitch_chip, nic, each switch
        tier, transceiver, facility: the PUE overhead), ``count``, ``avg_w`` (all of them together),
        ``energy_per_step_j``, ``fraction`` of the step's energy, ``basis`` (where the figure comes
        from). Empty when power is not modelled."""
        rows = [dict(r) for r in (self._data.get("power") or {}).get("by_device") or []]
        df = _table(rows, _columns("power.by_device"))
        total = float(df["energy_per_step_j"].sum()) if len(df) else 0.0
        df.insert(4, "fraction", df["energy_per_step_j"] / total if total > 0 else 0.0)
        return df

    @property
    def power_by_gpu_class(self) -> "pd.DataFrame":
        """The GPUs' time and energy per rank class: ``name``, ``ranks``, ``tensor_s``, ``vector_s``,
        ``exposed_communication_s``, ``overlapped_communication_s``, ``waiting_s``, ``avg_w_per_gpu``,
        ``energy_per_step_j`` (all ranks of the class). Empty when power is not modelled."""
        rows = [dict(r) for r in (self._data.get("power") or {}).get("gpu_classes") or []]
        return _table(rows, _columns("power.gpu_classes"))

    @property
    def bill_of_materials(self) -> "pd.DataFrame":
        """The capital cost line by line: ``item`` (gpu_server, nic, each switch tier, cables,
        transceivers, ...), ``count``, ``unit_usd``, ``total_usd``, ``source`` (price source and date).
        Sums to ``cost.capex_usd`` (with any other capex of the spec). Empty when cost is not modelled."""
        rows = [dict(r) for r in (self._data.get("cost") or {}).get("bill_of_materials") or []]
        return _table(rows, _columns("cost.bill_of_materials"))

    # -- timeline -----------------------------------------------------------------------------------
    @property
    def has_timeline(self) -> bool:
        """Whether the report carries the step's timeline (``simulate(..., timeline=True)``)."""
        return self._timeline is not None

    def _require_timeline(self) -> str:
        if self._timeline is None:
            raise ValueError("this report has no timeline: simulate with timeline=True (or a file path), "
                             "or read one with Report.from_json(..., timeline=path)")
        return self._timeline

    def timeline(self) -> "pd.DataFrame":
        """The step's timeline, one row per executed op of each recorded rank class (a copy):

        ``rank_class`` (the class's name, e.g. a pipeline stage), ``ranks`` (which ranks it stands
        for), ``stream`` (``"stream 0: compute"``, ``"stream 1: dp"``, ...), ``name``, ``category``
        (compute / collective / p2p), ``start_s``, ``end_s``, ``duration_s``, ``bytes``, ``flops``,
        ``communicator`` and ``algorithm`` (communication), ``kernel`` (compute), ``collective``,
        ``peer_offset`` (send/recv), ``op`` (index in the class's ops); sorted by start time.
        Raises ValueError when the report carries no timeline."""
        if self._timeline_frame is None:
            self._timeline_frame = _timeline_frame(json.loads(self._require_timeline()))
        return self._timeline_frame.copy()

    def timeline_trace(self) -> Dict[str, Any]:
        """The timeline as the Chrome / Perfetto trace document (``traceEvents``: "M" names, "X"
        slices, "s"/"f" flow arrows from each send to its recv; microseconds)."""
        return json.loads(self._require_timeline())  # type: ignore[no-any-return]

    def save_timeline(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the timeline's trace to ``path``: open it in ui.perfetto.dev or chrome://tracing."""
        text = self._require_timeline()
        _core.write_output_file(os.fspath(path), text if text.endswith("\n") else text + "\n", "timeline file")

    # -- display ------------------------------------------------------------------------------------
    def summary(self) -> str:
        """The readable summary the CLI prints (``clustersim simulate`` without ``--json``)."""
        return str(_core.report_text(json.dumps(self._data)))

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (
            f"Report(step_time_s={self.step_time_s:.6g}, tokens_per_s={self.tokens_per_s:.6g}, "
            f"mfu={self.mfu:.3f}, fits={self.fits})"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython / Jupyter
        printer.text(repr(self) if cycle else self.summary())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self._data == other._data

    __hash__ = None  # type: ignore[assignment]
