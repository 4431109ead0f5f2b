"""Serving validation against TensorRT-LLM's published in-flight saturation throughput (issue 20, target 1):
bench/bench_serving_saturation.py's 60 rows (calibration/validation/serving/trtllm-inflight.json;
docs/serving.md, "Validation: saturation throughput").

Measured on this commit (predicted / published - 1, 60 rows, every published request simulated): median
|error| 6.5 %, MAPE 6.5 %, bias -1.5 %; per GPU: H100 median 6.7 % (bias -4.8 %), H200 6.3 % (+1.9 %);
per model: 8B 9.1 %, 70B 4.5 %, 405B 5.1 %; worst rows -16.0 % (8B H100 2048/128) and +15.9 % (405B H100
128/4096). Nothing is fitted to these rows. Tolerances: the measured figures + 2 points (median, MAPE),
|bias| within 5 %, every row within 20 % (worst measured 16.0 %); the issue's target (median <= 10 %)
is met with room.
"""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_serving_saturation",
                                                  REPO / "bench" / "bench_serving_saturation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def saturation():
    bench = _bench()
    results = bench.run()
    return results, bench.summarize(results)


def test_serving_saturation_rows_map_every_published_in_flight_record(saturation):
    results, _ = saturation
    assert len(results) == 60
    assert {r["gpu"] for r in results} == {"h100-sxm5-80gb", "h200-sxm-141gb"}
    assert {r["model"] for r in results} == {"Llama 3.1 8B", "Llama 3.3 70B", "Llama 3.1 405B"}
    # Every published request is simulated and finishes (run_row raises otherwise); GUARANTEED_NO_EVICT:
    # no preemption.
    assert sum(r["requests"] for r in results) == 6 * 30000 + 6 * 1000 + 24 * 3000 + 24 * 1500
    assert all(r["preemptions"] == 0 for r in results)


def test_serving_saturation_error_against_published_throughput(saturation):
    results, summary = saturation
    s = summary["all"]
    assert s["median_abs_error"] <= 0.065 + 0.02
    assert s["mape"] <= 0.065 + 0.02
    assert abs(s["bias"]) <= 0.05
    for gpu in ("h100-sxm5-80gb", "h200-sxm-141gb"):
        assert summary["by_gpu"][gpu]["median_abs_error"] <= 0.10, gpu
    worst = max(results, key=lambda r: abs(r["predicted"] / r["published"] - 1))
    assert abs(worst["predicted"] / worst["published"] - 1) <= 0.20, worst
    # The statistics are what their definitions say (error = predicted / published - 1).
    errors = [r["predicted"] / r["published"] - 1 for r in results]
    assert s["median_abs_error"] == pytest.approx(statistics.median(abs(e) for e in errors))
    assert s["bias"] == pytest.approx(statistics.fmean(errors))
