#!/usr/bin/env python3
"""gpt_train_step: single-GPU GPT training steps, timed, with their peak allocated memory.

The training loop that the project's device validation rows (calibration/validation/data/*_device.json)
were measured with, written like Megatron-LM's defaults but run in PyTorch eager:

- bf16 weights and activations; fp32 main gradients (each allocated in the backward pass when the
  parameter's bf16 gradient is ready, accumulated over the micro-batches, freed after the optimizer
  step); fp32 master weights; fused AdamW on the master weights, copied back to bf16 after the step;
- SDPA attention with a causal mask (PyTorch picks flash attention for bf16 on sm_80+);
- learned positions, tied input/output embedding, LayerNorm, a GeLU MLP, no dropout, no bias-dropout
  fusion; the loss is F.cross_entropy of fp32 logits;
- full recompute (`--recompute full`) keeps only each layer's input (torch.utils.checkpoint).

Step time: the median over the timed steps after warm-up, host clock between synchronizations.
Peak memory: torch.cuda.max_memory_allocated over the timed steps (no CUDA context, no caching
allocator reserve). Writes one JSON object: "about", "device", "records" (the rows' format of
calibration/validation/data/h100_device.json).

    python3 gpt_train_step.py --out steps.json                 # the default rows
    python3 gpt_train_step.py --rows gpt-1.3b:4:4:none,gpt-6.7b:1:1:full --out steps.json
    python3 gpt_train_step.py --rows gpt-350m:4:4:none --trace-dir traces --out steps.json

Needs PyTorch 2.1+ (register_post_accumulate_grad_hook) and a CUDA GPU.
"""
import argparse
import datetime
import gc
import json
import platform
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

# name: (layers, hidden, heads, ffn); the GPT-3 paper's shapes (arXiv 2005.14165, Table 2.1).
MODELS = {
    "gpt-350m": (24, 1024, 16, 4096),
    "gpt-760m": (24, 1536, 16, 6144),
    "gpt-1.3b": (24, 2048, 16, 8192),
    "gpt-2.7b": (32, 2560, 32, 10240),
    "gpt-6.7b": (32, 4096, 32, 16384),
}
SEQ, VOCAB = 2048, 50304

# model:micro_batch:global_batch:recompute
DEFAULT_ROWS = (
    "gpt-350m:1:1:none,gpt-350m:4:4:none,gpt-350m:8:8:none,gpt-760m:1:1:none,gpt-760m:4:4:none,"
    "gpt-1.3b:1:1:none,gpt-1.3b:2:2:none,gpt-1.3b:4:4:none,gpt-1.3b:8:8:full,gpt-1.3b:2:16:none,"
    "gpt-2.7b:1:1:none,gpt-2.7b:2:2:none"
)


class Block(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, layers, hidden, heads, ffn, recompute):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, hidden)
        self.wpe = nn.Embedding(SEQ, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, ffn) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.recompute = recompute

    def forward(self, tokens, targets):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.recompute else block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))


def write_trace(step, path, shapes=True):
    """One profiled step after the timed ones (torch.profiler: CPU and CUDA activities, shapes), as a
    gzip-compressed Kineto trace whose ProfilerStep#1 is the step: what `clustersim calibrate
    --from-trace` reads. Not timed: the profiler slows the host."""
    from torch.profiler import ProfilerActivity, profile, schedule

    def ready(prof):
        prof.export_chrome_trace(path[: -len(".gz")])

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=shapes,
                 schedule=schedule(wait=0, warmup=1, active=1), on_trace_ready=ready) as prof:
        for _ in range(2):
            step()
            torch.cuda.synchronize()
            prof.step()
    import gzip
    import os
    import shutil

    with open(path[: -len(".gz")], "rb") as raw, gzip.open(path, "wb", compresslevel=9) as packed:
        shutil.copyfileobj(raw, packed)
    os.remove(path[: -len(".gz")])


