#!/usr/bin/env python3
"""check_corpus.py: `strata import xla` against XLA's own figures, on every
program of the JAX corpus (tests/data/jax, written by scripts/jax-corpus.py).

Usage: check_corpus.py STRATA CORPUS_DIR

For each program it asserts:
  1. the imported trace's peak of live bytes equals the peak computed here,
     independently, from the dump's live ranges and assigned slices: at each
     schedule time t, for each allocation, the union of the byte ranges
     [offset, offset + size) of its values live at t (start <= t <= end;
     a value without a live range is live throughout); thread-local
     allocations are left out (per-thread stack memory, not device memory);
     a donated argument's allocation (parameter + maybe-live-out) counts
     whole at every t, as the caller holds it for the whole program;
  2. XLA's argument, output, alias and temp, as the importer reads them from
     the buffer assignment, equal memory_analysis() (memory-analysis.json);
  3. the imported trace's JAX-style argument, output and alias equal
     memory_analysis() (its temp is the peak of live temporaries, perfectly
     packed: at most XLA's, the difference is XLA's packing, item 4);
  4. the offline planner's height on each temp allocation is at most XLA's
     size; the ratio is printed;
  5. strata gen's accounting of the same programs (GENERATORS) against
     memory_analysis(): argument and alias equal, output short by exactly
     XLA's tuple table (8 bytes per output element); temp printed.
Exit 0 when all hold, 1 otherwise (each failure printed). A failure listed
in KNOWN (program, problem) is printed as KNOWN and not counted; a KNOWN
entry that no longer fails counts as a failure, to be removed.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

VALUE = re.compile(r" value: <\d+ (\S+?)(\{[^}]*\})?(?: \(phi\))?(?: @\d+)?> \(size=(\d+),offset=(\d+)\)")
ALLOC = re.compile(r"allocation (\d+): size (\d+)(.*):$")


def read_dump(d):
    ba = glob.glob(os.path.join(d, "*-buffer-assignment.txt"))[0]
    allocs, values = [], []
    with open(ba, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line == "Used values:":
                break
            m = ALLOC.match(line)
            if m:
                allocs.append((int(m[2]), m[3]))
                continue
            m = VALUE.match(line)
            if m:
                values.append((m[1] + (m[2] or "{}"), len(allocs) - 1, int(m[3]), int(m[4])))
    ranges, mx, state = {}, None, None
    # JAX 0.10 on writes the live ranges to their own file; before, they
    # follow the buffer assignment's 'Used values:' in the same file.
    lr = ba.replace("-buffer-assignment.txt", "-live-range.txt")
    with open(lr if os.path.exists(lr) else ba, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("HloLiveRange (max "):
                mx = int(line.split()[2].rstrip("):"))
            elif line == "  BufferLiveRange:":
                state = "ranges"
            elif line.startswith("  ") and not line.startswith("    "):
                state = None
            elif state == "ranges":
                key, r = line.strip().rsplit(":", 1)
                a, b = r.split("-")
                ranges[key] = (int(a), int(b))
    return allocs, values, ranges, mx


def is_output_allocation(kind):
    return "maybe-live-out" in kind and "parameter" not in kind


def held_outputs(trace):
    """The output allocations the imported trace holds whole: allocated once
    (one `alloc ... note=allocation.N`). XLA writes earlier values into an
    output allocation's bytes (branches, loop bodies, fusions feeding the
    output); the trace holds such an allocation as one buffer from the first
    value written to the end, as XLA counts it (output, never temp); a
    collective or copy that moves a part of it states bytes=."""
    count = {}
    with open(trace, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"alloc \S+ .*note=allocation\.(\d+)", line)
            if m:
                count[int(m[1])] = count.get(int(m[1]), 0) + 1
    return {a for a, n in count.items() if n == 1}


def output_chain_removed(vals, mx):
    """An output allocation kept a buffer per value: the values without the
    output's chain, the values at the output's offset whose live ranges
    touch it back from the end (start <= the previous one's end, or the
    next time at the same size: one buffer in the trace, xla_emit.c's
    groups), which is output from its start."""
    chains, out = [], []
    for (s, e), lo, hi in sorted(vals, key=lambda v: (v[1], v[0][0])):
        c = chains[-1] if chains else None
        if c and c["lo"] == lo and (s <= c["e"] or (s == c["e"] + 1 and hi - lo == c["size"])):
            c["e"], c["size"] = max(c["e"], e), max(c["size"], hi - lo)
            c["vals"].append(((s, e), lo, hi))
        else:
            chains.append({"lo": lo, "e": e, "size": hi - lo, "vals": [((s, e), lo, hi)]})
    for c in chains:
        if c["e"] < mx:
            out += c["vals"]
    return out


def live_by_time(allocs, values, ranges, mx, held, kinds):
    """Bytes live at each schedule time in the allocations `kinds` selects
    ('temp': neither argument nor output; 'all'): values by their slices
    (shared bytes once), a donated argument's allocation whole, an output
    allocation in `held` whole from its first value's start."""
    by_alloc = {}
    for key, a, size, off in values:
        if size > 0:
            by_alloc.setdefault(a, []).append((ranges.get(key, (0, mx)), off, off + size))
    first = {a: min(s for (s, e), lo, hi in by_alloc[a]) for a in held
             if a in by_alloc and is_output_allocation(allocs[a][1])}
    live = []
    for t in range(mx + 1):
        total = 0
        for a, (size, kind) in enumerate(allocs):
            if "thread-local" in kind:
                continue
            whole_run = "parameter" in kind and "maybe-live-out" in kind
            if kinds == "temp" and ("parameter" in kind or a in first):
                continue
            if whole_run or a in first:
                total += size if whole_run or t >= first[a] else 0
                continue
            vals = by_alloc.get(a, [])
            if kinds == "temp" and is_output_allocation(kind):
                vals = output_chain_removed(vals, mx)
            spans = sorted((lo, hi) for (s, e), lo, hi in vals if s <= t <= e)
            end = 0
            for lo, hi in spans:
                total += max(0, hi - max(lo, end))
                end = max(end, hi)
        live.append(total)
    return live


