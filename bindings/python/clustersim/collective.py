"""collective(): simulated nccl-tests, from Python (``clustersim collective --json``).

One collective (or nccl-tests' ``sendrecv_perf``) over a set of ranks of a cluster, swept over
message sizes on an idle fabric, one DataFrame row per size with nccl-tests' columns, so a measured
table and a simulated one can be put side by side. It runs in a child process like every simulation.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable, Optional, Tuple, Union

from . import _core
from .cluster import Cluster
from .simulation import ClusterLike

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["collective", "COLLECTIVE_COLUMNS"]

# The columns of collective(), in order: those of `clustersim collective --json` (from the core's writer).
COLLECTIVE_COLUMNS: Tuple[str, ...] = tuple(_core.collective_columns())

Ranks = Union[None, str, Iterable[int]]
ByteSize = Union[int, float, str]


def _byte_text(value: ByteSize) -> str:
    if isinstance(value, str):
        return value
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def collective(
    cluster: ClusterLike,
    op: Optional[str] = None,
    *,
    ranks: Ranks = None,
    sizes: Optional[Iterable[float]] = None,
    min_bytes: Optional[ByteSize] = None,
    max_bytes: Optional[ByteSize] = None,
    step_factor: Optional[float] = None,
    fidelity: Optional[str] = None,
    algorithm: Optional[str] = None,
    network_profile: Optional[str] = None,
    peer_offset: Optional[int] = None,
) -> "pd.DataFrame":
    """Simulates ``op`` over ``ranks`` of ``cluster`` for each message size; one row per size.

    ``op`` (None: ``all_reduce``): ``all_reduce``, ``all_gather``, ``reduce_scatter``, ``all_to_all``, ``broadcast``,
    ``reduce`` or ``send_recv`` (every rank sends to the one ``peer_offset`` places after it, default
    1, and receives from the one before). ``ranks``: the communicator, in order, as a list of GPU
    ranks or the CLI's text (``"0-63"``, ``"0,8,16"``); None: every GPU. Sizes: ``sizes`` (bytes per
    rank, as nccl-tests counts them), else ``min_bytes`` to ``max_bytes`` (``8``, ``"64K"``, ``"1G"``)
    by ``step_factor``, as nccl-tests' ``-b -e -f`` (None: the command's defaults, 8 to 128M by 2). ``fidelity``, ``algorithm`` (``auto``: the one
    NCCL would pick; the report names it), ``network_profile``: as :func:`clustersim.simulate`.

    Columns: :data:`COLLECTIVE_COLUMNS`; ``protocol`` is NCCL's wire protocol the tuner chose (LL,
    LL128, Simple; empty for send_recv). ``busbw_GBps`` is ``algbw_GBps`` times nccl-tests' bus
    factor: 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, 1 for
    broadcast, reduce and send_recv. Raises :class:`~clustersim.SpecError` for bad input (an unknown
    op, a rank out of range or twice, an algorithm the group cannot run) and
    :class:`~clustersim.SimulationError` when the simulation cannot finish.
    """
    import pandas as pd

    c = Cluster.coerce(cluster)
    rank_text: Optional[str]
    if ranks is None or isinstance(ranks, str):
        rank_text = ranks
    else:
        rank_text = ",".join(str(int(r)) for r in ranks)
    options = {
        "op": op,
        "ranks": rank_text,
        "sizes": [float(s) for s in sizes] if sizes is not None else None,
        "min_bytes": _byte_text(min_bytes) if min_bytes is not None else None,
        "max_bytes": _byte_text(max_bytes) if max_bytes is not None else None,
        "step_factor": repr(float(step_factor)) if step_factor is not None else None,
        "peer_offset": peer_offset,
        "fidelity": fidelity,
        "algorithm": algorithm,
        "network_profile": network_profile,
    }
    text = _core.collective(*c._as_core(), {k: v for k, v in options.items() if v is not None})
    return pd.DataFrame(json.loads(text), columns=list(COLLECTIVE_COLUMNS))
