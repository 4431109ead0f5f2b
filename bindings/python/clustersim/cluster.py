"""Cluster: the hardware side of a simulation (docs/architecture.md, "Cluster spec").

A cluster spec names the GPU (a catalogue id or an inline object), the nodes (GPUs, the scale-up
domain, NICs) and the fabric that joins them. Make one from a preset, a JSON file, a dictionary or
keyword arguments; every value is validated by the C++ core with the CLI's messages::

    cluster = Cluster.preset("dgx-h100-superpod", nodes=64, fabric={"oversubscription": 2})
    cluster = Cluster.from_json("my_cluster.json")
    cluster = Cluster(name="lab", gpu="a100-sxm4-80gb", nodes=4, fabric={"type": "fat_tree"})
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _core
from ._spec import PathLike, _Spec

__all__ = ["Cluster", "gpus", "export_formats"]


def gpus() -> List[str]:
    """Ids of the GPU catalogue, usable as a cluster's ``gpu``."""
    return list(_core.gpu_ids())


def export_formats() -> List[str]:
    """Formats of :meth:`Cluster.export` (``simgrid``, ``dot``, ``json``)."""
    return list(_core.export_formats())


class Cluster(_Spec):
    """A validated cluster spec. Immutable: :meth:`updated` returns a changed copy.

    ``Cluster(**keys)`` builds one from the spec's keys (``name``, ``gpu``, ``nodes``, ``node``,
    ``fabric``, ``power``, ``cost``); omitted keys take their defaults (docs/specs.md).
    """

    __slots__ = ()
    _kind = "cluster"

    @property
    def gpu(self) -> Union[str, Dict[str, Any]]:
        """The GPU: a catalogue id, or the inline GPU object."""
        return self.get("gpu")  # type: ignore[no-any-return]

    @property
    def nodes(self) -> int:
        """Number of nodes."""
        return int(self._data["nodes"])

    @property
    def gpus_per_node(self) -> int:
        """GPUs in each node."""
        return int(self._data["node"]["gpus"])

    @property
    def gpu_count(self) -> int:
        """GPUs in the cluster: nodes x GPUs per node."""
        return self.nodes * self.gpus_per_node

    @property
    def fabric(self) -> Dict[str, Any]:
        """The fabric section (a copy)."""
        return self.get("fabric")  # type: ignore[no-any-return]

    def info(self) -> Dict[str, Any]:
        """What the built cluster is made of and how well it connects (``clustersim topology info
        --json``): device, port, cable and transceiver counts, ``bisection_Bps``, ``diameter_hops``,
        ``average_hops``, the hop histogram and the oversubscription of each switch tier."""
        return json.loads(_core.topology_info(*self._as_core()))  # type: ignore[no-any-return]

    def export(self, format: str = "dot", path: Optional[PathLike] = None) -> str:
        """The built cluster as text (``clustersim topology export``): ``simgrid`` (a SimGrid 3.32
        platform file), ``dot`` (GraphViz) or ``json`` (spec, devices, links); also written to
        ``path`` when given."""
        formats = export_formats()
        if format not in formats:
            raise ValueError(f"unknown format {format!r} (formats: {', '.join(formats)})")
        text = str(_core.topology_export(*self._as_core(), format))
        if path is not None:
            _core.write_output_file(os.fspath(path), text, "export file")
        return text

    def __repr__(self) -> str:
        gpu = self.gpu if isinstance(self.gpu, str) else "inline GPU"
        return (
            f"Cluster({self.name!r}: {self.nodes} nodes x {self.gpus_per_node} {gpu}, "
            f"fabric {self.fabric.get('type')})"
        )
