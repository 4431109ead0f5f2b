"""The GEMM model of the GPUs without a calibration profile (issue 22) against the published GEMM
microbenchmarks of each (calibration/data/published/microbench.json; sources in calibration/data/README.md).
Nothing here is fitted: these GPUs carry the H100 profile's kernel-model values as "assumed" figures
(sim/hardware/README.md), so each table is a held-out check. Target (issue 22): median |TFLOP/s error|
<= 10 % where a published microbenchmark exists. The measured medians are asserted with a tolerance of
one point, so a model change that moves them shows here; where the target is not met the test says so
(docs/validation.md, "GEMM model of the new GPUs")."""

from __future__ import annotations

from pathlib import Path

import pytest

import clustersim as cs

DATA = Path(__file__).resolve().parents[2] / "calibration" / "data"
TABLE = "published/microbench.json"


def _errors(gpu: str, ids: str) -> "object":
    # the GPU's shipped calibration profile where it has one (H200), else the catalogue's assumed values
    profile = gpu if gpu == "h200-sxm-141gb" else None
    errors = cs.kernel_errors(profile, [f"{TABLE}#{ids}"], gpu=gpu, data_dir=DATA)
    assert set(errors["metric"]) == {"throughput"}
    return errors


def _median(errors: "object") -> float:
    return float(errors["error"].abs().median())


def test_gb200_cublaslt_fp8_table_misses_by_its_power_cap_and_launch_cost() -> None:
    # Azure ND GB200 v6, cuBLASLt fp8, 9 shapes (micro-0169..0177). Measured median |error| 22.7 %:
    # the 10 % target is NOT met. The misses are systematic: the large squares are predicted 19-30 %
    # fast (measured 2.88-2.91 PFLOP/s at 8192^3-16384^3, 58 % of the 5 PFLOP/s dense peak, and
    # 32768^3 falls to 2.83: the clock under the power cap; the model keeps fp8 at the boost clock with
    # the H100's tensor_fp8_power_ratio), the small ones 25-35 % slow (1024^3 ran in 4.4 us a call,
    # less than the H100 profile's 4.5 us gemm_launch_us alone).
    errors = _errors("gb200", "micro-0169..micro-0177")
    assert len(errors) == 9
    assert _median(errors) == pytest.approx(0.227, abs=0.01)
    by_m = dict(zip(errors["m"], errors["error"]))
    assert by_m[8192] > 0.15 and by_m[16384] > 0.15 and by_m[32768] > 0.25  # too fast (no throttle)
    assert by_m[1024] < -0.2 and by_m[2048] < -0.2  # too slow (the per-call fixed cost)
    tflops = dict(zip(errors["m"], errors["flops"] / errors["time_s"] / 1e12))
    assert tflops[32768] < tflops[16384]  # the measured rate falls at the largest size ...
    predicted = dict(zip(errors["m"], errors["flops"] / errors["predicted_s"] / 1e12))
    assert predicted[32768] > predicted[16384]  # ... while the model's rises (wave quantization only)


def test_gb200_cublaslt_fp4_table() -> None:
    # Azure ND GB200 v6, cuBLASLt FP4, 8 shapes (micro-0178..0185), read as nvfp4 (half-byte operands,
    # bf16 output) at the catalogue's 10 PFLOP/s dense peak with the fp8 efficiency: median 15.1 %,
    # the target NOT met; large squares 4-16 % slow (7.5-7.6 PFLOP/s measured, 75 % of the peak, where
    # the H100's fp8 efficiency gives 0.73 x peak), small ones 22-40 % fast.
    errors = _errors("gb200", "micro-0178..micro-0185")
    assert len(errors) == 8
    assert set(errors["precision"]) == {"nvfp4"}
    assert _median(errors) == pytest.approx(0.151, abs=0.01)


@pytest.mark.parametrize(
    "gpu, ids, median",
    [
        # mamf-finder's best bf16 and fp8 shapes (stas00/ml-engineering), one of each per GPU
        ("b200", "micro-0063,micro-0072", 0.102),  # bf16 -1.5 %, fp8 -18.9 %: just outside the target
        ("b300", "micro-0062,micro-0073", 0.181),  # bf16 -17.3 %, fp8 -19.0 %: target not met
        ("gb200", "micro-0065,micro-0075", 0.185),  # bf16 -8.2 %, fp8 -28.8 %: target not met
        ("h200-sxm-141gb", "micro-0074", 0.276),  # fp8 -27.6 % with the H200 profile (not in its fit)
    ],
)
def test_best_shape_searches(gpu: str, ids: str, median: float) -> None:
    errors = _errors(gpu, ids)
    assert len(errors) == len(ids.split(","))
    assert _median(errors) == pytest.approx(median, abs=0.01)
    # the best-shape searches find shapes the model's tile set does not favour: it is never too fast
    assert (errors["error"] < 0.01).all()


def test_amd_rows_are_the_fit_not_a_validation() -> None:
    # MI300X, MI325X, MI355X: their one published GEMM row each (mamf-finder bf16) set
    # gemm_max_efficiency (sim/hardware/README.md), so the model reproduces them by construction; no
    # second published GEMM table by shape was found for them (docs/validation.md), so the 10 % target
    # cannot be measured on AMD yet.
    for gpu, record in (("mi300x", "micro-0068"), ("mi325x", "micro-0067"), ("mi355x", "micro-0066")):
        errors = _errors(gpu, record)
        assert len(errors) == 1
        assert abs(errors["error"].iloc[0]) < 0.005
