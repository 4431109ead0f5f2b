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


def test_gb200_cublaslt_fp8_table_is_slower_than_its_own_fp4_table_allows() -> None:
    # Azure ND GB200 v6, cuBLASLt fp8 (CUDA 12.8), 9 shapes (micro-0169..0177). Measured median |error|
    # 24.6 % (22.7 % before the Blackwell epilogue overlap): the 10 % target is NOT met. The large squares
    # are predicted 25-32 % fast: they ran at 2.83-2.91 PFLOP/s, 58 % of the 5 PFLOP/s dense peak, where
    # the same machine's FP4 table (below) sustains 75 % of its peak and mamf-finder's fp8 best shape on a
    # newer stack (cu130) 72 %; not the power cap (FP4, at 2.6x the flop rate on the same GPUs, holds its
    # rate to 32768^3), but that stack's fp8 kernels. The small ones are 21-28 % slow: 1024^3 ran in
    # 4.4 us a call, less than the H100 profile's 4.46 us gemm_launch_us alone.
    errors = _errors("gb200", "micro-0169..micro-0177")
    assert len(errors) == 9
    assert _median(errors) == pytest.approx(0.246, abs=0.01)
    by_m = dict(zip(errors["m"], errors["error"]))
    assert by_m[8192] > 0.2 and by_m[16384] > 0.2 and by_m[32768] > 0.25  # too fast
    assert by_m[1024] < -0.2 and by_m[2048] < -0.2  # too slow (the per-call fixed cost)
    tflops = dict(zip(errors["m"], errors["flops"] / errors["time_s"] / 1e12))
    assert tflops[32768] < tflops[16384]  # the measured rate falls at the largest size ...
    predicted = dict(zip(errors["m"], errors["flops"] / errors["predicted_s"] / 1e12))
    assert predicted[32768] > predicted[16384]  # ... while the model's rises (wave quantization only)


def test_gb200_cublaslt_fp4_table() -> None:
    # Azure ND GB200 v6, cuBLASLt FP4, 8 shapes (micro-0178..0185), read as nvfp4 (half-byte operands,
    # bf16 output) at the catalogue's 10 PFLOP/s dense peak with the fp8 efficiency (0.748, the H100
    # profile's): median 6.0 % (15.1 % before the epilogue overlap), the target met on this table. The
    # large squares within 5 % (7.5-7.6 PFLOP/s measured, 75 % of the peak), the operand-bound
    # 802816 x 192 x 768 +7.3 %; the three one-wave shapes 44-52 % fast: FP4 calls cost about 6.5 us
    # each (1024^3 in 7.5 us, 2048^3 in 10.2 us), more than the 4.46 us gemm_launch_us and more than
    # the same machine's fp8 calls (about 2.5 us): a per-call cost by dtype, which the model lacks.
    errors = _errors("gb200", "micro-0178..micro-0185")
    assert len(errors) == 8
    assert set(errors["precision"]) == {"nvfp4"}
    assert _median(errors) == pytest.approx(0.060, abs=0.01)
    by_m = dict(zip(zip(errors["m"], errors["n"]), errors["error"]))
    for size in (4096, 8192, 16384, 32768):
        assert abs(by_m[(size, size)]) < 0.05
    assert by_m[(1024, 1024)] > 0.4 and by_m[(1024, 2145)] > 0.4  # the per-call cost of FP4


@pytest.mark.parametrize(
    "gpu, ids, median",
    [
        # mamf-finder's best bf16 and fp8 shapes (stas00/ml-engineering), one of each per GPU; on
        # Blackwell the store of C overlaps the main loop (kernel_model.cpp): before that they were
        # B200 10.2 % (-1.5, -18.9 %), B300 18.1 % (-17.3, -19.0 %), GB200 18.5 % (-8.2, -28.8 %)
        ("b200", "micro-0063,micro-0072", 0.068),  # bf16 +7.8 %, fp8 -5.8 %: target met
        ("b300", "micro-0062,micro-0073", 0.100),  # bf16 +6.1 %, fp8 -14.0 %: at the target (10.04 %)
        ("gb200", "micro-0065,micro-0075", 0.045),  # bf16 +5.1 %, fp8 -3.9 %: target met
        ("h200-sxm-141gb", "micro-0074", 0.276),  # fp8 -27.6 % with the H200 profile (not in its fit)
    ],
)
def test_best_shape_searches(gpu: str, ids: str, median: float) -> None:
    errors = _errors(gpu, ids)
    assert len(errors) == len(ids.split(","))
    assert _median(errors) == pytest.approx(median, abs=0.01)
    # the fp8 best shapes are predicted slow (a search finds the shapes the library runs best)
    fp8 = errors[errors["precision"] == "fp8"]
    assert len(fp8) == 1 and (fp8["error"] < 0.0).all()


def test_amd_rows_are_the_fit_not_a_validation() -> None:
    # MI300X, MI325X, MI355X: their one published GEMM row each (mamf-finder bf16) set
    # gemm_max_efficiency (sim/hardware/README.md), so the model reproduces them by construction; no
    # second published GEMM table by shape was found for them (docs/validation.md), so the 10 % target
    # cannot be measured on AMD yet.
    for gpu, record in (("mi300x", "micro-0068"), ("mi325x", "micro-0067"), ("mi355x", "micro-0066")):
        errors = _errors(gpu, record)
        assert len(errors) == 1
        assert abs(errors["error"].iloc[0]) < 0.005
