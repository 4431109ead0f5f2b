"""Cluster and Workload: presets, JSON and dict round-trips, keyword construction, overrides, and
errors that name the file and the JSON path with the CLI's exact text."""

from __future__ import annotations

import inspect
import json
import pickle
import subprocess
from pathlib import Path
from typing import Any, Optional

import pytest

import clustersim as cs


def test_presets_and_catalogue_are_listed() -> None:
    assert "dgx-h100-superpod" in cs.Cluster.presets()
    assert "gpt3-1.3b" in cs.Workload.presets()
    assert "h100-sxm5-80gb" in cs.gpus()
    assert "flow" in cs.fidelities()
    assert "ring" in cs.collective_algorithms()


def test_preset_keyword_overrides_merge_into_sections() -> None:
    base = cs.Cluster.preset("dgx-h100-superpod")
    c = cs.Cluster.preset("dgx-h100-superpod", nodes=4, fabric={"oversubscription": 2})
    assert c.nodes == 4 and c.gpus_per_node == 8 and c.gpu_count == 32
    assert c["fabric.oversubscription"] == 2.0
    # The rest of the fabric section is the preset's: a nested dict merges, it does not replace.
    for key in ("type", "tiers", "switch_radix", "rail_optimized", "link_latency_us"):
        assert c["fabric"][key] == base["fabric"][key]
    assert c.file == "topologies/presets/dgx-h100-superpod.json"


def test_cluster_round_trips_through_json_file_text_and_dict(tmp_path: Path) -> None:
    c = cs.Cluster.preset("dgx-h100-superpod", nodes=4)
    path = tmp_path / "cluster.json"
    text = c.to_json(path)
    assert json.loads(path.read_text()) == c.to_dict() == json.loads(text)
    assert cs.Cluster.from_json(path) == c
    assert cs.Cluster.from_json(str(path)).file == str(path)
    assert cs.Cluster.from_json(text) == c
    assert cs.Cluster.from_dict(c.to_dict()) == c
    assert cs.Cluster(**c.to_dict()) == c


def test_workload_round_trips_through_json_file_and_dict(tmp_path: Path) -> None:
    w = cs.Workload.preset("gpt3-1.3b", training={"micro_batch": 4})
    assert w["training.micro_batch"] == 4
    path = tmp_path / "w.json"
    w.to_json(path)
    assert cs.Workload.from_json(path) == w
    assert cs.Workload.from_dict(w.to_dict()) == w
    assert cs.Workload(**w.to_dict()) == w
    assert pickle.loads(pickle.dumps(w)) == w


def test_to_dict_fills_in_defaults() -> None:
    # A minimal cluster from keyword arguments: every omitted key comes back with its default.
    c = cs.Cluster(name="lab", gpu="a100-sxm4-80gb", nodes=2,
                   node={"gpus": 8, "scale_up": {"type": "nvswitch", "bandwidth_GBps": 300, "latency_us": 0.7}},
                   fabric={"type": "fat_tree"})
    d = c.to_dict()
    assert d["fabric"]["oversubscription"] == 1.0
    assert d["fabric"]["technology"] == "infiniband"
    assert d["power"]["pue"] == 1.3
    assert c.gpu == "a100-sxm4-80gb" and c.gpu_count == 16


def test_transformer_keywords_build_the_spec() -> None:
    w = cs.Workload.transformer(name="tiny", layers=4, hidden=512, heads=8, seq_len=1024, vocab=32000,
                                global_batch=64, micro_batch=2, recompute="selective")
    assert w.name == "tiny"
    assert w.model["ffn_hidden"] == 4 * 512
    assert w.training["recompute"] == "selective"
    assert w.tokens_per_step == 64 * 1024
    assert w.file == "<Workload.transformer>"


