"""workloads/traces/corpus/step_breakdown.py: where the recorded step of a tensor-parallel world goes.

A hand-made two-rank world with a host stall (closed form), then ASTRA-sim's real 8-rank Megatron TP-8
world on A100 (docs/traces.md, "A host-bound world"), whose kernels alone make 184 ms of its ~600 ms step.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "workloads" / "traces" / "corpus"
SCRIPT = CORPUS / "step_breakdown.py"


def _breakdown(files: List[Path]) -> Dict[str, Any]:
    out = subprocess.run([sys.executable, str(SCRIPT), "--json", *map(str, files)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def _kernel(name: str, ts: float, dur: float, corr: int, stream: int) -> List[Dict[str, Any]]:
    """A kernel and its launch (a cudaLaunchKernel of 10 us ending when the kernel could first start)."""
    return [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts - 10, "dur": 10,
             "pid": 1, "tid": 1, "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": stream,
             "args": {"correlation": corr, "stream": stream}}]


def test_a_hand_made_host_stall_is_on_the_critical_path(tmp_path: Path) -> None:
    # Rank 0: gemm 0-1000, all-reduce 1 at 1000 (spins until rank 1 arrives at 1100, moves 200 us: ends 1300),
    # a host stall: gemm 2 launched at 4300 (GPU idle 1300-4300, 3000 us), 4300-4800, all-reduce 2 at 4800
    # (last to arrive, 100 us). Rank 1: gemm 0-1100, all-reduce 1 at 1100 (last, 200 us), gemm 1300-1900,
    # all-reduce 2 from 1900, spinning until rank 0 arrives, ending 4900.
    ar = "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
    ranks = [
        _kernel("gemm", 0, 1000, 1, 7) + _kernel(ar, 1000, 300, 2, 24) + _kernel("gemm", 4300, 500, 3, 7) +
        _kernel(ar, 4800, 100, 4, 24),
        _kernel("gemm", 0, 1100, 1, 7) + _kernel(ar, 1100, 200, 2, 24) + _kernel("gemm", 1300, 600, 3, 7) +
        _kernel(ar, 1900, 3000, 4, 24),
    ]
    files = []
    for r, events in enumerate(ranks):
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": -20, "dur": 4920,
                       "pid": 1, "tid": 1})
        f = tmp_path / f"rank{r}.json.gz"
        with gzip.open(f, "wt") as out:
            json.dump({"distributedInfo": {"rank": r, "world_size": 2}, "traceEvents": events}, out)
        files.append(f)
    b = _breakdown(files)
    assert b["collectives"] == 2
    # Transfers: the last rank to arrive's NCCL kernel, rank 1's 200 us then rank 0's 100 us.
    assert b["transfer_us"] == 300
    # Slowest compute per segment: max(1000, 1100) + max(500, 600) + 0 after the last all-reduce.
    assert b["critical_compute_us"] == 1700
    assert b["critical_path_compute_only_us"] == 2000
    # Slowest arrival per segment: max(1000, 1100) + max(4800 - 1300, 1900 - 1300) = 1100 + 3500.
    assert b["critical_arrival_us"] == 4600
    assert b["critical_path_recorded_us"] == 4900  # both ranks' GPU span, 0 .. 4900
    assert [r["gpu_span_us"] for r in b["ranks"]] == [4900, 4900]
    assert [r["compute_us"] for r in b["ranks"]] == [1500, 1700]
    assert [r["nccl_us"] for r in b["ranks"]] == [400, 3200]
    assert [r["host_idle_us"] for r in b["ranks"]] == [3000, 0]  # rank 0's stall: 4300 - 1300


def test_the_real_megatron_tp8_world_is_host_bound() -> None:
    files = [CORPUS / "astra_megatron_tp8" / f"rank{r}.json.gz" for r in range(8)]
    b = _breakdown(files)
    assert b["collectives"] == 84
    steps = [r["step_us"] for r in b["ranks"]]
    # ProfilerStep#3 of the eight ranks: 588.8 to 625.7 ms (their host clocks end the step apart).
    assert 588e3 < min(steps) and max(steps) < 626e3
    # Each rank computes 131.5 to 133.7 ms; the 84 transfers take 50.2 ms (81 x 64 MiB fp16 at ~0.6 ms).
    for r in b["ranks"]:
        assert 131e3 < r["compute_us"] < 134e3
    assert abs(b["transfer_us"] - 50.2e3) < 0.1e3
    # Kernels alone: 133.8 + 50.2 = 184.0 ms, the replay's step; with the ranks' late launches the critical
    # path is 597.3 ms, inside the ranks' GPU spans (595.2 to 630.6 ms): the breakdown closes.
    assert abs(b["critical_path_compute_only_us"] - 184.0e3) < 0.1e3
    recorded = b["critical_path_recorded_us"]
    assert abs(recorded - 597.3e3) < 0.1e3
    assert min(r["gpu_span_us"] for r in b["ranks"]) - 1e3 < recorded < max(r["gpu_span_us"] for r in b["ranks"])
    # Ranks 0 and 6 leave their GPU idle for want of a launch for 221 and 207 ms; the others wait in NCCL.
    idle = [r["host_idle_us"] for r in b["ranks"]]
    assert idle[0] > 200e3 and idle[6] > 200e3
    assert all(i < 70e3 for k, i in enumerate(idle) if k not in (0, 6))



def test_python_replays_the_world_with_its_measured_host() -> None:
    import clustersim as cs

    cluster = cs.Cluster.preset("dgx-a100-superpod", nodes=1)
    w = cs.Workload.from_dict({"name": "megatron_tp8", "trace": {"format": "pytorch", "step": 3,
                                                                  "path": str(CORPUS / "astra_megatron_tp8")}})
    gpu = cs.simulate(cluster, w, fidelity="analytical")
    host = cs.simulate(cluster, w, fidelity="analytical", trace_host="measured")
    # The GPU alone: the kernels' critical path, 184.0 ms (above), within 5 %.
    assert abs(gpu.step_time_s - 0.1840) < 0.05 * 0.1840
    # With the launches: the recorded steps, 588.8 to 625.7 ms, within 5 %.
    assert 0.95 * 0.5888 < host.step_time_s < 1.05 * 0.6257
    assert cs.simulate(cluster, w, fidelity="analytical", trace_host="none").step_time_s == gpu.step_time_s
    with pytest.raises(cs.SpecError, match="--trace-host"):
        cs.simulate(cluster, w, fidelity="analytical", trace_host="always")