def peak_from_slices(allocs, values, ranges, mx, held=frozenset()):
    """The peak of live bytes (live_by_time 'all') and its first time."""
    live = live_by_time(allocs, values, ranges, mx, held, "all")
    best = max(live)
    return best, live.index(best)


def temp_from_slices(allocs, values, ranges, mx, held=frozenset()):
    """The peak of live bytes outside arguments and outputs (strata's temp:
    XLA's temp allocations' values and constants, perfectly packed)."""
    return max(live_by_time(allocs, values, ranges, mx, held, "temp"))


# Known failures of the current importer on programs added for issue 41,
# by (program, the start of the problem's text): printed as KNOWN and not
# counted; an entry that no longer fails is a failure ('remove it'), so the
# list shrinks as the importer is fixed.
KNOWN = {
}

UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def host_arguments(trace):
    """Bytes of the trace's allocs in memory host before its first compute."""
    total = 0
    with open(trace, encoding="utf-8") as f:
        for line in f:
            tok = line.split()
            if tok and tok[0] == "compute":
                break
            if len(tok) > 3 and tok[0] == "alloc" and tok[3] == "host":
                m = re.fullmatch(r"(\d+)(KiB|MiB|GiB)?", tok[2])
                total += int(m[1]) * UNITS[m[2] or ""]
    return total


def report_figures(text):
    fig = {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) > 3 and tok[0] in ("argument", "output", "alias", "temp") and tok[1].isdigit():
            ints = [int(x) for x in tok[2:] if x.isdigit()]
            fig[tok[0]] = (int(tok[1]), ints[-1] if len(ints) > 0 else None)
        elif len(tok) > 1 and tok[0] == "constant" and tok[1].isdigit():
            fig["constant"] = int(tok[1])
        elif line.startswith("  live at peak"):
            # XLA's bytes first; strata's ends the line, "N HUMAN at t=T".
            # (Not the second integer of the line: below 1 KiB the human
            # form of XLA's figure, "512 B", is one.)
            m = re.search(r"(\d+) \S+ (?:B|KiB|MiB|GiB) at t=\d+\s*$", line)
            fig["peak"] = (int(tok[3]), int(m[1]))
        elif line.startswith("temp allocation"):
            m = re.search(r"XLA (\d+) B, offline planner (\d+) B", line)
            fig.setdefault("plans", []).append((int(m[1]), int(m[2])))
    return fig


def temp_problems(fig, ma, from_slices):
    """strata's temp equals the peak of live values outside arguments and
    outputs (temp_from_slices), and that is at most XLA's temp plus its
    constants (XLA's packing can only add to the perfect packing's peak)."""
    problems = []
    if fig["temp"][1] != from_slices:
        problems.append(f"strata temp {fig['temp'][1]} != {from_slices} from live ranges and slices")
    if fig["temp"][1] > ma["temp_size_in_bytes"] + fig["constant"]:
        problems.append(f"strata temp {fig['temp'][1]} > XLA temp {ma['temp_size_in_bytes']} "
                        f"+ constants {fig['constant']}")
    return problems


# The generators with a JAX counterpart in the corpus, and what XLA's
# memory_analysis() has that strata gen's accounting does not, by figure
# (docs/jax.md's table names each difference):
#   output: XLA's output allocation for a tuple result holds the tuple's
#   table of pointers, 8 bytes per element (scan_mlp: 2 gradients, 16;
#   adam_mlp: 2 parameters + count + 2 mu + 2 nu, 56); strata's output is
#   the arrays only. argument and alias: none.
# temp is printed with its ratio, not asserted: XLA's fusion and its CPU
# while-loop copies give other temporaries than the generators' schedule.
GENERATORS = [
    ("matmul", "matmul m=64 n=64 k=64 bm=64 bn=64 bk=64 dtype=f32", 0),
    ("scan_mlp", "scan-mlp batch=8 dim=16 hidden=32 layers=4 dtype=f32", 2),
    ("scan_mlp_remat", "scan-mlp batch=8 dim=16 hidden=32 layers=4 dtype=f32 remat=full", 2),
    ("adam_mlp", "adam-mlp dim=16 layers=2 batch=16 dtype=f32", 7),
]