def test_updated_returns_a_validated_copy() -> None:
    c = cs.Cluster.preset("dgx-h100-superpod")
    d = c.updated({"fabric.oversubscription": 4}, nodes=8)
    assert (d.nodes, d["fabric.oversubscription"]) == (8, 4.0)
    assert (c.nodes, c["fabric.oversubscription"]) == (32, 1.0)
    with pytest.raises(AttributeError):
        c.nodes = 3  # type: ignore[misc]
    assert d.get("fabric.nope", "default") == "default"
    with pytest.raises(KeyError):
        d["fabric.nope"]


def test_bad_value_names_file_json_path_and_expectation() -> None:
    with pytest.raises(cs.SpecError) as info:
        cs.Cluster.preset("dgx-h100-superpod", fabric={"oversubscription": 0.5})
    e = info.value
    assert isinstance(e, ValueError)
    assert e.file == "topologies/presets/dgx-h100-superpod.json"
    assert e.json_path == "/fabric/oversubscription"
    assert e.message == "expected a number >= 1, got 0.5"
    assert str(e) == "topologies/presets/dgx-h100-superpod.json: /fabric/oversubscription: expected a number >= 1, got 0.5"


def test_typo_in_a_key_suggests_the_known_one() -> None:
    with pytest.raises(cs.SpecError) as info:
        cs.Cluster.preset("dgx-h100-superpod").updated({"fabric.oversubscripton": 2})
    assert info.value.json_path == "/fabric/oversubscripton"
    assert "did you mean 'oversubscription'" in info.value.message


def test_dict_errors_name_the_dict_and_path() -> None:
    d = cs.Workload.preset("gpt3-1.3b").to_dict()
    d["model"]["heads"] = -1
    with pytest.raises(cs.SpecError) as info:
        cs.Workload.from_dict(d, file="my_model")
    assert (info.value.file, info.value.json_path) == ("my_model", "/model/heads")


def test_malformed_json_file_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x",\n "nodes": }')
    with pytest.raises(cs.SpecError) as info:
        cs.Cluster.from_json(path)
    assert info.value.file == str(path)
    assert info.value.message.startswith("malformed JSON at line 2")


def test_unknown_preset_lists_the_presets() -> None:
    with pytest.raises(cs.SpecError) as info:
        cs.Cluster.preset("no-such-cluster")
    assert "dgx-h100-superpod" in info.value.message


def test_spec_errors_survive_pickling() -> None:
    e = cs.SpecError("f.json", "/nodes", "expected an integer >= 1, got 0")
    again = pickle.loads(pickle.dumps(e))
    assert (again.file, again.json_path, again.message, str(again)) == (e.file, e.json_path, e.message, str(e))


