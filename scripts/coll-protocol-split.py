#!/usr/bin/env python3
"""Splits a clusters set's errors by the protocol strata runs at each size
(docs/clusters.md, "A100 across nodes, row by row and protocol by protocol
(issue 39, wave 45)").

Usage: coll-protocol-split.py STRATA SET.ini VALIDATE.txt [REGEX]

SET.ini is a `validate --published` case file (validation/held-out/...),
VALIDATE.txt that file's output from `strata validate --published SET.ini`
(its rows are not rerun), REGEX picks series by name (default: all). For
every row of a picked series it runs `strata gen` and `strata run --json`
with the series' own hw, `set =` and `gen =` lines at the row's size, and
prints one line per row:
  series|bytes|algorithm|protocol|channels|error%
where error% is the row's time error (strata - run) / run: a row printed in
GB/s (a bandwidth error e) is turned into 1 / (1 + e) - 1. Then, per
protocol, the rows, the median error and the rows within 25%. Runs of
hundreds of ranks take minutes a row: pick with REGEX. Read-only: writes
only a temporary trace."""
import configparser, os, re, statistics, subprocess, sys, tempfile

UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
ROW = re.compile(r"^(.*?)\s+\S+\s+([\d.]+) (\S+)\s+[\d.]+ \S+\s+([+-]\d+\.\d+)%")


def rows_of(path):
    """(case name, unit, error as a fraction) per row of a validate output."""
    out = []
    for line in open(path):
        m = ROW.match(line)
        if m:
            out.append((m.group(1).strip(), m.group(3), float(m.group(4)) / 100))
    return out


def choice(strata, hw, sets, gen, size, trace):
    """strata's (algorithm, protocol, channels) for the series at size bytes."""
    args = [a for a in gen[1:] if not a.startswith("bytes=")] + ["bytes=%d" % size]
    subprocess.run([strata, "gen", gen[0]] + args + ["-o", trace], check=True, capture_output=True)
    cmd = [strata, "run", "--hw", hw, "--trace", trace, "--json", "-"]
    for s in sets:
        cmd += ["--set", s]
    js = subprocess.run(cmd, capture_output=True, text=True).stdout
    get = lambda key, pat: (re.search(r'"%s" : %s' % (key, pat), js) or [None, "?"])[1]
    return get("algorithm", r'"(\w+)"'), get("protocol", r'"(\w+)"'), get("channels", r"(\d+)")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    strata, ini, results = sys.argv[1:4]
    pick = re.compile(sys.argv[4] if len(sys.argv) > 4 else "")
    cp = configparser.RawConfigParser(strict=False)
    cp.optionxform = str
    cp.read(ini)
    rows = rows_of(results)
    by_proto = {}
    trace = os.path.join(tempfile.mkdtemp(prefix="protosplit"), "t.trace")
    for sec in cp.sections():
        name = sec[len("series "):]
        if not sec.startswith("series ") or not pick.search(name):
            continue
        s = cp[sec]
        hw = os.path.join(os.path.dirname(ini), s["hw"])
        for case, unit, err in rows:
            m = re.fullmatch(re.escape(name) + r" (\d+)(\w*)", case)
            if not m:
                continue
            size = int(m.group(1)) * UNITS[m.group(2)]
            algo, proto, ch = choice(strata, hw, s.get("set", "").split(), s["gen"].split(), size, trace)
            t_err = 100 * (1 / (1 + err) - 1 if unit == "GB/s" else err)
            print("%s|%d|%s|%s|%s|%+.1f" % (name, size, algo, proto, ch, t_err))
            by_proto.setdefault(proto, []).append(t_err)
    for proto, errs in sorted(by_proto.items()):
        print("%s: %d rows, median %+.1f%%, %d within 25%%"
              % (proto, len(errs), statistics.median(errs), sum(abs(e) <= 25 for e in errs)))


if __name__ == "__main__":
    main()
