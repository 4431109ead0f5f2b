#!/usr/bin/env python3
"""Serving validation: TensorRT-LLM's published in-flight saturation throughput (issue 20, target 1).

Every row of calibration/data/published/serving_throughput.json with batching "in-flight" (60 rows:
Llama 3.1 8B / 3.3 70B / 3.1 405B, fp8, DGX H100 and DGX H200, tp 1..8, fixed input/output lengths,
every request queued at once) becomes a serving run, as calibration/validation/serving/
trtllm-inflight.json says (the model shapes from the released configs, fp8 weights and KV cache, one
replica of tp GPUs, the inflight scheduler with TensorRT-LLM's default limits, the cluster preset of
the GPU): a burst of N requests at t = 0 with exactly ISL prompt and OSL output tokens, served by
clustersim.serve. The predicted saturation throughput is the run's output tokens / makespan, compared
with the published Total Output Throughput. Nothing here is fitted to these rows.

N is the published run's request count (1000..30000), not capped: the 60 runs take about 4 s together
(docs/serving.md, "Validation: saturation throughput").

    PYTHONPATH=build/python .venv/bin/python bench/bench_serving_saturation.py [--json out.json]
                                                  [--markdown] [--limit N] [--scheduler continuous]

Statistics: error = predicted / published - 1; median |error|, MAPE and bias (mean error) over all rows,
per GPU and per model; the worst rows by |error|.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
MAPPING = os.path.join(REPO, "calibration", "validation", "serving", "trtllm-inflight.json")


def load_mapping(path=MAPPING):
    with open(path) as f:
        mapping = json.load(f)
    data_path = os.path.normpath(os.path.join(os.path.dirname(path), mapping["data"]))
    with open(data_path) as f:
        records = json.load(f)
    rows = [r for r in records if all(r.get(k) == v for k, v in mapping["select"].items())]
    return mapping, rows


def scheduler(mapping, row, name=None):
    """The mapping's scheduler, or the policy `name` (a comparison: --scheduler). Under a policy that
    serves whole prompts only (static, continuous), a prompt longer than max_batch_tokens would be
    rejected: that row runs chunked_prefill."""
    s = dict(mapping["scheduler"])
    if name:
        s["name"] = name
        if name in ("static", "continuous") and row["input_tokens"] > s["max_batch_tokens"]:
            s["name"] = "chunked_prefill"
    return s


def serving_spec(mapping, row, trace_path, scheduler_name=None):
    """The serving spec of one published row (a dict, as a serving spec file holds it)."""
    shape = mapping["models"][row["model"]]
    model = {"type": "transformer", **{k: v for k, v in shape.items() if k != "source"}}
    replica = dict(mapping["replica"])
    replica["tp"] = row["tp"]
    replica["pp"] = row["pp"]
    return {
        "name": f"trtllm-{row['id']}",
        "description": f"{row['model']} on {row['gpu']}, tp {row['tp']}, ISL {row['input_tokens']} / OSL "
        f"{row['output_tokens']} ({mapping['name']}; model: {shape['source']})",
        "model": model,
        "replica": replica,
        "scheduler": scheduler(mapping, row, scheduler_name),
        "traffic": {"trace": trace_path},
    }


def run_row(cs, mapping, row, workdir, scheduler_name=None):
    """Predicted output tokens/s of one row, with the run's request count, KV capacity and preemptions."""
    spec_path = os.path.join(workdir, f"{row['id']}.json")
    trace_path = os.path.join(workdir, f"{row['id']}.csv")
    cluster = mapping["clusters"][row["gpu_id"]]

    def serve(n):
        with open(trace_path, "w") as f:
            f.write("arrival_s,prompt_tokens,output_tokens\n")
            f.write(f"0,{row['input_tokens']},{row['output_tokens']}\n" * n)
        with open(spec_path, "w") as f:
            json.dump(serving_spec(mapping, row, trace_path, scheduler_name), f)
        return cs.serve(cluster["preset"], spec_path, overrides={f"cluster.{k}": v for k, v in cluster["overrides"].items()},
                        iterations=0).summary

    n = row["requests"]
    summary = serve(n)
    if summary["requests"]["finished"] != n:
        raise RuntimeError(f"{row['id']}: {summary['requests']['finished']} of {n} requests finished "
                           f"(rejected: context {summary['requests']['rejected_context']}, KV cache "
                           f"{summary['requests']['rejected_kv_cache']}, batch tokens "
                           f"{summary['requests']['rejected_batch_tokens']})")
    return {
        "id": row["id"],
        "model": row["model"],
        "gpu": row["gpu_id"],
        "tp": row["tp"],
        "scheduler": scheduler(mapping, row, scheduler_name)["name"],
        "isl": row["input_tokens"],
        "osl": row["output_tokens"],
        "requests": n,
        "kv_capacity_tokens": int(summary["memory"]["kv_capacity_tokens"]),
        "preemptions": int(summary["requests"]["preemptions"]),
        "published": float(row[mapping["measured"]]),
        "predicted": float(summary["throughput"]["output_tokens_per_s"]),
    }


