"""clustersim: simulate distributed training on GPU clusters, from Python.

::

    import clustersim as cs
    cluster = cs.Cluster.preset("dgx-h100-superpod", nodes=32)
    workload = cs.Workload.preset("gpt3-1.3b")
    report = cs.simulate(cluster, workload)          # report.step_time_s, report.breakdown, ...
    df = cs.sweep(cluster, workload, grid={"nodes": [4, 8, 16], "fabric.oversubscription": [1, 2]})
    report = cs.simulate(cluster, workload, timeline=True)   # report.timeline(): one row per op
    table = cs.compare(workload, ["dgx-h100-superpod", "hgx-h100-roce"], tokens=2e12)
    nccl = cs.collective(cluster, "all_reduce", ranks=range(64), min_bytes="1M", max_bytes="1G")
    rows, summary = cs.validate("vtrain-multi", fidelity="analytical", limit=10)
    served = cs.serve("dgx-h100", "llama3-8b-h100", overrides={"traffic.rate_rps": 30})  # .requests, .summary
    profile = cs.calibrate(["gemm_sweep.json"], held_out=["other.json"])

Every simulation runs in its own child process (SimGrid's engine cannot restart in a process), so a
failing or crashing simulation raises :class:`SpecError` or :class:`SimulationError` and the
interpreter lives on. Plots are in :mod:`clustersim.plots` (matplotlib).
"""

from __future__ import annotations

from .errors import SimulationError, SpecError  # first: the C++ module raises these

from . import _core  # noqa: E402  (after the errors it refers to)
from .calibration import (  # noqa: E402
    calibrate,
    calibrate_from_trace,
    calibration_profile,
    calibration_profiles,
    calibration_report,
    kernel_accuracy,
    kernel_errors,
    read_measurements,
)
from .cluster import Cluster, export_formats, gpus  # noqa: E402
from .collective import collective  # noqa: E402
from .compare import compare  # noqa: E402
from .report import Cost, Memory, Power, Provenance, Report, RunInfo  # noqa: E402
from .serving import LayoutSearch, MaxRate, Serving, compare_serving, find_max_rate, search_layouts, serve, serving_presets, serving_schedulers, serving_schema  # noqa: E402
from .simulation import collective_algorithms, fidelities, simulate, split_overrides  # noqa: E402
from .sweep import Best, best, expand_grid, parallel_configurations, sweep  # noqa: E402
from .validation import (  # noqa: E402
    Validation,
    serving_validation_datasets,
    validate,
    validate_serving,
    validation_datasets,
)
from .workload import Workload  # noqa: E402
from .workload import schema as workload_schema  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Best",
    "Cluster",
    "Cost",
    "Memory",
    "Power",
    "Provenance",
    "Report",
    "RunInfo",
    "MaxRate",
    "Serving",
    "SimulationError",
    "SpecError",
    "Validation",
    "Workload",
    "best",
    "calibrate",
    "calibrate_from_trace",
    "calibration_profile",
    "calibration_profiles",
    "calibration_report",
    "collective",
    "collective_algorithms",
    "compare",
    "expand_grid",
    "export_formats",
    "fidelities",
    "find_max_rate",
    "search_layouts",
    "compare_serving",
    "LayoutSearch",
    "gpus",
    "kernel_accuracy",
    "kernel_errors",
    "parallel_configurations",
    "read_measurements",
    "serve",
    "serving_presets",
    "serving_schedulers",
    "serving_schema",
    "simulate",
    "split_overrides",
    "sweep",
    "validate",
    "validate_serving",
    "serving_validation_datasets",
    "validation_datasets",
    "workload_schema",
]
