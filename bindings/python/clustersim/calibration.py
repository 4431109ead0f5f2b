"""Kernel calibration (``clustersim calibrate``): from measured kernel times to a fitted profile, and the
kernel model's error on measurements kept out of the fit.

Measurement files are those the command reads (sim/hardware/kernel_measurement.hpp): the clustersim
measurement JSON written by the CUDA microbenchmarks of calibration/microbench, Vidur's per-operator
``mlp.csv`` tables and the published records of ``microbench.json``; ``PATH#micro-0001..micro-0008``
keeps only the listed records. A path that does not exist as given is looked up in ``data_dir``
(default, as the command's ``--data``: ``calibration/data``, relative to the working directory: the
measurements shipped with the repository, calibration/data/README.md). The fit and the error
statistics are the C++ core's (kernel_fit, kernel_accuracy), the same as the command's.

A profile is a dict: the JSON of calibration/profiles/<gpu>.json (``gpu``, ``description``,
``fitted_on``, ``held_out``, ``parameters`` with each value's provenance, domain and residual).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "calibrate",
    "calibrate_from_trace",
    "calibration_profile",
    "calibration_profiles",
    "calibration_report",
    "kernel_accuracy",
    "kernel_errors",
    "read_measurements",
    "DEFAULT_DATA_DIR",
]

DEFAULT_DATA_DIR = _core.default_measurement_data_dir()  # the command's --data default

PathLike = Union[str, "os.PathLike[str]"]
Profile = Union[Mapping[str, Any], str, "os.PathLike[str]", None]


def calibration_profiles() -> List[str]:
    """GPU ids of the calibration profiles shipped with clustersim (calibration/profiles/)."""
    return list(_core.calibration_profiles())


def calibration_profile(profile: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> Dict[str, Any]:
    """A calibration profile as a dict: the shipped one of a GPU id (:func:`calibration_profiles`), a
    profile file (written by :func:`calibrate` or ``clustersim calibrate --out``), or a dict, checked
    and normalized by the C++ parser (SpecError names the file and the JSON path of a bad value)."""
    if isinstance(profile, Mapping):
        return json.loads(_core.parse_calibration_profile(json.dumps(profile), "<dict>"))  # type: ignore[no-any-return]
    text = os.fspath(profile)
    if not os.path.exists(text):  # a GPU id: the shipped profile, or the core's SpecError listing them
        return json.loads(_core.calibration_profile(text))  # type: ignore[no-any-return]
    with open(text, encoding="utf-8") as f:
        return json.loads(_core.parse_calibration_profile(f.read(), text))  # type: ignore[no-any-return]


def _load(arguments: Sequence[PathLike], data_dir: Optional[PathLike], gpu: Optional[str]
          ) -> Tuple[List[Any], List[str], str]:
    """(measurements of ``gpu``, notes on what was skipped, the GPU), as the command reads them:
    measurements of an unnamed GPU are taken to be of it; ``gpu`` None: the one GPU the files name."""
    kernels, notes, gpu_id = _core.select_measurements([os.fspath(a) for a in arguments],
                                                       os.fspath(data_dir) if data_dir is not None else "", gpu or "")
    return list(kernels), list(notes), str(gpu_id)


def _arguments(measurements: Union[PathLike, Sequence[PathLike]]) -> List[PathLike]:
    if isinstance(measurements, (str, os.PathLike)):
        return [measurements]
    return list(measurements)


def read_measurements(measurements: Union[PathLike, Sequence[PathLike]], *, gpu: Optional[str] = None,
                      data_dir: Optional[PathLike] = None) -> "pd.DataFrame":
    """The kernel measurements of some files as a DataFrame, one row per kernel: ``gpu``,
    ``operation`` (as the source names it), ``name`` (the op's role for the model), ``kernel``,
    ``precision``, ``m``, ``n``, ``k``, ``batch``, ``flops``, ``bytes``, ``time_s``, ``repetitions``,
    ``group``, ``tp``, ``source`` (file and record), ``timing`` (``per_call``, or ``kernel_duration`` for a
    profiler's kernel durations such as DeepGEMM's tables). ``df.attrs["notes"]``: what was skipped."""
    kernels, notes, _ = _load(_arguments(measurements), data_dir, gpu)
    df = _measurement_frame(kernels)
    df.attrs["notes"] = notes
    return df


_MEASUREMENT_FIELDS = ("gpu", "operation", "name", "kernel", "precision", "m", "n", "k", "batch", "flops", "bytes",
                       "time_s", "repetitions", "group", "tp", "source", "timing")


def _measurement_frame(kernels: Sequence[Any]) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame({f: [getattr(m, f) for m in kernels] for f in _MEASUREMENT_FIELDS},
                        columns=list(_MEASUREMENT_FIELDS))


def calibrate_from_trace(
    traces: Union[PathLike, Sequence[PathLike]],
    workloads: Any,
    cluster: Any,
    *,
    step: Union[str, int, None] = None,
    id: Optional[str] = None,
    name: Optional[str] = None,
    fidelity: Optional[str] = None,
    out: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """A software-stack profile fitted to PyTorch profiler traces of the user's own stack (the command's
    ``clustersim calibrate --from-trace``; the fit is the C++ core's, sim/stack_fit.hpp).

    ``traces``: Kineto trace files (``.json``/``.json.gz``) of one training step of rank 0; ``workloads``:
    the workload each ran (a :class:`~clustersim.Workload`, file, preset name or dict; one per trace,
    or one for all); ``cluster``: the cluster they ran on. ``step``: the ProfilerStep number, or
    ``"last"``; ``step``, ``id``, ``name``, ``fidelity`` None: the command's defaults (the last step, id
    ``fitted``, the analytical network backend; sim/api/stack_fit_request.hpp). ``out``: also write the profile there; ``training.stack: "<that path>"`` then runs any
    workload with it. Returns ``{"profile": the stack profile (workloads/stacks format), "fit": per
    kernel class (measured, modelled, scale, residual) and per trace (launches, starved launches,
    overlap, measured / built-in / fitted step time)}``. Raises SpecError naming the trace for one
    without kernels or whose kernels cannot be of its workload.
    """
    from .cluster import Cluster
    from .workload import Workload

    paths = [os.fspath(traces)] if isinstance(traces, (str, os.PathLike)) else [os.fspath(t) for t in traces]
    specs = list(workloads) if isinstance(workloads, (list, tuple)) else [workloads] * len(paths)
    core_workloads = [Workload.coerce(w)._as_core() for w in specs]
    profile, fit = _core.fit_stack(*Cluster.coerce(cluster)._as_core(),
                                   {"traces": paths, "workloads": core_workloads,
                                    "step": None if step is None else str(step), "id": id, "name": name,
                                    "fidelity": fidelity})
    if out is not None:
        with open(out, "w", encoding="utf-8") as f:
            f.write(profile)
    return {"profile": json.loads(profile), "fit": json.loads(fit)}


def calibrate(
    measurements: Union[PathLike, Sequence[PathLike], None] = None,
    *,
    gpu: Optional[str] = None,
    held_out: Sequence[PathLike] = (),
    description: Optional[str] = None,
    data_dir: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
    fixed: Sequence[str] = (),
    from_trace: Union[PathLike, Sequence[PathLike], None] = None,
    workload: Any = None,
    cluster: Any = None,
) -> Dict[str, Any]:
    """Fits the kernel model of a GPU to measured kernel times and returns the calibration profile.

    With ``from_trace`` (PyTorch profiler traces), ``workload`` and ``cluster`` instead: the software-stack
    profile fitted to the traces (:func:`calibrate_from_trace`'s ``"profile"``; ``out`` writes it).

    ``measurements``: measurement files (``PATH#SELECTOR`` allowed); only those of ``gpu`` (a catalogue
    id; None: the one GPU the files name) are used. ``held_out``: files kept out of the fit, recorded in
    the profile for :func:`calibration_report`. ``fixed``: parameters kept at the catalogue's values,
    not fitted (``clustersim calibrate --fixed``). ``out``: also write the profile there (what
    ``clustersim calibrate --out`` writes: the format of calibration/profiles/). What the files hold
    that was not used (other GPUs, collectives) is in :func:`read_measurements`'s ``attrs["notes"]``.
    Raises SpecError for a bad file (naming the JSON path or CSV cell) or when nothing can be fitted.
    """
    if from_trace is not None:
        if workload is None or cluster is None:
            raise ValueError("from_trace needs the workload each trace ran and the cluster (workload=..., cluster=...)")
        return calibrate_from_trace(from_trace, workload, cluster, out=out)["profile"]
    if measurements is None:
        raise ValueError("give the measurement files to fit (or from_trace=...)")
    text = _core.fit_profile({"measurements": [os.fspath(a) for a in _arguments(measurements)],
                              "held_out": [os.fspath(h) for h in held_out], "gpu": gpu, "description": description,
                              "data_dir": None if data_dir is None else os.fspath(data_dir),
                              "fixed": list(fixed)})
    if out is not None:
        _core.write_output_file(os.fspath(out), text, "profile")
    return json.loads(text)  # type: ignore[no-any-return]


def _profile_text(profile: Profile, gpu: Optional[str]) -> Tuple[str, str]:
    """(GPU id, profile JSON or "" for the catalogue's values without a profile)."""
    if profile is None:
        if gpu is None:
            raise ValueError("without a profile, name the GPU (gpu=ID): its catalogue values are used")
        return gpu, ""
    data = calibration_profile(profile)
    return gpu or str(data["gpu"]), json.dumps(data)


def _metric_of(operation: str, metric: str) -> str:
    if metric != "auto":
        return metric
    return "throughput" if _core.compared_by_throughput(operation) else "time"


def kernel_errors(
    profile: Profile,
    measurements: Union[PathLike, Sequence[PathLike]],
    *,
    gpu: Optional[str] = None,
    metric: str = "auto",
    data_dir: Optional[PathLike] = None,
) -> "pd.DataFrame":
    """The kernel model's prediction for every measurement: the columns of :func:`read_measurements`,
    then ``predicted_s``, ``metric`` and ``error``.

    ``profile``: a profile dict, a profile file or a GPU id (its shipped profile); None: the
    catalogue's assumed values of ``gpu``, uncalibrated. ``metric``: ``time`` (error = predicted /
    measured time - 1), ``throughput`` (measured / predicted time - 1: for published TFLOP/s tables) or
    ``auto``: throughput for GEMM tables, time otherwise, as the command does.
    """
    gpu_id, text = _profile_text(profile, gpu)
    kernels, notes, _ = _load(_arguments(measurements), data_dir, gpu_id)
    df = _measurement_frame(kernels)
    metrics = [_metric_of(m.operation, metric) for m in kernels]
    predicted = [0.0] * len(kernels)
    errors = [0.0] * len(kernels)
    for name in ("time", "throughput"):
        index = [i for i, m in enumerate(metrics) if m == name]
        if index:
            for i, (t, e) in zip(index, _core.kernel_predictions(gpu_id, text, [kernels[i] for i in index], name)):
                predicted[i], errors[i] = t, e
    df["predicted_s"] = predicted
    df["metric"] = metrics
    df["error"] = errors
    df.attrs["notes"] = notes
    return df


_ACCURACY_COLUMNS = ["operation", "count", "median_abs_error", "p90_abs_error", "median_error"]


def kernel_accuracy(
    profile: Profile,
    measurements: Union[PathLike, Sequence[PathLike]],
    *,
    gpu: Optional[str] = None,
    metric: str = "auto",
    data_dir: Optional[PathLike] = None,
) -> "pd.DataFrame":
    """The kernel model's error per operation, the command's accuracy table: ``metric`` (time, or
    throughput for GEMM tables with ``metric="auto"``), ``operation`` (in order of appearance, then
    ``all``), ``count``, ``median_abs_error``, ``p90_abs_error``, ``median_error`` (signed: > 0 the
    model predicts too long, or too fast for throughput). Arguments as :func:`kernel_errors`."""
    import pandas as pd

    gpu_id, text = _profile_text(profile, gpu)
    kernels, _, _ = _load(_arguments(measurements), data_dir, gpu_id)
    frames = []
    for name in ("time", "throughput"):
        chosen = [m for m in kernels if _metric_of(m.operation, metric) == name]
        if chosen:
            rows = _core.kernel_accuracy(gpu_id, text, chosen, name)
            frame = pd.DataFrame([list(r) for r in rows], columns=_ACCURACY_COLUMNS)
            frame.insert(0, "metric", name)
            frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["metric", *_ACCURACY_COLUMNS])
    return pd.concat(frames, ignore_index=True)


def calibration_report(gpu: Optional[Union[str, Mapping[str, Any]]] = None, *,
                       data_dir: Optional[PathLike] = None) -> "pd.DataFrame":
    """The error of calibration profiles on their own fit set and on the measurements they hold out
    (``clustersim calibrate --report``, without its second, refitted split): one row per (``profile``,
    ``set`` = fit | held_out, ``metric``, ``operation``) with the columns of :func:`kernel_accuracy`.
    ``gpu``: a shipped profile's GPU id or a profile dict (None: every shipped profile). Needs the
    measurement files the profiles name (``data_dir``)."""
    import pandas as pd

    profiles = [gpu] if gpu is not None else calibration_profiles()
    frames = []
    for p in profiles:
        data = calibration_profile(p)  # type: ignore[arg-type]
        for label, files in (("fit", data.get("fitted_on") or []), ("held_out", data.get("held_out") or [])):
            if not files:
                continue
            frame = kernel_accuracy(data, files, data_dir=data_dir)
            frame.insert(0, "set", label)
            frame.insert(0, "profile", str(data.get("name") or data["gpu"]))
            frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
