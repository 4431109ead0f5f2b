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

import os
from typing import Any, Dict, List, Optional, Tuple

from . import _core
from ._spec import PathLike, _Spec

__all__ = ["Workload"]


class Workload(_Spec):
    """A validated workload spec. Immutable: :meth:`updated` returns a changed copy.

    ``Workload(**keys)`` builds one from the spec's keys (``name``, ``model``, ``training``,
    ``parallelism``); :meth:`transformer` takes the same values as flat keyword arguments.
    """

    __slots__ = ()
    @classmethod
    def _load(cls, source: str, overrides: List[Tuple[str, str]]) -> Tuple[str, str]:
        return _core.load_workload(source, overrides)

    @classmethod
    def _parse(cls, text: str, file: str, overrides: List[Tuple[str, str]]) -> Tuple[str, str]:
        return _core.parse_workload(text, file, overrides)

    @classmethod
    def _preset_names(cls) -> List[str]:
        return _core.workload_presets()

    @classmethod
    def transformer(
        cls,
        *,
        name: str = "transformer",
        layers: int,
        hidden: int,
        heads: int,
        seq_len: int,
        vocab: int,
        global_batch: int,
        ffn_hidden: Optional[int] = None,
        kv_heads: Optional[int] = None,
        head_dim: Optional[int] = None,
        activation: str = "gelu",
        tied_embeddings: bool = False,
        experts: int = 0,
        top_k: int = 0,
        expert_ffn_hidden: Optional[int] = None,
        capacity_factor: Optional[float] = None,
        load_imbalance: Optional[float] = None,
        micro_batch: int = 1,
        precision: str = "bf16",
        recompute: str = "none",
        optimizer: str = "adam",
        stack: Optional[str] = None,
        attention: Optional[str] = None,
        dropout: Optional[float] = None,
        host_op_us: Optional[float] = None,
        fp8_recipe: Optional[str] = None,
        fp8_weight_cache: Optional[bool] = None,
        tp: int = 1,
        pp: int = 1,
        dp: Optional[int] = None,
        cp: int = 1,
        cp_comm: Optional[str] = None,
        ep: int = 1,
        sequence_parallel: bool = False,
        pipeline_schedule: str = "1f1b",
        virtual_stages: int = 1,
        zero_stage: Optional[int] = None,
        overlap_grad_reduce: Optional[bool] = None,
        bucket_size_params: Optional[int] = None,
        order: Optional[str] = None,
        tp_comm_overlap: Optional[bool] = None,
        overlap_param_gather: Optional[bool] = None,
        description: Optional[str] = None,
    ) -> "Workload":
        """A transformer training workload from flat keyword arguments (docs/specs.md has every key).

        ``ffn_hidden`` defaults to 4 x ``hidden``, ``kv_heads`` to ``heads`` (multi-head attention),
        ``dp`` to the GPU count divided by tp x pp x cp (resolved against the cluster when simulated).
        ``stack`` (the software stack: ``megatron-core``, the default, ``megatron-deepspeed``,
        ``pytorch-fsdp2``, ``jax-xla``, or the path of a stack profile file ending in ``.json``, such as
        :func:`clustersim.calibrate_from_trace` writes), ``attention`` (``flash`` / ``unfused``), ``dropout`` and
        ``host_op_us`` (CPU time to issue one op, microseconds), ``fp8_recipe`` (``delayed`` / ``current`` /
        ``mxfp8`` / ``nvfp4`` / ``tensorwise``) and ``fp8_weight_cache`` (both for ``precision="fp8"`` only) go to ``training``;
        the stack's profile sets attention, dropout, host_op_us, the overlaps and ``zero_stage`` unless they
        are given; ``expert_ffn_hidden``,
        ``capacity_factor``, ``load_imbalance`` go to ``model.moe``; ``cp_comm`` (``ring`` / ``all_gather``), ``bucket_size_params``, ``order``
        (rank placement, innermost first, e.g. ``"tp-cp-ep-dp-pp"``), ``tp_comm_overlap`` and
        ``overlap_param_gather`` to ``parallelism``. None leaves the core's default. Units: sequences
        for batches, tokens for ``seq_len``. Bad values raise SpecError naming the JSON path
        (``/parallelism/tp``).
        """
        model: Dict[str, Any] = {
            "type": "transformer",
            "layers": layers,
            "hidden": hidden,
            "heads": heads,
            "ffn_hidden": ffn_hidden if ffn_hidden is not None else 4 * hidden,
            "seq_len": seq_len,
            "vocab": vocab,
            "activation": activation,
            "tied_embeddings": tied_embeddings,
            "moe": _given({"experts": experts, "top_k": top_k, "expert_ffn_hidden": expert_ffn_hidden,
                           "capacity_factor": capacity_factor, "load_imbalance": load_imbalance}),
        }
        if kv_heads is not None:
            model["kv_heads"] = kv_heads
        if head_dim is not None:
            model["head_dim"] = head_dim
        parallelism: Dict[str, Any] = {
            "tp": tp,
            "pp": pp,
            "cp": cp,
            "ep": ep,
            "sequence_parallel": sequence_parallel,
            "pipeline_schedule": pipeline_schedule,
            "virtual_stages": virtual_stages,
            **_given({"dp": dp, "cp_comm": cp_comm, "zero_stage": zero_stage, "overlap_grad_reduce": overlap_grad_reduce, "bucket_size_params": bucket_size_params, "order": order,
                      "tp_comm_overlap": tp_comm_overlap, "overlap_param_gather": overlap_param_gather}),
        }
        spec: Dict[str, Any] = {
            "name": name,
            "model": model,
            "training": {
                "global_batch": global_batch,
                "micro_batch": micro_batch,
                "precision": precision,
                "recompute": recompute,
                "optimizer": optimizer,
                **_given({"stack": stack, "attention": attention, "dropout": dropout, "host_op_us": host_op_us,
                          "fp8_recipe": fp8_recipe, "fp8_weight_cache": fp8_weight_cache}),
            },
            "parallelism": parallelism,
        }
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


def _given(values: Dict[str, Any]) -> Dict[str, Any]:
    """The entries that are not None: the others keep the core's defaults."""
    return {k: v for k, v in values.items() if v is not None}
