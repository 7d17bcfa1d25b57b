"""strata_viz: plots from strata's results files, and nothing else.

Inputs are only what strata writes:
  - a timeline (`strata run --timeline T.json`, Chrome trace-event JSON; see
    sim/results/timeline.c for its layout: pid 1 streams, pid 2 links,
    pid 3 memories with buffer lifetimes and "NAME in use" / "NAME by tag"
    counters);
  - a sweep's results.json (`strata sweep`, see sim/sweep/table.h).

Plots (matplotlib, Agg backend, no display needed):
  memory_by_tag   memory in use over time, stacked by tag, reserved on top
  address_map     buffers as rectangles over time x address (like PyTorch's
                  memory_viz), which shows fragmentation
  link_util       busy fraction of each link over time
  axis_chart      each figure against one sweep axis, one line per value of
                  the other axes (out-of-memory points marked x)

Every function takes parsed data and a matplotlib Axes or returns a Figure;
nothing here runs a simulation or invents a number.
"""
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

TAG_COLORS = {
    "param": "#4e79a7",
    "input": "#59a14f",
    "output": "#9c755f",
    "activation": "#f28e2b",
    "optstate": "#e15759",
    "grad": "#76b7b2",
    "temp": "#edc948",
    "untagged": "#bab0ac",
}
TAG_ORDER = list(TAG_COLORS)


def human_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def byte_axis(ax, which="y"):
    """Label an axis in binary units, choosing one unit for the whole axis."""
    lo, hi = (ax.get_ylim() if which == "y" else ax.get_xlim())
    top = max(abs(lo), abs(hi), 1)
    power = min(int(math.log(top, 1024)), 4) if top >= 1 else 0
    unit = ("B", "KiB", "MiB", "GiB", "TiB")[power]
    scale = 1024 ** power
    axis = ax.yaxis if which == "y" else ax.xaxis
    span = abs(hi - lo) or top
    axis.set_major_locator(matplotlib.ticker.MultipleLocator(nice_step(span / scale / 5) * scale))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v / scale:g}"))
    return unit


def nice_step(raw):
    """The smallest 1, 2 or 5 x 10^k at least raw (tick spacing)."""
    if raw <= 0:
        return 1.0
    base = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * base >= raw:
            return m * base
    return 10 * base