@pytest.mark.parametrize(
    "setting, python_call",
    [
        ("fabric.oversubscription=0.5", lambda: cs.Cluster.preset("dgx-h100-superpod", fabric={"oversubscription": 0.5})),
        ("nodes=abc", lambda: cs.Cluster.preset("dgx-h100-superpod", nodes="abc")),
        ("training.micro_batch=3",
         lambda: cs.simulate("dgx-h100-superpod", "gpt3-1.3b", overrides={"training.micro_batch": 3})),
        ("parallelism.tp=3", lambda: cs.simulate("dgx-h100-superpod", "gpt3-1.3b", overrides={"parallelism.tp": 3})),
        ("parallelism.pp=5", lambda: cs.simulate("dgx-h100-superpod", "gpt3-1.3b", overrides={"parallelism.pp": 5})),
        ("foo=1", lambda: cs.simulate("dgx-h100-superpod", "gpt3-1.3b", overrides={"foo": 1})),
    ],
)
def test_python_errors_have_the_cli_text(cli: Optional[str], setting: str, python_call: Any) -> None:
    if cli is None:
        pytest.skip("the clustersim command is not built (set CLUSTERSIM_CLI)")
    with pytest.raises(cs.SpecError) as info:
        python_call()
    run = subprocess.run([cli, "simulate", "--cluster", "dgx-h100-superpod", "--workload", "gpt3-1.3b",
                          "--set", setting], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr.strip() == f"error: {info.value}"


def test_topology_info_counts_and_bisection() -> None:
    c = cs.Cluster.preset("dgx-h100-superpod", nodes=4)
    info = c.info()
    assert (info["name"], info["nodes"], info["gpus"]) == ("dgx-h100-superpod", 4, 32)
    # Non-blocking fat-tree: the bisection is half the nodes' NICs at line rate (8 x 400 Gb/s each).
    assert info["bisection_Bps"] == pytest.approx(2 * 8 * 400e9 / 8)
    devices = {d["kind"]: d["count"] for d in info["devices"]}
    assert devices["gpu"] == 32 and devices["nic"] == 32


def test_topology_exports(tmp_path: Path) -> None:
    c = cs.Cluster.preset("dgx-h100-superpod", nodes=2)
    assert set(cs.export_formats()) >= {"simgrid", "dot", "json"}
    exported = json.loads(c.export("json"))
    assert exported["spec"] == c.to_dict()
    assert len(exported["links"]) == c.info()["directed_links"]
    assert c.export("dot").startswith("digraph")
    path = tmp_path / "platform.xml"
    text = c.export("simgrid", path)
    assert path.read_text() == text and "<platform" in text
    with pytest.raises(ValueError, match="formats: "):
        c.export("png")


def test_the_python_key_list_is_the_cores() -> None:
    # Workload.transformer's keywords are the schema's keys of model, model.moe, training, parallelism,
    # read from _core: the same set as the keys the core writes for a spec giving every one of them.
    from clustersim import _core

    schema = cs.workload_schema()
    assert [f["path"] for f in schema] == [f["path"] for f in json.loads(_core.workload_schema())]
    flat = {f["key"] for f in schema if f["section"] in ("model", "model.moe", "training", "parallelism")}
    params = set(inspect.signature(cs.Workload.transformer).parameters) - {"cls", "name", "description"}
    assert params == flat
    assert len(flat) == 55  # model 13, moe 10, training 16, parallelism 16 (model.mla: not keywords)
    w = cs.Workload.transformer(layers=2, hidden=256, heads=4, seq_len=128, vocab=1000, global_batch=8,
                                precision="fp8", kv_heads=2, head_dim=64, experts=4, top_k=2, dp=2, ep=2,
                                torch_compile=True, bucket_size_params=1000, stack="megatron-core",
                                cp_comm="all_gather", shared_experts=1, first_dense_layers=1, token_dropping=True,
                                load_distribution="multinomial", max_nodes_per_token=1,
                                etp=1, mtp_depth=1, optimizer_offload="cpu")
    written = {f"{s}.{k}" for s in ("model", "training", "parallelism") for k in w.get(s) if k != "moe"}
    written |= {f"model.moe.{k}" for k in w.get("model.moe")}
    # every key but attention_type (its "mla" needs the model.mla section, which is not a keyword)
    assert written == {f["path"] for f in schema if f["section"] in ("model", "model.moe", "training", "parallelism")
                       and f["path"] != "model.attention_type"}
    assert w.get("model.ffn_hidden") == 4 * 256  # transformer()'s own convenience default
    # Defaults come from the core: micro_batch 1, bf16, tp 1, the 1f1b schedule.
    d = {f["path"]: f["default"] for f in schema}
    assert (d["training.micro_batch"], d["training.precision"], d["parallelism.tp"]) == (1, "bf16", 1)
    assert d["parallelism.pipeline_schedule"] == "1f1b"
    with pytest.raises(TypeError, match="unexpected keyword arguments: layer"):
        cs.Workload.transformer(layer=2, hidden=256, heads=4, seq_len=128, vocab=1000, global_batch=8)
    with pytest.raises(TypeError, match="missing required keyword arguments: vocab"):
        cs.Workload.transformer(layers=2, hidden=256, heads=4, seq_len=128, global_batch=8)