def stats(results):
    errors = [r["predicted"] / r["published"] - 1.0 for r in results]
    return {
        "rows": len(errors),
        "median_abs_error": statistics.median(abs(e) for e in errors),
        "mape": statistics.fmean(abs(e) for e in errors),
        "bias": statistics.fmean(errors),
    }


def summarize(results):
    out = {"all": stats(results), "by_gpu": {}, "by_model": {}}
    for key, field in (("by_gpu", "gpu"), ("by_model", "model")):
        for value in sorted({r[field] for r in results}):
            out[key][value] = stats([r for r in results if r[field] == value])
    return out


def run(limit=0, mapping_path=MAPPING, scheduler_name=None):
    import clustersim as cs

    mapping, rows = load_mapping(mapping_path)
    if limit > 0:
        rows = rows[:limit]
    with tempfile.TemporaryDirectory() as workdir:
        return [run_row(cs, mapping, row, workdir, scheduler_name) for row in rows]


def markdown(results, summary, worst=8):
    lines = ["| group | rows | median abs error | MAPE | bias |", "|---|---:|---:|---:|---:|"]

    def line(name, s):
        lines.append(f"| {name} | {s['rows']} | {100 * s['median_abs_error']:.1f} % | {100 * s['mape']:.1f} % | "
                     f"{100 * s['bias']:+.1f} % |")

    line("all", summary["all"])
    for key in ("by_gpu", "by_model"):
        for name, s in summary[key].items():
            line(name, s)
    lines += ["", "| row | model | GPU | tp | ISL/OSL | N simulated | published tok/s | predicted tok/s | error |",
              "|---|---|---|---:|---|---:|---:|---:|---:|"]
    for r in sorted(results, key=lambda r: -abs(r["predicted"] / r["published"] - 1))[:worst]:
        lines.append(f"| {r['id']} | {r['model']} | {r['gpu']} | {r['tp']} | {r['isl']}/{r['osl']} | {r['requests']} | "
                     f"{r['published']:.0f} | {r['predicted']:.0f} | {100 * (r['predicted'] / r['published'] - 1):+.1f} % |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", help="write the rows and the statistics there")
    p.add_argument("--markdown", action="store_true", help="print the tables as docs/serving.md holds them")
    p.add_argument("--limit", type=int, default=0, help="only the first N rows")
    p.add_argument("--scheduler", help="another batching policy than the mapping's (a comparison; static and "
                   "continuous run the rows with prompts over max_batch_tokens on chunked_prefill)")
    a = p.parse_args()
    results = run(a.limit, scheduler_name=a.scheduler)
    summary = summarize(results)
    if a.markdown:
        print(markdown(results, summary))
    else:
        for r in results:
            e = r["predicted"] / r["published"] - 1
            print(f"{r['id']} {r['model']:15s} {r['gpu']:15s} tp{r['tp']} {r['isl']:>5}/{r['osl']:<5} N={r['requests']:<5} "
                  f"published {r['published']:8.0f} predicted {r['predicted']:8.0f} {100 * e:+6.1f} %")
        print(json.dumps(summary, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": results, "summary": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