class Timeline:
    """The parts of a strata timeline that the plots need."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        self.path = path
        self.meta = doc.get("otherData", {})
        self.makespan_s = float(self.meta.get("makespan_s", 0) or 0)
        threads = {}
        for ev in doc.get("traceEvents", []):
            if ev.get("ph") == "M" and ev.get("name") == "thread_name":
                threads[(ev["pid"], ev["tid"])] = ev["args"]["name"]
        self.buffers = {}   # memory -> [(t0, t1, offset, size, tag)]
        self.in_use = {}    # memory -> [(t, allocated, reserved)]
        self.by_tag = {}    # memory -> [(t, {tag: bytes})]
        self.links = {}     # link -> [(t0, t1, bytes)]
        self.streams = {}   # stream -> [(t0, t1, kind)]
        for ev in doc.get("traceEvents", []):
            ph = ev.get("ph")
            if ph == "X":
                track = threads.get((ev["pid"], ev["tid"]), "?").split(" #")[0]
                t0 = ev["ts"] * 1e-6
                t1 = t0 + ev.get("dur", 0) * 1e-6
                args = ev.get("args", {})
                if ev["pid"] == 3 and track.endswith(" buffers"):
                    mem = track[: -len(" buffers")]
                    self.buffers.setdefault(mem, []).append(
                        (t0, t1, args.get("offset", 0), args.get("size", 0), args.get("tag", "untagged")))
                elif ev["pid"] == 2:
                    self.links.setdefault(track, []).append((t0, t1, args.get("bytes", 0)))
                elif ev["pid"] == 1:
                    self.streams.setdefault(track, []).append((t0, t1, ev.get("cat", "")))
            elif ph == "C" and ev.get("pid") == 3:
                name = ev.get("name", "")
                t = ev["ts"] * 1e-6
                if name.endswith(" in use"):
                    a = ev["args"]
                    self.in_use.setdefault(name[: -len(" in use")], []).append(
                        (t, a.get("allocated", 0), a.get("reserved", 0)))
                elif name.endswith(" by tag"):
                    self.by_tag.setdefault(name[: -len(" by tag")], []).append((t, dict(ev["args"])))
        if not self.makespan_s:
            ends = [b[1] for bs in self.buffers.values() for b in bs]
            ends += [s[1] for ss in self.streams.values() for s in ss]
            self.makespan_s = max(ends, default=0.0)

    def memories(self):
        """Memories with any activity, in the order the timeline lists them."""
        names = list(self.meta.get("memories", {}))
        extra = [m for m in list(self.in_use) + list(self.buffers) if m not in names]
        return [m for m in names + extra if self.in_use.get(m) or self.buffers.get(m)]


def time_unit(seconds):
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    if seconds >= 1e-6:
        return 1e6, "us"
    return 1e9, "ns"


def memory_by_tag(tl, mem, ax):
    """Memory in use over time, stacked by tag; reserved bytes as a line."""
    samples = tl.by_tag.get(mem, [])
    scale, unit = time_unit(tl.makespan_s or 1e-9)
    if samples:
        tags = sorted({t for _, d in samples for t in d}, key=lambda t: TAG_ORDER.index(t) if t in TAG_ORDER else 99)
        xs = [0.0] + [t * scale for t, _ in samples] + [tl.makespan_s * scale]
        ys = []
        for tag in tags:
            vals = [d.get(tag, 0) for _, d in samples]
            ys.append([0] + vals + [vals[-1]])
        ax.stackplot(xs, ys, labels=tags, colors=[TAG_COLORS.get(t, "#999999") for t in tags], step="post",
                     alpha=0.9)
    use = tl.in_use.get(mem, [])
    if use:
        xs = [0.0] + [t * scale for t, _, _ in use] + [tl.makespan_s * scale]
        rs = [0] + [r for _, _, r in use] + [use[-1][2]]
        ax.step(xs, rs, where="post", color="black", linewidth=1, label="reserved")
    ax.set_xlabel(f"time ({unit})")
    ax.set_xlim(0, max(tl.makespan_s * scale, 1e-12))
    ax.set_ylim(bottom=0)
    ax.set_ylabel(f"{mem} in use ({byte_axis(ax)})")
    ax.set_title(f"{mem}: memory in use by tag")
    if samples or use:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")


def address_map(tl, mem, ax, max_buffers=50000):
    """Each buffer as a rectangle: time on x, address on y, colour by tag."""
    bufs = tl.buffers.get(mem, [])[:max_buffers]
    scale, unit = time_unit(tl.makespan_s or 1e-9)
    by_tag = {}
    top = 0
    for t0, t1, off, size, tag in bufs:
        x0, x1 = t0 * scale, max(t1 * scale, t0 * scale)
        by_tag.setdefault(tag, []).append([(x0, off), (x1, off), (x1, off + size), (x0, off + size)])
        top = max(top, off + size)
    for tag, polys in sorted(by_tag.items(), key=lambda kv: TAG_ORDER.index(kv[0]) if kv[0] in TAG_ORDER else 99):
        ax.add_collection(PolyCollection(polys, facecolors=TAG_COLORS.get(tag, "#999999"), edgecolors="white",
                                         linewidths=0.2, label=tag))
    use = tl.in_use.get(mem, [])
    if use:
        xs = [0.0] + [t * scale for t, _, _ in use] + [tl.makespan_s * scale]
        rs = [0] + [r for _, _, r in use] + [use[-1][2]]
        ax.step(xs, rs, where="post", color="black", linewidth=0.8, label="reserved")
        top = max(top, max(rs))
    ax.set_xlim(0, max(tl.makespan_s * scale, 1e-12))
    ax.set_ylim(0, max(top * 1.05, 1))
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(f"address ({byte_axis(ax)})")
    ax.set_title(f"{mem}: address space over time (gaps between blocks are fragmentation)")
    if by_tag:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")


def link_util(tl, ax, bins=200):
    """Fraction of each time bin during which a link carries at least one copy."""
    span = tl.makespan_s or max((e[1] for es in tl.links.values() for e in es), default=0.0)
    scale, unit = time_unit(span or 1e-9)
    if not span:
        ax.text(0.5, 0.5, "no copies", ha="center", va="center", transform=ax.transAxes)
        return
    width = span / bins
    for name, events in sorted(tl.links.items()):
        # Merge overlapping intervals first: busy means at least one transfer.
        merged = []
        for t0, t1, _ in sorted(events):
            if merged and t0 <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], t1)
            else:
                merged.append([t0, t1])
        busy = [0.0] * bins
        for t0, t1 in merged:
            b0 = min(int(t0 / width), bins - 1)
            b1 = min(int(t1 / width), bins - 1)
            for b in range(b0, b1 + 1):
                lo, hi = max(t0, b * width), min(t1, (b + 1) * width)
                if hi > lo:
                    busy[b] += (hi - lo) / width
        total = sum(e[2] for e in events)
        xs = [b * width * scale for b in range(bins)] + [span * scale]
        ax.step(xs, busy + [busy[-1]], where="post", label=f"{name} ({human_bytes(total)})")
    ax.set_xlim(0, span * scale)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("busy fraction")
    ax.set_title("link utilization")
    if tl.links:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")


SCALED_UNITS = ("bytes", "bytes/s", "s")


def scaled_axis(ax, unit, which="y"):
    """Ticks in a readable unit: binary sizes, GB/s, or s/ms/us/ns. Returns the unit's label."""
    if unit == "bytes":
        return byte_axis(ax, which)
    lo, hi = (ax.get_ylim() if which == "y" else ax.get_xlim())
    top = max(abs(lo), abs(hi))
    if unit == "bytes/s":
        scale, label = 1e-9, "GB/s"
    else:
        mult, label = time_unit(top or 1e-9)
        scale = mult
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v * scale:g}")
    (ax.yaxis if which == "y" else ax.xaxis).set_major_formatter(fmt)
    return label


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def numeric_figures(results):
    rows = results.get("rows", [])
    return [f for f in results.get("figures", []) if any(_num(r.get(f)) for r in rows)]


