"""Report: what one simulation found (DESIGN.md, "Report", stable keys).

Scalars are attributes (``step_time_s``, ``tokens_per_s``, ``tflops_per_gpu``, ``mfu``); sections are
small frozen dataclasses (``memory``, ``power``, ``cost``, ``provenance``, ``run``); the tables are
pandas DataFrames (``breakdown``, ``communication``, ``links``). ``to_dict()`` / ``to_json()`` give the
exact JSON the CLI writes with ``--json``, and ``Report.from_json`` reads it back. Times in seconds,
sizes in bytes, power in watts, money in US dollars.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Type, TypeVar, Union

from . import _core

if TYPE_CHECKING:  # pandas is imported when a table is first asked for: `import clustersim` stays fast
    import pandas as pd

__all__ = ["Report", "Memory", "Power", "Cost", "Provenance", "RunInfo"]

_T = TypeVar("_T")


def _section(cls: Type[_T], data: Optional[Mapping[str, Any]]) -> _T:
    """A dataclass from a JSON object, ignoring keys it does not know (newer reports)."""
    data = data or {}
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclasses.dataclass(frozen=True)
class Memory:
    """Memory per GPU, in bytes, against the GPU's capacity."""

    weights_bytes: float = 0.0
    gradients_bytes: float = 0.0
    optimizer_bytes: float = 0.0
    activations_bytes: float = 0.0
    communication_buffers_bytes: float = 0.0
    framework_overhead_bytes: float = 0.0
    peak_bytes_per_gpu: float = 0.0
    capacity_bytes: float = 0.0
    fits: bool = True


@dataclasses.dataclass(frozen=True)
class Power:
    """Average power and energy of one step (watts, kilowatts, joules)."""

    gpu_avg_w: float = 0.0
    cluster_avg_kw: float = 0.0
    energy_per_step_j: float = 0.0


@dataclasses.dataclass(frozen=True)
class Cost:
    """Capital and running cost (US dollars)."""

    capex_usd: float = 0.0
    usd_per_hour: float = 0.0
    usd_per_step: float = 0.0
    usd_per_million_tokens: float = 0.0


@dataclasses.dataclass(frozen=True)
class Provenance:
    """Which models computed the numbers."""

    fidelity: str = ""
    network: str = ""
    calibration: str = ""
    extrapolated: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class RunInfo:
    """What was simulated: cluster, workload, layout, sizes and how much work the simulator did."""

    cluster: str = ""
    workload: str = ""
    gpu: str = ""
    gpus: int = 0
    nodes: int = 0
    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    ep: int = 1
    global_batch: int = 0
    micro_batches: int = 0
    seq_len: int = 0
    parameters: float = 0.0
    model_flops_per_step: float = 0.0
    peak_flops_per_gpu: float = 0.0
    precision: str = ""
    ops_simulated: int = 0
    transfers_simulated: int = 0
    trace: str = ""  # "FORMAT PATH" when the workload was a trace


def _table(rows: List[Dict[str, Any]], columns: List[str]) -> "pd.DataFrame":
    """A DataFrame with the stable ``columns`` first, then any key newer reports add (in order)."""
    import pandas as pd

    extra: List[str] = []
    for row in rows:
        extra.extend(k for k in row if k not in columns and k not in extra)
    return pd.DataFrame(rows, columns=columns + extra)


def _present(section: Optional[Mapping[str, Any]]) -> bool:
    """Power and cost are null until their models exist."""
    return bool(section) and any(v is not None for v in section.values())  # type: ignore[union-attr]


class Report:
    """The report of one simulated training step. Build it with :func:`clustersim.simulate`."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        """A report from its JSON form (a dict); see :meth:`from_dict` / :meth:`from_json`."""
        self._data: Dict[str, Any] = copy.deepcopy(dict(data))

    # -- JSON ---------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Report":
        """A report from the dictionary of :meth:`to_dict` (or of ``clustersim simulate --json``)."""
        return cls(data)

    @classmethod
    def from_json(cls, source: Union[str, "os.PathLike[str]"]) -> "Report":
        """A report from JSON text or from a file written by :meth:`to_json` or ``--out``."""
        if isinstance(source, str) and source.lstrip().startswith("{"):
            return cls(json.loads(source))
        with open(source, encoding="utf-8") as f:
            return cls(json.load(f))

    def to_dict(self) -> Dict[str, Any]:
        """The report as a dictionary (a copy), keyed as DESIGN.md's stable report keys."""
        return copy.deepcopy(self._data)

    def to_json(self, path: Optional[Union[str, "os.PathLike[str]"]] = None, *, indent: Optional[int] = 2) -> str:
        """The report as JSON text; also written to ``path`` when given."""
        text = json.dumps(self._data, indent=indent)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        return text

    # -- scalars and sections -----------------------------------------------------------------------
    @property
    def step_time_s(self) -> float:
        """Simulated time of one training step, seconds (slowest rank, first kernel to optimizer end)."""
        return float(self._data["step_time_s"])

    @property
    def tokens_per_s(self) -> float:
        """Training throughput: global batch x sequence length / step time."""
        return float(self._data["tokens_per_s"])

    @property
    def tflops_per_gpu(self) -> float:
        """Model flops (no recompute) per second per GPU, in TFLOP/s."""
        return float(self._data["tflops_per_gpu"])

    @property
    def mfu(self) -> float:
        """Model flops utilization: ``tflops_per_gpu`` over the GPU's dense peak for the precision."""
        return float(self._data["mfu"])

    @property
    def memory(self) -> Memory:
        """Memory per GPU: weights, gradients, optimizer, activations, buffers, peak vs capacity."""
        return _section(Memory, self._data.get("memory"))

    @property
    def fits(self) -> bool:
        """Whether the peak memory per GPU fits in the GPU's capacity (``memory.fits``)."""
        return bool(self._data.get("memory", {}).get("fits", True))

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
        pipeline_bubble), columns ``time_s`` and ``fraction`` of the step. The rows add up to the step."""
        import pandas as pd

        b = self._data.get("breakdown") or {}
        names = ["compute", "exposed_communication", "pipeline_bubble"]
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
        any column a newer report adds."""
        columns = ["group", "collective", "algorithm", "bytes", "count", "time_s", "exposed_s"]
        return _table([dict(r) for r in self._data.get("communication") or []], columns)

    @property
    def links(self) -> "pd.DataFrame":
        """The busiest links, hottest first: ``id, src, dst, kind, bytes, bandwidth_Bps, utilization``
        (the fraction of the step the link was busy), then any column a newer report adds (e.g.
        ``busy_s``, ``users``: the process groups that used the link)."""
        columns = ["id", "src", "dst", "kind", "bytes", "bandwidth_Bps", "utilization"]
        rows = []
        for link in self._data.get("links") or []:
            src, _, dst = str(link.get("id", "")).partition("->")
            rows.append({"src": src, "dst": dst, **link})
        return _table(rows, columns)

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
