"""collective(): simulated nccl-tests from Python: closed forms, nccl-tests' bus factors, the same
rows as ``clustersim collective --json``, and bad input refused like the CLI refuses it."""

from __future__ import annotations

import json
import subprocess
from typing import Optional

import pytest

import clustersim as cs
from clustersim.collective import COLLECTIVE_COLUMNS

GiB = float(1 << 30)


@pytest.fixture(scope="module")
def two_nodes() -> cs.Cluster:
    return cs.Cluster.preset("dgx-h100-superpod", nodes=2)


def test_send_recv_between_nodes_runs_at_the_nic_line_rate(two_nodes: cs.Cluster) -> None:
    # The ideal profile: a 400 Gb/s NIC moves 50 GB/s; each of the 8 GPUs of node 0 sends 1 GiB to
    # its peer on node 1 over its own rail: t = S / 50 GB/s plus the route's microseconds.
    df = cs.collective(two_nodes, "send_recv", sizes=[GiB], peer_offset=8, fidelity="analytical",
                       network_profile="ideal")
    row = df.iloc[0]
    assert row["algorithm"] == "p2p"
    assert row["time_us"] == pytest.approx(GiB / 50e9 * 1e6, rel=1e-3)
    assert row["time_us"] > GiB / 50e9 * 1e6
    assert row["busbw_GBps"] == row["algbw_GBps"]


def test_rows_follow_nccl_tests_definitions(two_nodes: cs.Cluster) -> None:
    df = cs.collective(two_nodes, "all_reduce", ranks=range(16), min_bytes="1M", max_bytes="1G", step_factor=32,
                       fidelity="analytical")
    assert list(df.columns) == list(COLLECTIVE_COLUMNS)
    assert list(df["size_bytes"]) == [2.0**20, 2.0**25, 2.0**30]
    assert list(df["count"]) == [s // 4 for s in (2**20, 2**25, 2**30)]  # float elements
    assert df["algbw_GBps"].tolist() == pytest.approx((df["size_bytes"] / df["time_us"] / 1e3).tolist(), rel=1e-12)
    assert df["busbw_GBps"].tolist() == pytest.approx((df["algbw_GBps"] * 2 * 15 / 16).tolist(), rel=1e-12)
    assert df["time_us"].is_monotonic_increasing
    gather = cs.collective(two_nodes, "all_gather", ranks="0-15", sizes=[GiB], fidelity="analytical")
    assert gather["busbw_GBps"][0] == pytest.approx(gather["algbw_GBps"][0] * 15 / 16, rel=1e-12)


def test_the_protocol_nccl_would_run_is_named(two_nodes: cs.Cluster) -> None:
    # Across 2 DGX H100 nodes (shipped H100 profile, NCCL's protocols): the ring's 8 B all-reduce runs
    # LL (NCCL's 2.7 us network step against Simple's 14) and its 1 GiB all-reduce Simple (LL128
    # would move 1/0.92 as long); send/recv names none.
    df = cs.collective(two_nodes, "all_reduce", ranks="0-15", sizes=[8, GiB], fidelity="analytical", algorithm="ring")
    assert list(df["protocol"]) == ["LL", "Simple"]
    p2p = cs.collective(two_nodes, "send_recv", sizes=[1e6], peer_offset=8, fidelity="analytical")
    assert list(p2p["protocol"]) == [""]


def test_ranks_as_a_list_or_as_text_are_the_same_communicator(two_nodes: cs.Cluster) -> None:
    as_list = cs.collective(two_nodes, ranks=[0, 8, 1, 9], sizes=[1e6, 1e8], fidelity="analytical")
    as_text = cs.collective(two_nodes, ranks="0,8,1,9", sizes=[1e6, 1e8], fidelity="analytical")
    assert as_list.equals(as_text)


def test_the_same_rows_as_the_cli(two_nodes: cs.Cluster, cli: Optional[str]) -> None:
    if cli is None:
        pytest.skip("the clustersim command is not built (set CLUSTERSIM_CLI)")
    args = [cli, "collective", "--cluster", "dgx-h100-superpod", "--set", "nodes=2", "--op", "reduce_scatter",
            "--ranks", "0-15", "--min-bytes", "64K", "--max-bytes", "64M", "--step-factor", "16", "--json"]
    expected = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    df = cs.collective(two_nodes, "reduce_scatter", ranks="0-15", min_bytes="64K", max_bytes="64M", step_factor=16)
    assert df.to_dict("records") == expected


def test_bad_input_is_a_spec_error_naming_the_option(two_nodes: cs.Cluster) -> None:
    with pytest.raises(cs.SpecError) as info:
        cs.collective(two_nodes, ranks=[0, 3, 3])
    assert info.value.file == "--ranks 0,3,3"
    assert info.value.message.startswith("rank 3 appears twice")
    with pytest.raises(cs.SpecError) as info:
        cs.collective(two_nodes, "all_reduce", algorithm="nvls")
    assert str(info.value) == ("--algorithm: communicator 'sweep' (16 ranks): the nvls algorithm cannot run this "
                               "all_reduce: NVLS reduces inside one NVSwitch domain")
    with pytest.raises(cs.SpecError, match="--op all_reduse"):
        cs.collective(two_nodes, "all_reduse")
    with pytest.raises(cs.SpecError, match="applies to --op send_recv only"):
        cs.collective(two_nodes, "all_reduce", peer_offset=2)
    with pytest.raises(cs.SpecError, match="--step-factor 1.0"):
        cs.collective(two_nodes, step_factor=1)


def test_defaults_and_checks_are_the_cores(two_nodes: cs.Cluster) -> None:
    # Python passes only what it is given: the sweep's defaults are the command's (8 B to 128 MiB by 2:
    # 2^3 .. 2^27, 25 sizes), and the module refuses an option it does not know.
    from clustersim import _core

    df = cs.collective(two_nodes, fidelity="analytical")
    assert list(df["size_bytes"]) == [2.0**k for k in range(3, 28)]
    assert set(df["type"]) == {"float"}
    with pytest.raises(cs.SpecError, match="unknown option 'sizez'"):
        _core.collective(*two_nodes._as_core(), {"sizez": [1.0]})