def axis_chart(results, axis_index):
    """One figure: every numeric figure against one axis (a subplot each)."""
    axes = results["axes"]
    axis = axes[axis_index]
    others = [a for i, a in enumerate(axes) if i != axis_index]
    figs = numeric_figures(results)
    n = max(len(figs), 1)
    cols = min(n, 2)
    rows_n = (n + cols - 1) // cols
    fig, grid = plt.subplots(rows_n, cols, figsize=(6.4 * cols, 3.8 * rows_n), squeeze=False)
    numeric = axis.get("numbers") is not None
    xs_of = {v: (axis["numbers"][i] if numeric else i) for i, v in enumerate(axis["values"])}
    for k, fname in enumerate(figs or [None]):
        ax = grid[k // cols][k % cols]
        if fname is None:
            ax.text(0.5, 0.5, "no numeric figures", ha="center", va="center", transform=ax.transAxes)
            continue
        series = {}
        for r in results["rows"]:
            key = ", ".join(f"{o['name']}={r.get(o['name'])}" for o in others) or fname
            series.setdefault(key, []).append(r)
        palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for n_series, (key, rs) in enumerate(series.items()):
            color = palette[n_series % len(palette)]
            rs = sorted(rs, key=lambda r: xs_of[r[axis["name"]]])
            pts = [(xs_of[r[axis["name"]]], r.get(fname), r.get("status")) for r in rs]
            ok = [(x, y) for x, y, s in pts if _num(y) and s != "oom"]
            if ok:
                ax.plot([p[0] for p in ok], [p[1] for p in ok], marker="o", color=color, label=key,
                        linestyle="-" if numeric else ":")
            oom = [(x, y) for x, y, s in pts if _num(y) and s == "oom"]
            if oom:
                ax.plot([p[0] for p in oom], [p[1] for p in oom], linestyle="none", marker="x", markersize=9,
                        color=color, label=None if ok else f"{key} (out of memory)")
        if not numeric:
            ax.set_xticks(range(len(axis["values"])))
            ax.set_xticklabels(axis["values"], rotation=20, ha="right", fontsize="small")
            ax.set_xlabel(axis["name"])
        else:
            nums = axis["numbers"]
            if min(nums) > 0 and max(nums) / min(nums) >= 16:
                ax.set_xscale("log", base=2 if axis.get("unit") == "bytes" else 10)
            if len(nums) <= 12:
                # Ticks at the swept values, labelled as the experiment wrote them.
                ax.set_xticks(nums)
                ax.set_xticklabels(axis["values"], fontsize="small")
                ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
                ax.set_xlabel(axis["name"])
            else:
                ax.set_xlabel(f"{axis['name']} ({scaled_axis(ax, axis.get('unit'), 'x')})"
                              if axis.get("unit") in SCALED_UNITS else axis["name"])
        if fname.endswith("bytes"):
            ax.set_ylabel(f"{fname} ({byte_axis(ax)})")
        elif fname.endswith("_s"):
            ax.set_ylabel(f"{fname} ({scaled_axis(ax, 's')})")
        else:
            ax.set_ylabel(fname)
        ax.set_title(f"{fname} vs {axis['name']}", fontsize="medium")
        ax.grid(True, alpha=0.3)
        if len(series) > 1 and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="x-small")
    for k in range(len(figs or [None]), rows_n * cols):
        grid[k // cols][k % cols].axis("off")
    fig.suptitle(f"{results.get('title', results.get('experiment', ''))}: against {axis['name']}"
                 + ("  (x = out of memory)" if any(r.get("status") == "oom" for r in results["rows"]) else ""))
    fig.tight_layout()
    return fig


def timeline_figure(tl, which):
    """A Figure for one timeline plot: 'memory', 'address-map' or 'links'."""
    if which == "links":
        fig, ax = plt.subplots(figsize=(10, 3.5))
        link_util(tl, ax)
        fig.tight_layout()
        return fig
    mems = tl.memories() or ["(none)"]
    fig, grid = plt.subplots(len(mems), 1, figsize=(10, 3.6 * len(mems)), squeeze=False)
    for i, mem in enumerate(mems):
        (memory_by_tag if which == "memory" else address_map)(tl, mem, grid[i][0])
    fig.tight_layout()
    return fig


def save(fig, path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    fig.savefig(tmp, dpi=90, format="png")
    plt.close(fig)
    os.replace(tmp, path)
