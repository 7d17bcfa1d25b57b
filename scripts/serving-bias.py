#!/usr/bin/env python3
"""serving-bias.py: where the serving cases' output-throughput error sits (issue 45, wave 46).

Joins every `validate --published` case of the serving sets with the features of
its serve= line and prints the signed error's median, the count within 15% and
the shares more than 15% too fast / too slow, per feature bucket: engine row,
hardware file, model, weight dtype, TP, offline (rate=0, no --concurrency) vs
served, concurrency or max_num_seqs, prompt and output lengths, the output/prompt
ratio, and a coarse "regime" from the lengths. With --run, each case's serve=
line is also run (`strata serve --json -`) to add strata's own step breakdown:
the share of the makespan in prefill forwards, decode-only forwards and host
time (prefill_gpu_s, decode_gpu_s, host_s) and the mean batch; buckets of those
shares are then printed too.

Usage (from the repository root):
  scripts/serving-bias.py --results DIR [--sets 2,4,6] [--metric output-throughput]
                          [--run N] [--bin build/strata] [--csv OUT.csv]
DIR holds validate's printed output, one file per set, named as runall.sh names
them (validation_serving_serving-heldout-K.ini.txt; set 1 is serving-heldout.ini).
--sets picks sets by number (1 = serving-heldout.ini; default: all 1-25); the
wave-46 survey used the even ones and kept the odd ones for the check.
--run N runs at most N cases (the first of each group first), 0 by default.
Reads only; changes nothing."""
import argparse, collections, configparser, json, os, re, shlex, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETDIR = os.path.join(ROOT, "validation", "serving")


def set_file(k):
    return "serving-heldout.ini" if k == 1 else f"serving-heldout-{k}.ini"


def read_cases(path):
    """Case sections of one .ini: {(name, metric): {key: value}}."""
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.optionxform = str
    cp.read(path)
    out = {}
    for sec in cp.sections():
        if not sec.startswith("case "):
            continue
        name, metric = sec[5:].rsplit(" ", 1)
        out[(name, metric)] = dict(cp[sec])
    return out


ROW = re.compile(r"^(\S+) (\S+)\s+\S+\s+([\d.]+) (\S+)\s+([\d.]+) \S+\s+([+-]?[\d.]+)%\s*$")


def read_results(path):
    """validate's rows: {(name, metric): (measured, simulated, signed error %)}."""
    out = {}
    for line in open(path, errors="replace"):
        m = ROW.match(line.rstrip("\n"))
        if m:
            out[(m.group(1), m.group(2))] = (float(m.group(3)), float(m.group(5)), float(m.group(6)))
    return out


def poisson(spec):
    return dict(kv.split("=", 1) for kv in spec.split(",") if "=" in kv)


def features(case):
    """What a serve= line says: engine, model, dtype, tp, lengths, offline or served."""
    argv = shlex.split(case.get("serve", ""))
    f = {"engine": "none(v1)", "model": "?", "dtype": "bf16", "tp": 1, "prompt": None, "output": None,
         "offline": True, "conc": None, "max_seqs": None, "requests_file": False}
    sets = []
    i = 0
    while i < len(argv):
        a, v = argv[i], argv[i + 1] if i + 1 < len(argv) else ""
        if a in ("--model", "-m"):
            f["model"] = v
        elif a in ("--config", "--model-file"):
            f["model"] = os.path.basename(v).rsplit(".", 1)[0]
        elif a == "--set":
            sets.append(v)
        elif a == "--tp":
            f["tp"] = int(v)
        elif a == "--engine":
            f["engine"] = v
        elif a == "--concurrency":
            f["conc"] = int(v)
            f["offline"] = f["offline"] and int(v) == 0
        elif a == "--max-num-seqs":
            f["max_seqs"] = int(v)
        elif a == "--requests":
            f["requests_file"] = True
        elif a == "--poisson":
            p = poisson(v)
            f["prompt"] = float(p.get("prompt", 0))
            f["output"] = float(p.get("output", 0))
            if float(p.get("rate", 0)) > 0:
                f["offline"] = False
        i += 1
    for s in sets:
        k, _, v = s.partition("=")
        if k == "dtype":
            f["dtype"] = v
    f["hw"] = os.path.basename(case.get("hw", "?")).replace(".ini", "")
    return f


def bucket(v, edges, unit=""):
    if v is None:
        return "?"
    for lo, hi in zip(edges, edges[1:]):
        if lo <= v < hi:
            return f"{lo}-{hi}{unit}"
    return f">={edges[-1]}{unit}"


def regime(f):
    p, o = f["prompt"], f["output"]
    if p is None or o is None:
        return "?"
    if o >= 4 * p:
        return "decode-heavy (out >= 4x in)"
    if p >= 4 * o:
        return "prefill-heavy (in >= 4x out)"
    return "balanced"


