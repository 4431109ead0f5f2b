#!/usr/bin/env python3
"""Runs the bad-input table (tests/cpp/cli/bad_inputs.json) against the clustersim executable and
prints counts: cases, passed (exit status, message fragments, no internal error, nothing on stdout,
files left intact), timeouts, crashes (killed by a signal), exit 0 where 2 was expected, exit 1
(a simulation failure or an internal error), internal errors.

    python bench/bad_input_probe.py [--cli build/bin/clustersim] [--only NAME_PART] [-v]

Careful with an executable older than issue 19's fix: its `--out /dev/full` renamed a temporary over
the device (as root, /dev/full became a regular file); the probe stops when /dev/full is no longer a
character device.

The same table runs as a test (tests/cpp/cli/bad_input_table_test.cpp); this script is for a quick
count while editing it, and prints each failing case with its stderr.
"""
import argparse
import collections
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expand(table):
    for c in table["cases"]:
        values = c.get("values")
        if values is None:
            yield c["name"], c, None
        else:
            for i, v in enumerate(values):
                yield f"{c['name']}/{i}", c, v


def run_case(cli, fixtures, case, value, base, timeout_s):
    tmp = tempfile.mkdtemp(dir=base)
    subst = {"{tmp}": tmp, "{cluster}": os.path.join(tmp, "cluster.json"),
             "{workload}": os.path.join(tmp, "workload.json"), "{src}": ROOT,
             "{data}": os.path.join(ROOT, "calibration", "data"), "{cli}": cli}
    if value is not None:
        subst["{v}"] = value

    def sub(text):
        for k, v in subst.items():
            text = text.replace(k, v)
        return text

    for name, text in list(fixtures.items()) + list(case.get("files", {}).items()):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(sub(text))
    unchanged = sub(case["unchanged"]) if "unchanged" in case else None
    before = open(unchanged, "rb").read() if unchanged else None
    command = sub(case["args"]) if case.get("raw_command") else cli + " " + sub(case["args"])
    if "setup" in case:
        command = sub(case["setup"]) + " && " + command
    stdout_target = case.get("stdout", os.path.join(tmp, "stdout"))
    command = f"{command} >{stdout_target} 2>{os.path.join(tmp, 'stderr')}"
    proc = subprocess.Popen(["sh", "-c", command], start_new_session=True)
    try:
        status = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        status = "timeout"
    err = open(os.path.join(tmp, "stderr"), errors="replace").read()
    out = open(stdout_target, errors="replace").read() if "stdout" not in case else ""
    problems = []
    want = case.get("status", 2)
    if status != want:
        problems.append(f"exit {status}, expected {want}")
    stream = out if case.get("stream") == "stdout" else err
    for frag in case["expect"]:
        if sub(frag) not in stream:
            problems.append(f"missing: {sub(frag)}")
    if "internal error" in err:
        problems.append("internal error")
    if want == 2 and out and case.get("stream") != "stdout" and not case.get("usage_on_stdout"):
        problems.append("stdout not empty")
    if unchanged and open(unchanged, "rb").read() != before:
        problems.append(f"{unchanged} changed")
    return status, problems, err, out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "clustersim"))
    p.add_argument("--table", default=os.path.join(ROOT, "tests", "cpp", "cli", "bad_inputs.json"))
    p.add_argument("--only", default="")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per case (a hang counts as a timeout)")
    p.add_argument("-v", action="store_true")
    a = p.parse_args()
    table = json.load(open(a.table))
    counts = collections.Counter()
    base = tempfile.mkdtemp(prefix="clustersim_probe_")
    try:
        for name, case, value in expand(table):
            if a.only not in name:
                continue
            status, problems, err, out = run_case(a.cli, table["fixtures"], case, value, base, a.timeout)
            if not stat.S_ISCHR(os.stat("/dev/full").st_mode):
                sys.exit(f"{name}: /dev/full is no longer a device (restore it: rm /dev/full; mknod -m 666 /dev/full c 1 7)")
            counts["cases"] += 1
            counts["passed" if not problems else "failed"] += 1
            if status == "timeout":
                counts["timeouts"] += 1
            elif status < 0 or status > 128:
                counts["crashes (signal)"] += 1
            if status == 0 and case.get("status", 2) != 0:
                counts["exit 0 where 2 was expected"] += 1
            if status == 1:
                counts["exit 1"] += 1
            if "internal error" in err:
                counts["internal errors"] += 1
            if problems or a.v:
                print(f"{'FAIL' if problems else 'ok'} {name}: {'; '.join(problems)}\n  stderr: {err.strip()[:400]}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for k in ["cases", "passed", "failed", "timeouts", "crashes (signal)", "exit 0 where 2 was expected", "exit 1",
              "internal errors"]:
        print(f"{k:30s} {counts[k]}")
    return 0 if counts["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
