#!/usr/bin/env python3
"""Fits the shape parameters of the fused-attention kernel model (sim/hardware/kernel_model.cpp, the
`attention` paragraph at the top) to FlashAttention-2's published H100 figures
(calibration/attention/flash-attention-2-h100.json) and prints the fit and held-out residuals.

The model is restated here only to fit its constants (least squares on ln time, Nelder-Mead); the C++
test KernelModel.FlashAttentionFiguresWithinTheirResiduals checks the compiled model against the same
figures. Held out: the causal head-dimension-256 forward and the head-dimension-64 backward figures.
Run from the repository root: python3 bench/fit_attention_shape.py [--rows]
"""
import json
import math
import sys

PEAK_FLOPS = 989.4e12  # H100 SXM5 dense bf16 (the catalogue's)
SMS = 132
# (head_dim_max, forward rows, forward cols, backward rows, backward cols): kFlashBlockShapes
SHAPES = [(64, 128, 128, 128, 128), (128, 128, 64, 64, 128), (256, 64, 64, 64, 64)]
NAMES = ["efficiency", "h_fwd_keys", "d_half", "gamma", "c_diag", "b_bwd", "h_bwd_queries", "alpha"]


def shape(d):
    return next((s for s in SHAPES if d <= s[0]), SHAPES[-1])


def model_s(p, r):
    eff, h_fwd, d_half, gamma, c_diag, b_bwd, h_bwd, alpha = p
    m, n, d, batch = r["m"], r["n"], r["k"], r["batch"]
    causal, backward = r.get("causal", False), r.get("backward", False)
    hd = (d / (d + d_half)) / (128 / (128 + d_half)) * ((128 / d) ** gamma if d > 128 else 1.0)
    offset = max(n - m, 0)
    s = shape(d)
    if not backward:
        rows, cols = s[1], s[2]
        count = math.ceil(m / rows)
        tiles = [math.ceil(min(n, offset + (i + 1) * rows) / cols) if causal else math.ceil(n / cols) for i in range(count)]
        fixed, diagonal, tile_flops = h_fwd / cols, max(1, math.ceil(rows / cols)), 4 * rows * cols * d
    else:
        rows, cols = s[3], s[4]
        count = math.ceil(n / cols)
        tiles = [math.ceil((m - max(0, j * cols - offset)) / rows) if causal else math.ceil(m / rows) for j in range(count)]
        fixed, diagonal, tile_flops = h_bwd / rows, max(1, math.ceil(cols / rows)), 2.5 * 4 * rows * cols * d / b_bwd
    blocks = [t + fixed + ((c_diag - 1) * diagonal if causal else 0.0) for t in tiles]
    tau = tile_flops * SMS / (PEAK_FLOPS * eff * hd)
    if not causal:
        units = math.ceil(count * batch / SMS) * blocks[0]
    else:
        units = max(sum(blocks) * batch / SMS + alpha * max(blocks), max(blocks))
    return units * tau


def held_out(r):
    return (r["k"] == 256 and r.get("causal", False)) or (r["k"] == 64 and r.get("backward", False))


def log_errors(p, rows):
    return [math.log(model_s(p, r) / r["time_s"]) for r in rows]


def nelder_mead(f, x0, iterations=4000):
    pts = [list(x0)] + [[x * 1.2 + 0.05 if i == j else x for j, x in enumerate(x0)] for i in range(len(x0))]
    vals = [f(x) for x in pts]
    for _ in range(iterations):
        order = sorted(range(len(pts)), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(x[j] for x in pts[:-1]) / (len(pts) - 1) for j in range(len(x0))]
        move = lambda t: [cj + t * (cj - wj) for cj, wj in zip(c, pts[-1])]
        xr = move(1.0)
        fr = f(xr)
        if fr < vals[0]:
            xe = move(2.0)
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = move(-0.5)
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                pts = [pts[0]] + [[a + 0.5 * (b - a) for a, b in zip(pts[0], x)] for x in pts[1:]]
                vals = [vals[0]] + [f(x) for x in pts[1:]]
    return pts[0]


def summary(p, rows):
    e = sorted(abs(math.exp(x) - 1) for x in log_errors(p, rows))
    return "%d figures: median |error| %.1f %%, max %.1f %%" % (len(e), 100 * e[len(e) // 2], 100 * e[-1])


def main():
    rows = json.load(open("calibration/attention/flash-attention-2-h100.json"))["measurements"]
    fit = [r for r in rows if not held_out(r)]
    test = [r for r in rows if held_out(r)]
    ok = lambda p: 0 < p[0] < 1 and min(p[1], p[2], p[3], p[6]) >= 0 and p[4] >= 1 and 0 < p[5] <= 1.5 and 0 <= p[7] <= 1
    cost = lambda p: sum(x * x for x in log_errors(p, fit)) if ok(p) else 1e9
    p = [0.4, 90, 20, 0.3, 1.5, 0.85, 250, 0.5]
    for _ in range(3):
        p = nelder_mead(cost, p)
    print("parameters: " + ", ".join("%s %.4g" % (k, v) for k, v in zip(NAMES, p)))
    print("fit:      " + summary(p, fit))
    print("held out: " + summary(p, test))
    if "--rows" in sys.argv:
        for r in rows:
            print("%-34s model / measured %.3f" % (r["id"], model_s(p, r) / r["time_s"]))


if __name__ == "__main__":
    main()
