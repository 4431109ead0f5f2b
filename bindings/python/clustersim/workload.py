"""Workload: the training job of a simulation (DESIGN.md, "Workload spec").

A workload spec is a transformer model, how it is trained (global batch, micro-batch, precision,
recompute) and how it is parallelized (tp, pp, dp, ...). Make one from a preset, a JSON file, a
dictionary, the spec's keys, or the flat keyword arguments of :meth:`Workload.transformer`::

    workload = Workload.preset("gpt3-1.3b", training={"micro_batch": 4})
    workload = Workload.transformer(name="tiny", layers=4, hidden=512, heads=8, seq_len=1024,
                                    vocab=32000, global_batch=64)
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from . import _core
from ._spec import _Spec

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
        micro_batch: int = 1,
        precision: str = "bf16",
        recompute: str = "none",
        optimizer: str = "adam",
        tp: int = 1,
        pp: int = 1,
        dp: Optional[int] = None,
        cp: int = 1,
        ep: int = 1,
        sequence_parallel: bool = False,
        pipeline_schedule: str = "1f1b",
        virtual_stages: int = 1,
        zero_stage: int = 0,
        overlap_grad_reduce: bool = True,
        description: Optional[str] = None,
    ) -> "Workload":
        """A transformer training workload from flat keyword arguments.

        ``ffn_hidden`` defaults to 4 x ``hidden``, ``kv_heads`` to ``heads`` (multi-head attention),
        ``dp`` to the GPU count divided by tp x pp x cp (resolved against the cluster when simulated).
        Units: sequences for batches, tokens for ``seq_len``.
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
            "moe": {"experts": experts, "top_k": top_k},
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
            "zero_stage": zero_stage,
            "overlap_grad_reduce": overlap_grad_reduce,
        }
        if dp is not None:
            parallelism["dp"] = dp
        spec: Dict[str, Any] = {
            "name": name,
            "model": model,
            "training": {
                "global_batch": global_batch,
                "micro_batch": micro_batch,
                "precision": precision,
                "recompute": recompute,
                "optimizer": optimizer,
            },
            "parallelism": parallelism,
        }
        if description is not None:
            spec["description"] = description
        return cls.from_dict(spec, file="<Workload.transformer>")

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
        """Tokens of one training step: global batch x sequence length."""
        return int(self._data["training"]["global_batch"]) * int(self._data["model"]["seq_len"])

    def __repr__(self) -> str:
        m, t, p = self._data["model"], self._data["training"], self._data["parallelism"]
        dp = p.get("dp") or "auto"
        return (
            f"Workload({self.name!r}: {m['layers']} layers x hidden {m['hidden']}, "
            f"global batch {t['global_batch']} x {m['seq_len']} tokens, "
            f"tp={p['tp']} pp={p['pp']} dp={dp})"
        )