def check_generators(strata, corpus, analysis):
    hw = os.path.join(corpus, "..", "..", "..", "configs", "hw", "tpu-v5e.ini")
    failures = 0
    print(f"\n{'generator':16} {'figure':9} {'gen':>7} {'XLA':>7} {'XLA-gen':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        trace, out = os.path.join(tmp, "g.trace"), os.path.join(tmp, "g.json")
        for name, args, tuple_outputs in GENERATORS:
            subprocess.run([strata, "gen", *args.split(), "-o", trace], check=True)
            subprocess.run([strata, "run", "--hw", hw, "--trace", trace, "--json", out], check=True,
                           capture_output=True)
            with open(out, encoding="utf-8") as f:
                hbm = json.load(f)["memories"]["hbm"]
            ma = analysis[name]
            want = {"argument": 0, "output": 8 * tuple_outputs, "alias": 0}
            gen = {"argument": hbm["argument_bytes"], "output": hbm["output_bytes"],
                   "alias": hbm["alias_bytes"], "temp": hbm["temp_peak_bytes"]}
            for k in ("argument", "output", "alias", "temp"):
                xla = ma[f"{k}_size_in_bytes"]
                print(f"{name:16} {k:9} {gen[k]:7} {xla:7} {xla - gen[k]:+8}")
                if k in want and xla - gen[k] != want[k]:
                    print(f"FAIL {name}: XLA {k} - strata gen {k} = {xla - gen[k]}, expected {want[k]}")
                    failures += 1
    return failures


def main(strata, corpus):
    with open(os.path.join(corpus, "memory-analysis.json"), encoding="utf-8") as f:
        analysis = json.load(f)
    failures = 0
    print(f"{'program':18} {'peak(slices)':>12} {'peak(strata)':>12} {'arg':>6} {'out':>6} {'alias':>6} "
          f"{'temp':>6} {'planner':>7} {'ratio':>6}")
    for name, ma in sorted(analysis.items()):
        d = os.path.join(corpus, name)
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "t.trace")
            run = subprocess.run([strata, "import", "xla", d, "--quiet", "-o", trace],
                                 capture_output=True, text=True)
            host_args = host_arguments(trace) if run.returncode == 0 else 0
            held = held_outputs(trace) if run.returncode == 0 else set()
        if run.returncode != 0:
            print(f"FAIL {name}: strata import xla exit {run.returncode}: {run.stderr.strip()}")
            failures += 1
            continue
        fig = report_figures(run.stderr)
        dump = read_dump(d)
        peak, t = peak_from_slices(*dump, held)
        problems = []
        if fig["peak"][1] != peak:
            problems.append(f"peak {fig['peak'][1]} != {peak} from live ranges and slices (t={t})")
        for k in ("argument", "output", "alias", "temp"):
            want = ma[f"{k}_size_in_bytes"]
            if fig[k][0] != want:
                problems.append(f"XLA {k} {fig[k][0]} != memory_analysis {want}")
            # Arguments the entry layout puts in host memory (S(5): JAX's
            # pinned_host) are in strata's host memory; the CPU backend's
            # memory_analysis() has one memory space and counts them as
            # device arguments (host_argument_size_in_bytes is 0).
            got = fig[k][1] + (host_args if k == "argument" else 0)
            if k != "temp" and got != want:
                problems.append(f"strata {k} {got} != memory_analysis {want}")
        # strata's temp is the peak of live non-argument, non-output buffers,
        # perfectly packed; constants scheduled after the entry are among
        # them (XLA keeps them in constant allocations, in no figure of
        # memory_analysis()), so the bound is XLA's temp plus its constants.
        problems += temp_problems(fig, ma, temp_from_slices(*dump, held))
        plans = fig.get("plans", [])
        xla_temp = sum(p[0] for p in plans)
        planned = sum(p[1] for p in plans)
        if planned > xla_temp:
            problems.append(f"offline planner {planned} > XLA temp {xla_temp}")
        ratio = planned / xla_temp if xla_temp else 1.0
        print(f"{name:18} {peak:12} {fig['peak'][1]:12} {fig['argument'][1]:6} {fig['output'][1]:6} "
              f"{fig['alias'][1]:6} {fig['temp'][0]:6} {planned:7} {ratio:6.4f}")
        for (known_name, prefix), why in KNOWN.items():
            if known_name != name:
                continue
            hit = [p for p in problems if p.startswith(prefix)]
            for p in hit:
                print(f"KNOWN {name}: {p} ({why})")
                problems.remove(p)
            if not hit:
                problems.append(f"'{prefix}' no longer fails: remove it from KNOWN")
        for p in problems:
            print(f"FAIL {name}: {p}")
        failures += len(problems)
    failures += check_generators(strata, corpus, analysis)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