def run_case(binary, case, setfile):
    """strata serve on the case's line, from the set's folder (relative paths as validate reads them)."""
    argv = [binary, "serve", "--hw", case["hw"], "--json", "-", "-q"] + shlex.split(case["serve"])
    try:
        r = subprocess.run(argv, cwd=os.path.dirname(setfile), capture_output=True, text=True, timeout=600)
        js = json.loads(r.stdout)
    except (subprocess.SubprocessError, ValueError):
        return None
    run = js["runs"][0]
    ms = run.get("makespan_s") or 0
    if ms <= 0:
        return None
    return {"prefill_share": run.get("prefill_gpu_s", 0) / ms, "decode_share": run.get("decode_gpu_s", 0) / ms,
            "host_share": run.get("host_s", 0) / ms, "batch_mean": run.get("batch_mean")}


def summarise(title, rows, key):
    groups = collections.defaultdict(list)
    for r in rows:
        groups[key(r)].append(r["err"])
    print(f"\n{title}")
    print(f"  {'bucket':34s} {'n':>5s} {'median':>8s} {'within15':>9s} {'>15% fast':>10s} {'>15% slow':>10s}")
    for k in sorted(groups, key=lambda k: -len(groups[k])):
        e = groups[k]
        n = len(e)
        print(f"  {str(k)[:34]:34s} {n:5d} {statistics.median(e):+7.1f}% {sum(abs(x) <= 15 for x in e):9d} "
              f"{100 * sum(x > 15 for x in e) / n:9.0f}% {100 * sum(x < -15 for x in e) / n:9.0f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--sets", default=",".join(str(k) for k in range(1, 26)))
    ap.add_argument("--metric", default="output-throughput")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "strata"))
    ap.add_argument("--csv")
    a = ap.parse_args()
    rows = []
    for k in (int(s) for s in a.sets.split(",")):
        sf = os.path.join(SETDIR, set_file(k))
        res = os.path.join(a.results, "validation_serving_" + set_file(k) + ".txt")
        if not os.path.exists(res):
            print(f"serving-bias: no results {res}", file=sys.stderr)
            continue
        cases, results = read_cases(sf), read_results(res)
        for key, (meas, sim, err) in results.items():
            if key[1] != a.metric or key not in cases:
                continue
            f = features(cases[key])
            f.update(set=k, case=key[0], group=cases[key].get("group", ""), err=err, measured=meas, simulated=sim,
                     setfile=sf, _case=cases[key])
            rows.append(f)
    if not rows:
        sys.exit("serving-bias: no cases")
    seen, order = set(), []
    for r in rows:  # the first case of each group first
        order.append((r["group"] in seen, len(order)))
        seen.add(r["group"])
    runs = 0
    for _, i in sorted(order):
        r = rows[i]
        if runs >= a.run:
            break
        r.update(run_case(a.bin, r["_case"], r["setfile"]) or {})
        runs += 1
    e = [r["err"] for r in rows]
    print(f"cases {len(e)}  median signed {statistics.median(e):+.1f}%  within 15% {sum(abs(x) <= 15 for x in e)}  "
          f">15% fast {sum(x > 15 for x in e)}  >15% slow {sum(x < -15 for x in e)}")
    summarise("by set", rows, lambda r: r["set"])
    summarise("by engine row (--engine)", rows, lambda r: r["engine"])
    summarise("by hardware file", rows, lambda r: r["hw"])
    summarise("by model", rows, lambda r: r["model"])
    summarise("by weight dtype", rows, lambda r: r["dtype"])
    summarise("by TP", rows, lambda r: r["tp"])
    summarise("offline (rate 0, no --concurrency) vs served", rows, lambda r: "offline" if r["offline"] else "served")
    summarise("by concurrency (served closed loop)", rows, lambda r: bucket(r["conc"], [1, 2, 9, 33, 129, 513]))
    summarise("by prompt tokens", rows, lambda r: bucket(r["prompt"], [0, 256, 1024, 2049, 4097]))
    summarise("by output tokens", rows, lambda r: bucket(r["output"], [0, 256, 1024, 2049, 4097]))
    summarise("by regime (lengths)", rows, regime)
    summarise("regime x hardware", rows, lambda r: f"{regime(r)[:12]} {r['hw']}")
    summarise("regime x engine", rows, lambda r: f"{regime(r)[:12]} {r['engine']}")
    ran = [r for r in rows if "decode_share" in r]
    if ran:
        summarise(f"strata's decode-only share of the makespan ({len(ran)} run)", ran,
                  lambda r: bucket(round(100 * r["decode_share"]), [0, 25, 50, 75, 90], "%"))
        summarise("strata's host share of the makespan", ran,
                  lambda r: bucket(round(100 * r["host_share"]), [0, 5, 10, 20, 40], "%"))
        summarise("strata's mean batch", ran, lambda r: bucket(r["batch_mean"], [0, 8, 32, 128, 256, 512]))
    if a.csv:
        cols = ["set", "case", "group", "engine", "hw", "model", "dtype", "tp", "offline", "conc", "max_seqs",
                "prompt", "output", "measured", "simulated", "err", "prefill_share", "decode_share", "host_share",
                "batch_mean"]
        with open(a.csv, "w") as fh:
            fh.write(",".join(cols) + "\n")
            for r in rows:
                fh.write(",".join(str(r.get(c, "")) for c in cols) + "\n")


if __name__ == "__main__":
    main()
