"""Shared fixtures for the Python tests of clustersim.

The package is imported from wherever Python finds it: an installed wheel (``pip install .``) or
the developer build (``./setup.sh test`` puts ``build/python`` on PYTHONPATH). The ``clustersim``
command, when available (``CLUSTERSIM_CLI`` or on PATH), checks that Python errors carry the CLI's text.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Optional

import matplotlib
import pytest

matplotlib.use("Agg")  # no display in tests

import clustersim as cs  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> Optional[str]:
    """Path of the clustersim command, or None."""
    path = os.environ.get("CLUSTERSIM_CLI") or shutil.which("clustersim")
    if path is None and (REPO / "build" / "bin" / "clustersim").exists():
        path = str(REPO / "build" / "bin" / "clustersim")
    return path


@pytest.fixture(scope="session")
def superpod() -> cs.Cluster:
    """Two DGX H100 nodes (16 GPUs) of the SuperPOD preset: small and fast to simulate."""
    return cs.Cluster.preset("dgx-h100-superpod", nodes=2)


@pytest.fixture(scope="session")
def gpt() -> cs.Workload:
    """GPT-3 1.3B, data parallel (the demo's workload)."""
    return cs.Workload.preset("gpt3-1.3b")


@pytest.fixture(scope="session")
def report(superpod: cs.Cluster, gpt: cs.Workload) -> cs.Report:
    """The report of GPT-3 1.3B on 16 GPUs, simulated once for the session."""
    return cs.simulate(superpod, gpt)
