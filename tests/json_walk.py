#!/usr/bin/env python3
"""json_walk.py STRATA SOURCE_DIR: every JSON strata writes for the shipped
examples parses with Python's json module, strictly (no NaN nor Infinity,
UTF-8, no control character in a string).

Walks: every traces/examples/*.trace and traces/spmd/*.trace on every
configs/hw/*.ini (run --json and --timeline, where the run succeeds), alloc
--json of every example, validate --published --json, every
configs/experiments/*.ini's --list-jobs --format jsonl, and the issue's case
(a makespan of 6e-09 s, which json-glib wrote as "6e-09.0", and a 1 KiB
all-reduce on a100-8). The tests' own outputs are checked by tests/testutil.c on every
run they make. Exit 1 naming each file that does not parse."""
import glob
import json
import os
import subprocess
import sys
import tempfile

def refuse(name):
    raise ValueError("not JSON: " + name)

def strict(data, what, bad):
    try:
        json.loads(data.decode("utf-8"), parse_constant=refuse)
    except (ValueError, UnicodeDecodeError) as e:
        bad.append("%s: %s" % (what, e))

def main():
    strata, src = sys.argv[1], sys.argv[2]
    bad, checked = [], 0
    hws = sorted(glob.glob(os.path.join(src, "configs/hw/*.ini")))
    traces = sorted(glob.glob(os.path.join(src, "traces/examples/*.trace")) +
                    glob.glob(os.path.join(src, "traces/spmd/*.trace")))
    with tempfile.TemporaryDirectory() as tmp:
        ar = os.path.join(tmp, "ar.trace")
        subprocess.run([strata, "gen", "collective", "bytes=1KiB", "devices=8", "-o", ar], check=True)
        jobs = [(["run", "--hw", hw, "--trace", t], True) for t in traces for hw in hws]
        tiny = os.path.join(tmp, "tiny.trace")
        with open(tiny, "w") as f:
            f.write("strata-trace 1\nalloc a 1KiB\ncompute k in=a out=a time=6ns\nfree a\n")
        jobs += [(["run", "--hw", os.path.join(src, "configs/hw/a100-8.ini"), "--trace", t], True) for t in [ar, tiny]]
        jobs += [(["alloc", "--trace", t], False) for t in traces]
        jobs += [(["validate", "--published"], False)]
        for args, timeline in jobs:
            out = os.path.join(tmp, "o.json")
            tl = os.path.join(tmp, "t.json")
            extra = ["--json", out] + (["--timeline", tl] if timeline else [])
            r = subprocess.run([strata] + args + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for path in [out, tl]:
                if os.path.exists(path):
                    with open(path, "rb") as f:
                        strict(f.read(), " ".join(args) + " -> " + os.path.basename(path), bad)
                    checked += 1
                    os.unlink(path)
            if r.returncode not in (0, 1, 2):
                bad.append("%s: exit %d" % (" ".join(args), r.returncode))
        for exp in sorted(glob.glob(os.path.join(src, "configs/experiments/*.ini"))):
            r = subprocess.run([strata, "sweep", exp, "--out", os.path.join(tmp, "sw"), "--list-jobs",
                                "--format", "jsonl"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            for n, line in enumerate(r.stdout.splitlines()):
                strict(line, "%s --list-jobs line %d" % (os.path.basename(exp), n + 1), bad)
                checked += 1
    for b in bad:
        print(b)
    print("%d JSON outputs checked, %d not strict JSON" % (checked, len(bad)))
    return 1 if bad or checked == 0 else 0

if __name__ == "__main__":
    sys.exit(main())
