"""Workload: the training job of a simulation (docs/architecture.md, "Workload spec").

A workload spec is a transformer model, how it is trained (global batch, micro-batch, precision,
recompute) and how it is parallelized (tp, pp, cp, ep, dp, ZeRO, the pipeline schedule, ...). Make one
from a preset, a JSON file, a dictionary, the spec's keys, or the flat keyword arguments of
:meth:`Workload.transformer`::

    workload = Workload.preset("gpt3-1.3b", training={"micro_batch": 4})
    workload = Workload.transformer(name="tiny", layers=4, hidden=512, heads=8, seq_len=1024,
                                    vocab=32000, global_batch=64, tp=2, pp=2, sequence_parallel=True)

Or a recorded trace instead of a model (``{"name", "trace": {"format", "path"}}``, the path relative to
the workload file): ``Workload.from_json("workloads/traces/native_dp2.workload.json")`` or
:meth:`Workload.from_trace`.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from typing import Any, Dict, List, Optional, Tuple

from . import _core
from ._spec import PathLike, _Spec

__all__ = ["Workload", "schema"]


class Workload(_Spec):
    """A validated workload spec. Immutable: :meth:`updated` returns a changed copy.

    ``Workload(**keys)`` builds one from the spec's keys (``name``, ``model``, ``training``,
    ``parallelism``); :meth:`transformer` takes the same values as flat keyword arguments.
    """

    __slots__ = ()
    _kind = "workload"

    @classmethod
    def transformer(cls, *, name: str = "transformer", description: Optional[str] = None,
                    **keys: Any) -> "Workload":
        """A transformer training workload from flat keyword arguments: every key of the spec's
        ``model``, ``model.moe``, ``training`` and ``parallelism`` sections by its last name
        (``layers``, ``experts``, ``micro_batch``, ``tp``, ...; :func:`schema` and docs/specs.md list
        them with their types, ranges, defaults and units).

        ``ffn_hidden`` defaults to 4 x ``hidden``; a key left out or None takes the core's default
        (``kv_heads``: ``heads``; ``dp``: the GPU count divided by tp x pp x cp, resolved against the
        cluster when simulated; the software stack's profile sets attention, dropout, host_op_us, the
        overlaps and ``zero_stage`` unless they are given). Units: sequences for batches, tokens for
        ``seq_len``. Bad values raise SpecError naming the JSON path (``/parallelism/tp``).
        """
        sections = _flat_keys()
        unknown = sorted(k for k in keys if k not in sections)
        if unknown:
            raise TypeError(f"transformer() got unexpected keyword arguments: {', '.join(unknown)}")
        missing = [k for k in _required_keys() if keys.get(k) is None]
        if missing:
            raise TypeError(f"transformer() missing required keyword arguments: {', '.join(missing)}")
        if keys.get("ffn_hidden") is None:
            keys["ffn_hidden"] = 4 * keys["hidden"]
        spec: Dict[str, Any] = {"name": name, "model": {"moe": {}}, "training": {}, "parallelism": {}}
        for key, value in keys.items():
            if value is None:
                continue
            node = spec
            for part in sections[key].split("."):
                node = node[part]
            node[key] = value
        if description is not None:
            spec["description"] = description
        return cls.from_dict(spec, file="<Workload.transformer>")

    @classmethod
    def from_trace(cls, path: PathLike, format: str, /, *, name: Optional[str] = None,
                   description: Optional[str] = None) -> "Workload":
        """A workload replayed from a recorded trace: ``format`` ``clustersim`` (native JSON),
        ``chakra`` (execution traces; ``{rank}`` in the path stands for the rank) or ``pytorch``
        (Kineto profiler traces, a folder or a file per rank); see docs/traces.md."""
        spec: Dict[str, Any] = {"name": name or os.path.basename(os.fspath(path)).split(".")[0] or "trace",
                                "trace": {"format": format, "path": os.path.abspath(os.fspath(path))}}
        if description is not None:
            spec["description"] = description
        return cls.from_dict(spec, file="<Workload.from_trace>")

    @property
    def is_trace(self) -> bool:
        """Whether the workload replays a recorded trace instead of generating a model's ops."""
        return "trace" in self._data

    @property
    def trace(self) -> Optional[Dict[str, Any]]:
        """The trace section, ``{"format", "path"}`` (the path absolute), or None for a model."""
        return self.get("trace")  # type: ignore[no-any-return]

    @property
    def model(self) -> Dict[str, Any]:
        """The model section (a copy)."""
        return self.get("model")  # type: ignore[no-any-return]

    @property
    def training(self) -> Dict[str, Any]:
        """The training section (a copy)."""
        return self.get("training")  # type: ignore[no-any-return]

    @property
    def parallelism(self) -> Dict[str, Any]:
        """The parallelism section (a copy); ``dp`` 0 means "GPUs / (tp x pp x cp)"."""
        return self.get("parallelism")  # type: ignore[no-any-return]

    @property
    def tokens_per_step(self) -> int:
        """Tokens of one training step: global batch x sequence length (0 for a trace: unknown)."""
        if self.is_trace:
            return 0
        return int(self._data["training"]["global_batch"]) * int(self._data["model"]["seq_len"])

    def __repr__(self) -> str:
        if self.is_trace:
            t = self._data["trace"]
            return f"Workload({self.name!r}: {t['format']} trace {t['path']})"
        m, t, p = self._data["model"], self._data["training"], self._data["parallelism"]
        dp = p.get("dp") or "auto"
        return (
            f"Workload({self.name!r}: {m['layers']} layers x hidden {m['hidden']}, "
            f"global batch {t['global_batch']} x {m['seq_len']} tokens, "
            f"tp={p['tp']} pp={p['pp']} dp={dp})"
        )