def run_row(model_name, mb, gb, recompute, warmup, steps, trace_dir=None, compiled=False, trace_shapes=True):
    layers, hidden, heads, ffn = MODELS[model_name]
    gc.collect()
    torch.cuda.empty_cache()
    allocated_before = torch.cuda.memory_allocated()  # what an earlier row left (0 when all was freed)
    torch.manual_seed(0)
    with torch.device("cuda"):  # initialized on the GPU: a 6.7B model's CPU init takes minutes
        model = Gpt(layers, hidden, heads, ffn, recompute == "full").to(torch.bfloat16)
    forward = torch.compile(model) if compiled else model  # the parameters stay the module's
    params = [p for p in model.parameters()]
    master = [p.detach().float().requires_grad_() for p in params]
    main_grad = [None] * len(params)

    def hook(i):
        def accumulate(p):
            if main_grad[i] is None:
                main_grad[i] = p.grad.float()
            else:
                main_grad[i].add_(p.grad)
            p.grad = None

        return accumulate

    for i, p in enumerate(params):
        p.register_post_accumulate_grad_hook(hook(i))
    optimizer = torch.optim.AdamW(master, lr=1e-4, fused=True)
    tokens = torch.randint(0, VOCAB, (mb, SEQ), device="cuda")
    targets = torch.randint(0, VOCAB, (mb, SEQ), device="cuda")

    def step():
        for _ in range(gb // mb):
            forward(tokens, targets).backward()
        for m, g in zip(master, main_grad):
            m.grad = g
        optimizer.step()
        with torch.no_grad():
            for p, m in zip(params, master):
                p.copy_(m)
        for i in range(len(main_grad)):
            main_grad[i] = None
        for m in master:
            m.grad = None

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated()
    row_id = f"{model_name}-mb{mb}-gb{gb}" + ("-full" if recompute == "full" else "") + ("-compile" if compiled else "")
    if trace_dir:
        try:
            write_trace(step, f"{trace_dir}/{row_id}.json.gz", trace_shapes)
        except Exception:  # the timed row stands without its trace
            traceback.print_exc()
    row = {
        "id": row_id,
        "gpus": 1,
        "model": model_name,
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "ffn": ffn,
        "seq": SEQ,
        "vocab": VOCAB,
        "mb": mb,
        "gb": gb,
        "recompute": recompute,
        "torch_compile": compiled,
        "step_ms": round(statistics.median(times) * 1e3, 1),
        "peak_gib": round(peak / 2**30, 2),
        "parameters": sum(p.numel() for p in params),
        "step_ms_min_max": [round(min(times) * 1e3, 1), round(max(times) * 1e3, 1)],
        "allocated_before_gib": round(allocated_before / 2**30, 3),
    }
    del optimizer, model, forward, params, master, main_grad
    torch.cuda.empty_cache()
    return row


def device_description():
    p = torch.cuda.get_device_properties(0)
    d = {
        "name": p.name,
        "sm_count": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
    }
    try:
        d["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,power.limit,clocks.max.sm,clocks.max.mem", "--format=csv"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/cpuinfo") as f:
            d["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default=DEFAULT_ROWS, help="model:micro_batch:global_batch:recompute,...")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--out", default="-")
    ap.add_argument("--trace-dir", help="also write a profiler trace of one step per row here (ROW_ID.json.gz)")
    ap.add_argument("--no-trace-shapes", action="store_true", help="traces without record_shapes (less host overhead)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (default inductor mode); ids end in -compile")
    a = ap.parse_args()
    if a.trace_dir:
        import os

        os.makedirs(a.trace_dir, exist_ok=True)
    rows = []
    for item in a.rows.split(","):
        name, mb, gb, recompute = item.split(":")
        if name not in MODELS or recompute not in ("none", "full") or int(gb) % int(mb):
            sys.exit(f"bad row {item!r}: model one of {sorted(MODELS)}, recompute none|full, global batch a multiple of micro")
        try:
            row = run_row(name, int(mb), int(gb), recompute, a.warmup, a.steps, a.trace_dir, a.compile,
                          not a.no_trace_shapes)
        except torch.cuda.OutOfMemoryError:
            print(f"{item}: out of memory", file=sys.stderr)
            continue
        except Exception:  # one row's failure leaves the others' measurements
            traceback.print_exc()
            continue
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    out = {
        "about": __doc__.split("\n\n")[1].replace("\n", " "),
        "date": datetime.date.today().isoformat(),
        "device": device_description(),
        "records": rows,
    }
    text = json.dumps(out, indent=1) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
