#!/usr/bin/python3
"""plot_timeline.py: plots of one run's timeline (`strata run --timeline T.json`).

Usage: plot_timeline.py TIMELINE.json [-o PREFIX] [--plots memory,address-map,links]

Writes PREFIX-memory.png (memory in use over time, stacked by tag),
PREFIX-address-map.png (buffers over time x address, like PyTorch's
memory_viz: the gaps are fragmentation) and PREFIX-links.png (link
utilization). PREFIX defaults to the timeline's path without .json.
Reads only the timeline file.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_viz as sv  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("timeline")
    ap.add_argument("-o", "--prefix")
    ap.add_argument("--plots", default="memory,address-map,links")
    args = ap.parse_args(argv)
    kinds = [k for k in args.plots.split(",") if k]
    for k in kinds:
        if k not in ("memory", "address-map", "links"):
            ap.error(f"unknown plot '{k}'; known plots: memory, address-map, links")
    prefix = args.prefix or (args.timeline[:-5] if args.timeline.endswith(".json") else args.timeline)
    tl = sv.Timeline(args.timeline)
    for k in kinds:
        path = f"{prefix}-{k}.png"
        sv.save(sv.timeline_figure(tl, k), path)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
