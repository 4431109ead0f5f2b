"""validate(): replay published training runs and measure the simulator's error (``clustersim validate``).

A validation dataset (calibration/validation/datasets/*.json, compiled in and used by name; or a
description file by path) maps each published measurement to the cluster and workload specs that
describe it. Every supported row is simulated (each in its own child process, ``jobs`` at a time) and
compared with its measurement: error = (predicted - measured) / measured. Rows the simulator cannot
represent yet are ``unsupported``, simulations that fail ``failed``: both are rows, with the reason,
and neither counts in the statistics. The row replay and the statistics are the C++ core's
(sim/validation), the same as the command's.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Union

from . import _core

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["validate", "validation_datasets", "Validation", "VALIDATION_COLUMNS", "validate_serving",
           "serving_validation_datasets"]

# The columns of Validation.rows, in order (the stable keys of the command's JSON rows).
VALIDATION_COLUMNS = ("id", "config", "gpus", "status", "measured", "predicted", "error", "step_time_s", "fits",
                      "reason", "measured_peak_memory_bytes", "predicted_peak_memory_bytes", "peak_memory_error")


class Validation(NamedTuple):
    """The result of :func:`validate`; unpacks as ``rows, summary = cs.validate(...)``.

    ``rows``: one row per replayed record (:data:`VALIDATION_COLUMNS`): ``status`` is ``simulated``,
    ``unsupported`` or ``failed``; ``measured`` and ``predicted`` in the dataset's metric
    (``summary["metric"]``, ``summary["unit"]``); ``error`` = (predicted - measured) / measured.
    ``summary``: ``rows``, ``simulated``, ``unsupported``, ``failed``, ``not_fitting`` (counts),
    ``mape`` (mean |error|), ``median_abs_error``, ``p90_abs_error``, ``max_abs_error``, ``bias`` (mean
    signed error: > 0 over-predicts) over the simulated rows; and what the dataset is: ``dataset``,
    ``title``, ``source``, ``license``, ``metric``, ``unit``, ``fidelity``, ``total_rows``,
    ``mapping`` and ``assumptions`` (lists of lines), ``text`` (the command's table). A dataset that
    also measured the peak memory per GPU (``summary["peak_memory"]``: which bytes it counts and its
    unit) fills ``measured_peak_memory_bytes``, ``predicted_peak_memory_bytes`` (the report's line
    counting the same bytes) and ``peak_memory_error``, and ``summary["peak_memory_errors"]`` holds
    their statistics (``None`` otherwise).
    """

    rows: "pd.DataFrame"
    summary: Dict[str, Any]


def validation_datasets() -> List[str]:
    """Names of the compiled-in validation datasets (usable with :func:`validate`)."""
    return list(_core.validation_datasets())


def validate(
    dataset: Union[str, "os.PathLike[str]"],
    *,
    fidelity: Optional[str] = None,
    limit: Optional[int] = None,
    jobs: Optional[int] = None,
) -> Validation:
    """Replays a validation dataset and returns its rows and error summary (``clustersim validate``).

    ``dataset``: a compiled-in name (:func:`validation_datasets`: ``vtrain-multi``, ...) or a
    description file. ``fidelity``: the network model (None: ``flow``; ``analytical`` is the fast one).
    ``limit``: replay only the first ``limit`` rows (None: all). ``jobs``: simulations at once (each in its
    own child process; None: 2). Raises SpecError (a ValueError) for a count below 1, an unknown dataset,
    a bad description or data file (naming the file and the cell) or an unknown fidelity; row failures
    are rows.
    """
    import pandas as pd

    options = {"fidelity": fidelity, "jobs": None if jobs is None else int(jobs),
               "limit": None if limit is None else int(limit)}  # None: the command's default; the core checks them
    document, text = _core.validate(os.fspath(dataset), {k: v for k, v in options.items() if v is not None})
    data = json.loads(document)
    rows = pd.DataFrame(data.pop("rows"), columns=list(VALIDATION_COLUMNS))
    rows["gpus"] = rows["gpus"].astype("Int64")
    rows["fits"] = rows["fits"].astype("boolean")
    for column in ("measured", "predicted", "error", "step_time_s", "measured_peak_memory_bytes",
                   "predicted_peak_memory_bytes", "peak_memory_error"):
        rows[column] = rows[column].astype(float)
    summary: Dict[str, Any] = dict(data.pop("summary"))
    summary["peak_memory_errors"] = summary.pop("peak_memory", None)  # the dataset's "peak_memory" says what it counts
    summary.update(data)
    summary["text"] = text
    return Validation(rows, summary)


def serving_validation_datasets() -> List[str]:
    """Names of the compiled-in serving validation datasets (usable with :func:`validate_serving`)."""
    return list(_core.serving_validation_datasets())


def validate_serving(dataset: str, *, limit: Optional[int] = None, scheduler: Optional[str] = None) -> Validation:
    """Replays a serving validation dataset through the serving engine (``clustersim validate
    serving-trtllm-inflight``; docs/serving.md): ``rows`` one per published figure and ``metric`` (``measured``
    and ``predicted`` in the metric's unit: output tokens/s, or seconds for a latency mean or percentile such
    as ``ttft_p99_s``; ``error`` = (predicted - measured) / measured, ``scheduler``,
    ``preemptions``...), ``summary`` the dataset's description and its error statistics (``groups``: all
    rows, per GPU, per model) with ``text``, the command's table. ``limit``: only the first rows (None:
    all); ``scheduler``: another policy than the dataset's, for a comparison."""
    import pandas as pd

    text_json, text = _core.validate_serving(dataset, {"limit": limit, "scheduler": scheduler})
    d = json.loads(text_json)
    summary = {k: v for k, v in d.items() if k != "rows"}
    summary["groups"] = summary.pop("summary")
    summary["text"] = text
    return Validation(pd.DataFrame(d["rows"]), summary)
