"""The include graph between the C++ folders follows docs/architecture.md's "uses" table.

The table (Folder | Layer | Uses) is read from the document itself, so the document and this check
cannot drift: every `#include "..."` of a C++ file under sim/, topologies/, workloads/ and bindings/
that names a file of the repository must reach the file's own layer or one its row lists, and the
table less the uses it marks as defects must have no cycle. Needs no build.
"""

import fnmatch
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
CPP_SUFFIXES = {".hpp", ".cpp", ".h", ".cc"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_uses_table(text):
    """{layer: (folder patterns, allowed layers, defect layers)} from the Folder | Layer | Uses table."""
    lines = text.splitlines()
    start = lines.index("| Folder | Layer | Uses |")
    table = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        folder_cell, layer, uses_cell = (c.strip() for c in line.strip().strip("|").split("|"))
        folders = re.findall(r"`([^`]+)`", folder_cell)
        allowed, defects = set(), set()
        if uses_cell != "(nothing of ours)":
            for item in re.split(r"[,;]", re.sub(r"\([^)]*\)", lambda m: m.group(0).replace(",", " "), uses_cell)):
                name = item.split()[0]
                allowed.add(name)
                if "defect" in item:
                    defects.add(name)
        assert folders and layer not in table, line
        table[layer] = (folders, allowed, defects)
    return table


TABLE = read_uses_table(DOC.read_text())


def layer_of(path):
    """The layer of a repository-relative path: its most specific folder pattern in the table."""
    best, best_len = None, -1
    for layer, (folders, _, _) in TABLE.items():
        for f in folders:
            if "*" in f:
                hit = fnmatch.fnmatch(path, f) and path.count("/") == f.count("/")
            else:
                hit = path.startswith(f + "/")
            if hit and len(f) > best_len:
                best, best_len = layer, len(f)
    return best


def cpp_files():
    roots = sorted({f.split("/")[0] for folders, _, _ in TABLE.values() for f in folders})
    for r in roots:
        for p in sorted((ROOT / r).rglob("*")):
            if p.suffix in CPP_SUFFIXES and p.is_file():
                yield p.relative_to(ROOT).as_posix()


def include_edges(files):
    """(file, included path, from layer, to layer) of every include of a repository file across layers."""
    for f in files:
        src = layer_of(f)
        for inc in INCLUDE.findall((ROOT / f).read_text(errors="replace")):
            if not (ROOT / inc).is_file():
                continue  # a system header or a generated one (chakra/chakra_et.pb.h)
            dst = layer_of(inc)
            if dst != src:
                yield f, inc, src, dst


def violations(edges):
    return [
        f"{f} includes {inc}: layer {src} may not use {dst} (docs/architecture.md, 'uses' table)"
        for f, inc, src, dst in edges
        if dst is None or dst not in TABLE[src][1]
    ]


def cycle(graph):
    """One cycle of a {node: set(nodes)} graph as a list, or None."""
    state = {}

    def visit(n, path):
        state[n] = "open"
        for m in sorted(graph.get(n, ())):
            if state.get(m) == "open":
                return path[path.index(m) :] + [m]
            if m not in state:
                found = visit(m, path + [m])
                if found:
                    return found
        state[n] = "done"
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n, [n])
            if found:
                return found
    return None


def test_table_covers_every_layer_of_the_build():
    # The 16 layers of docs/architecture.md's "Layers" table, each a row here.
    assert set(TABLE) == {
        "core", "topologies", "workloads", "hardware", "network", "collectives", "replay", "report",
        "power", "cost", "validation", "serving", "training_run", "application", "cli", "bindings",
    }
    for layer, (_, allowed, _) in TABLE.items():
        assert allowed <= set(TABLE), f"{layer} uses an unknown layer: {allowed - set(TABLE)}"
        assert layer not in allowed


def test_every_cpp_file_belongs_to_a_layer():
    files = list(cpp_files())
    assert len(files) > 200  # the tree had 226 C++ files under these folders when this was written
    assert [f for f in files if layer_of(f) is None] == []
    assert layer_of("sim/network/collective_tables.cpp") == "network"
    assert layer_of("sim/collective_sweep.hpp") == "application"
    assert layer_of("sim/api/network_calibration.hpp") == "application"


def test_includes_follow_the_uses_table():
    assert violations(include_edges(cpp_files())) == []


def test_an_upward_include_is_caught():
    # The cycle this check was written for: sim/network including the collective sweep.
    edge = ("sim/network/x.cpp", "sim/collective_sweep.hpp", "network", "application")
    assert violations([edge]) == [
        "sim/network/x.cpp includes sim/collective_sweep.hpp: layer network may not use application "
        "(docs/architecture.md, 'uses' table)"
    ]


def test_the_table_has_no_cycle_but_the_marked_defects():
    graph = {layer: allowed - defects for layer, (_, allowed, defects) in TABLE.items()}
    assert cycle(graph) is None


def test_a_cycle_is_caught():
    # The two cycles this check was written after: network -> application -> replay -> network, and
    # validation -> application -> validation (both gone).
    graph = {layer: set(allowed) for layer, (_, allowed, _) in TABLE.items()}
    graph["network"].add("application")
    assert cycle(graph) is not None
    graph = {layer: set(allowed) for layer, (_, allowed, _) in TABLE.items()}
    graph["validation"].add("application")
    assert cycle(graph) in (["application", "validation", "application"], ["validation", "application", "validation"])


@pytest.mark.parametrize("uses, expected", [
    ("core, workloads", ({"core", "workloads"}, set())),
    ("core, report; application (`simulate.hpp`: a defect, below)", ({"core", "report", "application"}, {"application"})),
])
def test_uses_cells_parse(uses, expected):
    table = read_uses_table(f"| Folder | Layer | Uses |\n| --- | --- | --- |\n| `x` | x | {uses} |\n")
    assert table["x"][1:] == expected


def test_the_python_module_compiles_no_cli_source():
    # The pybind11 module is built from the bindings' own sources only (what it shares with the CLI
    # lives in the application layer): every source named in bindings/CMakeLists.txt's
    # pybind11_add_module(_core ...) is a file under bindings/, and none of the CLI's.
    text = (ROOT / "bindings" / "CMakeLists.txt").read_text()
    calls = re.findall(r"pybind11_add_module\(\s*_core\s+([^)]*)\)", text)
    assert len(calls) == 1, calls
    sources = [w for w in calls[0].split() if w not in ("MODULE", "SHARED", "THIN_LTO", "NO_EXTRAS")]
    assert sources and all(".." not in s and "cli" not in s and (ROOT / "bindings" / s).is_file() for s in sources)
    assert "sim/cli" not in text
    assert "cli" not in TABLE["bindings"][1]  # and the include check keeps bindings off sim/cli's headers
