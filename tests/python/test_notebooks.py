"""Every notebook in notebooks/ runs top to bottom: its cells assert what its text claims."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import clustersim

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_its_assertions_hold(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel imports the clustersim this test imported (an installed one or build/python), even
    # when PYTHONPATH was relative: the kernel runs in notebooks/.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(clustersim.__file__)))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, when an assertion fails
    errors = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []


def test_there_are_notebooks() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "teaching_scaling_tradeoffs", "sweeping_topologies",
                                           "choosing_a_cluster", "calibration", "sizing_an_inference_cluster"}