def schema() -> List[Dict[str, Any]]:
    """The workload spec's keys as the C++ core declares them (workloads/workload_schema.cpp), one
    dictionary each: ``path`` (``"training.micro_batch"``), ``section``, ``key``, ``type``
    (integer, number, boolean, string, choice), ``stable``, ``required``, ``min``/``max``,
    ``default`` (None: required or derived, ``default_doc`` says how), ``unit``, ``choices``, ``doc``."""
    return [dict(f) for f in _schema()]


_TRANSFORMER_SECTIONS = ("model", "model.moe", "training", "parallelism")


@functools.lru_cache(maxsize=None)
def _schema() -> Tuple[Dict[str, Any], ...]:
    return tuple(json.loads(_core.workload_schema()))


@functools.lru_cache(maxsize=None)
def _flat_keys() -> Dict[str, str]:
    """{key: its section} for :meth:`Workload.transformer`'s keyword arguments."""
    return {f["key"]: f["section"] for f in _schema() if f["section"] in _TRANSFORMER_SECTIONS}


def _required_keys() -> List[str]:
    return [f["key"] for f in _schema() if f["section"] in _TRANSFORMER_SECTIONS and f["required"]
            and f["key"] != "ffn_hidden"]


def _transformer_signature() -> inspect.Signature:
    """Workload.transformer's signature for help() and IDEs, from the schema: the required keys
    first, then the others defaulting to None (the core's default)."""
    params = [inspect.Parameter("cls", inspect.Parameter.POSITIONAL_OR_KEYWORD),
              inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default="transformer", annotation=str)]
    types = {"integer": int, "number": float, "boolean": bool, "string": str, "choice": str}
    fields = [f for f in _schema() if f["section"] in _TRANSFORMER_SECTIONS]
    required = set(_required_keys())
    for f in sorted(fields, key=lambda f: f["key"] not in required):
        default = inspect.Parameter.empty if f["key"] in required else None
        annotation = types[f["type"]] if f["key"] in required else Optional[types[f["type"]]]
        params.append(inspect.Parameter(f["key"], inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=annotation))
    params.append(inspect.Parameter("description", inspect.Parameter.KEYWORD_ONLY, default=None,
                                    annotation=Optional[str]))
    return inspect.Signature(params, return_annotation="Workload")


Workload.transformer.__func__.__signature__ = _transformer_signature()  # type: ignore[attr-defined]
