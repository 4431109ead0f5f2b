"""The repository is self-contained: nothing reads or cites a path outside it, and every measurement
file that the shipped profiles and the network datasets name is in calibration/data (issue 18)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator, List, Tuple

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "calibration" / "data"
SKIPPED_DIRS = {".git", ".venv", "__pycache__", "node_modules"}
# Built here, so that this file does not match itself.
OUTSIDE = ["..", "/shared"]
WORK = "/".join(["", "work", ""])  # the development machines' checkout root
FOUNDING_DOCS = ["DESIGN", "STYLE", "SIMGRID"]


def _text_files() -> Iterator[Tuple[Path, str]]:
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("build")]
        for name in files:
            path = Path(root) / name
            if name in SKIPPED_DIRS:  # a worktree's .git is a file naming where its repository lives
                continue
            if path.suffix in {".gz", ".png", ".pb", ".so", ".o", ".a"} or path.is_symlink():
                continue
            try:
                yield path, path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue


def test_nothing_reads_or_cites_a_path_outside_the_repository() -> None:
    outside = "".join(OUTSIDE)
    cited = [doc + ".md" for doc in FOUNDING_DOCS]
    hits: List[str] = []
    for path, text in _text_files():
        for number, line in enumerate(text.splitlines(), 1):
            if outside in line or WORK in line or any(doc in line for doc in cited):
                hits.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert hits == []


def _measurement_file(argument: str) -> str:
    return argument.split("#", 1)[0]


def test_every_measurement_the_shipped_profiles_name_ships_in_calibration_data() -> None:
    profiles = sorted((REPO / "calibration" / "profiles").glob("*.json"))
    assert len(profiles) == 3  # A100, H100, H200
    for profile in profiles:
        p = json.loads(profile.read_text())
        files = [_measurement_file(a) for a in p["fitted_on"] + p["held_out"]]
        assert files, profile.name
        for f in files:
            # Relative to calibration/data, or (calibration/power_cap) compiled into the library.
            assert (DATA / f).is_file() or (f.startswith("calibration/power_cap/") and (REPO / f).is_file()), \
                f"{profile.name}: {f}"
        # Each fitted value's source names the file it was fitted to, inside the repository.
        for name, value in p["parameters"].items():
            source = value["source"]
            assert "calibration/data/" in source or "calibration/power_cap/" in source, f"{profile.name} {name}"


def test_every_table_of_the_network_datasets_ships_in_calibration_data() -> None:
    datasets = json.loads((REPO / "calibration" / "network" / "datasets.json").read_text())
    files = [t["path"] for t in datasets["tables"] if t["format"] != "inline"]
    assert len(files) == 17  # vtrain 7, vidur 3, published 7 (GCP A3 Ultra and A3 Mega among them)
    for f in files:
        assert (DATA / f).is_file(), f


def test_each_copied_source_keeps_its_licence() -> None:
    # MIT: the licence text must travel with the copies (calibration/data/README.md).
    for source, holder in (("vidur", "Microsoft Corporation"), ("vtrain", "VIA Research Group at KAIST")):
        licence = (DATA / source / "LICENSE").read_text()
        assert "MIT License" in licence or "Permission is hereby granted, free of charge" in licence
        assert holder in licence
    readme = (DATA / "README.md").read_text()
    for top in sorted(p.name for p in DATA.iterdir() if p.is_dir()):
        assert f"## {top}/" in readme, top
