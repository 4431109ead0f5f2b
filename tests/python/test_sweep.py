"""sweep() and best(): one row per configuration, errors as rows, the same rows whatever runs them
(this thread, threads, a process pool, a local Dask cluster)."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing

import pandas as pd
import pytest

import clustersim as cs
from clustersim.sweep import _OPTIONAL_COLUMNS, RESULT_COLUMNS


@pytest.fixture(scope="module")
def fabric_sweep() -> pd.DataFrame:
    """8 and 32 DGX H100 nodes on a fat-tree that is not rail-optimized, oversubscribed 1:1 to 8:1, with
    ring all-reduces (a fixed algorithm: the default tuner may pick another one per fabric)."""
    cluster = cs.Cluster.preset("dgx-h100-superpod", fabric={"rail_optimized": False})
    return cs.sweep(cluster, "gpt3-1.3b", grid={"nodes": [8, 32], "fabric.oversubscription": [1, 2, 4, 8]},
                    algorithm="ring", progress=False)


def test_one_row_per_configuration_in_grid_order(fabric_sweep: pd.DataFrame) -> None:
    df = fabric_sweep
    # The grid's keys, the report's fields, its power and cost fields (modelled now), the error.
    assert list(df.columns) == ["nodes", "fabric.oversubscription", *RESULT_COLUMNS,
                                *(key for _, key in _OPTIONAL_COLUMNS), "error"]
    assert (df["usd_per_step"] > 0).all() and (df["energy_per_token_j"] > 0).all()
    assert list(zip(df["nodes"], df["fabric.oversubscription"])) == [
        (n, o) for n in (8, 32) for o in (1, 2, 4, 8)]
    assert df["error"].isna().all()
    assert list(df["gpus"]) == [64] * 4 + [256] * 4
    assert (df["tokens_per_s"] * df["step_time_s"]).round().eq(4096 * 2048).all()


def test_oversubscription_never_speeds_a_step_up(fabric_sweep: pd.DataFrame) -> None:
    for _, group in fabric_sweep.groupby("nodes"):
        # Non-blocking is never beaten, and 8:1 is slower for the gradient all-reduce. In between the
        # cost need not grow steadily: at 2:1 a leaf has 42 ports, so nodes straddle two leaves and
        # more of the ring crosses the spines than at 4:1 (48 ports, 6 whole nodes per leaf).
        times = list(group.sort_values("fabric.oversubscription")["step_time_s"])
        assert min(times) == times[0]
        assert times[-1] > times[0]
        exposed = list(group.sort_values("fabric.oversubscription")["exposed_communication_s"])
        assert min(exposed) == exposed[0]


def test_invalid_configurations_are_error_rows_with_the_json_path() -> None:
    df = cs.sweep("dgx-h100-superpod", "gpt3-1.3b",
                  grid={"nodes": [2], "fabric.oversubscription": [0.5, 1], "parallelism.tp": [1, 3]}, n_jobs=1,
                  progress=False)
    assert len(df) == 4
    errors = dict(zip(zip(df["fabric.oversubscription"], df["parallelism.tp"]), df["error"]))
    assert errors[(1, 1)] is None
    assert errors[(0.5, 1)] == ("topologies/presets/dgx-h100-superpod.json: /fabric/oversubscription: "
                                "expected a number >= 1, got 0.5")
    assert errors[(1, 3)] == ("workloads/presets/gpt3-1.3b.json: /parallelism: "
                              "tp * pp * cp = 3 * 1 * 1 = 3 does not divide the 16 GPUs of the cluster")
    bad = df[df["error"].notna()]
    assert bad["step_time_s"].isna().all() and bad["fits"].isna().all()
    assert df["gpus"].dtype == "Int64"  # integer columns stay integer around the holes


def test_out_of_memory_configurations_are_rows_that_do_not_fit() -> None:
    df = cs.sweep("dgx-h100-superpod", "gpt3-1.3b", grid={"nodes": [1], "model.layers": [24, 240]}, n_jobs=1,
                  progress=False)
    assert df["error"].isna().all()
    assert list(df["fits"]) == [True, False]
    assert df["peak_bytes_per_gpu"].iloc[1] > df["capacity_bytes"].iloc[1]


def test_a_list_of_configurations_is_swept_as_given() -> None:
    configs = [{"nodes": 1}, {"nodes": 2, "training.micro_batch": 4}]
    df = cs.sweep("dgx-h100-superpod", "gpt3-1.3b", configs, progress=False)
    assert list(df.columns[:2]) == ["nodes", "training.micro_batch"]
    assert df["training.micro_batch"].isna().iloc[0] and df["training.micro_batch"].iloc[1] == 4
    assert list(df["micro_batches"]) == [4096 // (2 * 8), 4096 // (4 * 16)]


def test_a_key_of_neither_spec_is_refused_before_running() -> None:
    with pytest.raises(cs.SpecError) as info:
        cs.sweep("dgx-h100-superpod", "gpt3-1.3b", grid={"bogus.key": [1]}, progress=False)
    assert "cannot tell which spec 'bogus' belongs to" in info.value.message


def test_threads_processes_and_this_thread_give_the_same_rows(fabric_sweep: pd.DataFrame) -> None:
    cluster = cs.Cluster.preset("dgx-h100-superpod", fabric={"rail_optimized": False})
    grid = {"nodes": [8, 32], "fabric.oversubscription": [1, 2, 4, 8]}
    serial = cs.sweep(cluster, "gpt3-1.3b", grid, n_jobs=1, algorithm="ring", progress=False)
    with cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        processes = cs.sweep(cluster, "gpt3-1.3b", grid, executor=pool, algorithm="ring", progress=False)
    pd.testing.assert_frame_equal(serial, fabric_sweep)
    pd.testing.assert_frame_equal(processes, fabric_sweep)


def test_progress_bar_counts_the_configurations(capsys: pytest.CaptureFixture[str]) -> None:
    cs.sweep("dgx-h100-superpod", "gpt3-1.3b", grid={"nodes": [1, 2, 4]}, n_jobs=1, progress=True)
    err = capsys.readouterr().err
    assert "clustersim sweep" in err and "3/3" in err


def test_a_dask_cluster_runs_the_sweep(fabric_sweep: pd.DataFrame) -> None:
    distributed = pytest.importorskip("distributed")
    cluster = cs.Cluster.preset("dgx-h100-superpod", fabric={"rail_optimized": False})
    grid = {"nodes": [8, 32], "fabric.oversubscription": [1, 2, 4, 8]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as local, distributed.Client(local) as client:
        with distributed.get_task_stream(client) as stream:
            df = cs.sweep(cluster, "gpt3-1.3b", grid, executor=client, algorithm="ring", progress=False)
        ran_on = {task["worker"] for task in stream.data}
        workers = set(client.scheduler_info()["workers"])
    pd.testing.assert_frame_equal(df, fabric_sweep)
    assert len(stream.data) == 8  # every configuration ran as a Dask task ...
    assert ran_on and ran_on <= workers  # ... on the cluster's workers


def test_best_searches_tp_and_pp_for_the_fastest_configuration_that_fits() -> None:
    cluster = cs.Cluster.preset("dgx-h100-superpod", nodes=2)
    workload = cs.Workload.preset("gpt3-1.3b", training={"global_batch": 256})  # short steps
    result = cs.best(cluster, workload, fidelity="analytical", progress=False)
    assert result.found and result.objective == "step_time_s" and result.minimize
    cand = result.candidates
    assert cand["error"].isna().all()  # every layout the arithmetic allows is simulated
    feasible = cand[cand["fits"].fillna(False).astype(bool)]
    assert result.row is not None
    assert result.row["step_time_s"] == feasible["step_time_s"].min() == cand["step_time_s"].iloc[0]
    # Every candidate is a layout of the 16 GPUs, dp derived; tp stays inside a node (8 GPUs), with
    # sequence parallelism; pp divides the 24 layers.
    assert ((cand["parallelism.tp"] * cand["parallelism.pp"] * cand["parallelism.dp"]) == 16).all()
    assert set(cand["parallelism.tp"]) == {1, 2, 4, 8} and set(cand["parallelism.pp"]) == {1, 2, 4, 8}
    assert list(cand["tp"]) == list(cand["parallelism.tp"]) and list(cand["pp"]) == list(cand["parallelism.pp"])
    assert cand.loc[cand["parallelism.tp"] > 1, "parallelism.sequence_parallel"].astype(bool).all()
    # The winner's workload simulates to the winner's row.
    assert result.workload is not None and result.parameters is not None
    again = cs.simulate(cluster, result.workload, fidelity="analytical")
    assert again.step_time_s == result.row["step_time_s"]
    assert (again.run.tp, again.run.pp) == (result.parameters["parallelism.tp"], result.parameters["parallelism.pp"])
    assert result.workload["training.micro_batch"] == result.parameters["training.micro_batch"]
    # The cheapest configuration: dollars per million tokens, from the cost model.
    cheapest = cs.best(cluster, workload, objective="usd_per_million_tokens", fidelity="analytical",
                       candidates=[{"parallelism.tp": tp} for tp in (1, 2, 4)], progress=False)
    assert cheapest.row is not None
    assert cheapest.row["usd_per_million_tokens"] == cheapest.candidates["usd_per_million_tokens"].min()


def test_best_respects_memory_recomputes_only_what_does_not_fit_and_the_objective_direction() -> None:
    # 72 layers of GPT-3 1.3B's width on one DGX H100: data parallel with large micro-batches and no
    # recompute, the activations do not fit in 80 GB. (A small global batch keeps the runs short;
    # memory per GPU does not depend on it.)
    big = cs.Workload.preset("gpt3-1.3b").updated({"model.layers": 72, "training.global_batch": 256})
    result = cs.best("dgx-h100", big, objective="tokens_per_s", fidelity="analytical", progress=False)
    cand = result.candidates
    ran = cand[cand["error"].isna()]
    assert not ran["fits"].all() and ran["fits"].any()  # the search crossed the memory wall
    assert result.row is not None and bool(result.row["fits"])
    assert result.row["tokens_per_s"] == ran[ran["fits"].astype(bool)]["tokens_per_s"].max()
    faster = ran[ran["tokens_per_s"] > result.row["tokens_per_s"]]
    assert len(faster) > 0 and not faster["fits"].any()  # every faster candidate runs out of memory
    assert list(cand["tokens_per_s"].iloc[: len(ran[ran["fits"].astype(bool)])]) == sorted(
        ran[ran["fits"].astype(bool)]["tokens_per_s"], reverse=True)  # feasible ones first, best first
    # Recomputation is tried only on the layouts that did not fit without it, selective before full.
    layout = ["parallelism.tp", "parallelism.pp", "training.micro_batch"]
    key = lambda df: set(map(tuple, df[layout].to_numpy().tolist()))  # noqa: E731
    none, selective, full = (cand[cand["training.recompute"] == r] for r in ("none", "selective", "full"))
    assert key(selective) == key(none[~none["fits"].astype(bool)])
    assert key(full) == key(selective[~selective["fits"].astype(bool)])
    with pytest.raises(ValueError, match="minimize"):
        cs.best("dgx-h100", big, objective="compute_s", candidates=[{"training.micro_batch": 1}], progress=False)
