#!/usr/bin/env python3
"""Cuts a PyTorch profiler (Kineto) trace down to one training step, for the trace corpus.

    cut_trace.py INPUT OUTPUT.json.gz [--step N | --last] [--drop-args "Call stack,Module Hierarchy"]

Keeps the trace's metadata (distributedInfo, deviceProperties, "M" events), every CPU-side event
that overlaps ProfilerStep#N (the last step with --last, the default), and every GPU event whose
launch (the cuda_runtime / cuda_driver event of the same correlation) lies inside that step. The
event order of the file is kept. Large argument strings nobody reads (Python call stacks) can be
dropped. INPUT may be gzip-compressed; OUTPUT is written gzip-compressed when it ends in .gz.
"""
import argparse
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--step", type=int, help="the N of ProfilerStep#N (default: the last step)")
    ap.add_argument("--drop-args", default="Call stack,Module Hierarchy", help="comma-separated arg names to drop")
    a = ap.parse_args()

    doc = load(a.input)
    events = doc["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("cat") in ("cpu_op", "user_annotation")]
    if not steps:
        sys.exit(f"{a.input}: no ProfilerStep#N events")
    if a.step is None:
        step = max(steps, key=lambda e: e["ts"])
    else:
        matches = [e for e in steps if e["name"] == f"ProfilerStep#{a.step}"]
        if not matches:
            sys.exit(f"{a.input}: no ProfilerStep#{a.step} (has {', '.join(e['name'] for e in steps)})")
        step = matches[0]
    begin, end = step["ts"], step["ts"] + step["dur"]

    launches = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "args" in e and "correlation" in e["args"]:
            launches[e["args"]["correlation"]] = e["ts"]
    gpu_cats = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
    drop = {k for k in a.drop_args.split(",") if k}
    kept = []
    for e in events:
        ph = e.get("ph")
        if ph == "M":
            kept.append(e)
            continue
        ts, dur = e.get("ts"), e.get("dur", 0) or 0
        if ts is None:
            continue
        if e.get("cat") in gpu_cats:
            launch = launches.get((e.get("args") or {}).get("correlation"))
            inside = begin <= (launch if launch is not None else ts) <= end
        else:
            inside = ts <= end and ts + dur >= begin
        if not inside:
            continue
        if drop and isinstance(e.get("args"), dict):
            e = dict(e, args={k: v for k, v in e["args"].items() if k not in drop})
        kept.append(e)
    out = {k: v for k, v in doc.items() if k != "traceEvents"}
    out["traceEvents"] = kept
    text = json.dumps(out, separators=(",", ":"))
    if a.output.endswith(".gz"):
        with gzip.GzipFile(a.output, "wb", compresslevel=9, mtime=0) as f:
            f.write(text.encode("utf-8"))
    else:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    print(f"{a.output}: {step['name']}, {len(kept)} of {len(events)} events")


if __name__ == "__main__":
    main()
