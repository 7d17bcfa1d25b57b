#!/usr/bin/python3
"""report.py: the HTML report of a strata sweep, from its results files only.

Usage: report.py OUT_DIR [-o REPORT.html] [--max-detail N]

Reads OUT_DIR/results.json (written by `strata sweep`) and the timelines of
its points (OUT_DIR/points/ID.timeline.json), draws the plots the experiment
asked for into OUT_DIR/plots/, and writes one self-contained HTML page
(plots inlined as base64 PNG, no scripts or styles fetched from anywhere) to
OUT_DIR/report.html, through a temporary file and a rename.

Plots: one chart per sweep axis (every numeric figure against it); and for
up to --max-detail points with a timeline: memory in use stacked by tag, the
address-space map, link utilization.
"""
import argparse
import base64
import html
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_viz as sv  # noqa: E402

CSS = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { margin-bottom: 0.2em; } .desc { color: #555; margin-top: 0; }
table { border-collapse: collapse; font-size: 13px; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; } td.axis { text-align: left; background: #fafafa; }
tr.oom td { background: #fde2e2; } img.plot { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
details { margin: 0.5em 0; } summary { cursor: pointer; font-weight: bold; }
code { background: #f4f4f4; padding: 1px 4px; }
"""

# Counts the plots that decoded, for the headless-browser test and for readers.
SCRIPT = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img.plot');
  var ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.body.setAttribute('data-plots-loaded', String(ok));
  document.body.setAttribute('data-plots-total', String(imgs.length));
  var s = document.getElementById('plots-status');
  if (s) s.textContent = ok + ' of ' + imgs.length + ' plots shown';
});
"""


def fmt_value(name, v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) and name.endswith("_bytes"):
        return f'<span title="{v}">{sv.human_bytes(v)}</span>'
    if isinstance(v, float):
        if name.endswith("_s"):
            scale, unit = sv.time_unit(abs(v) or 1e-9)
            return f'<span title="{v!r}">{v * scale:.4g} {unit}</span>'
        return f"{v:.6g}"
    return html.escape(str(v))


def img_tag(path, alt):
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def pick_detail_points(rows, limit):
    with_tl = [r for r in rows if r.get("timeline")]
    if len(with_tl) <= limit:
        return with_tl
    step = (len(with_tl) - 1) / (limit - 1) if limit > 1 else 0
    return [with_tl[round(i * step)] for i in range(limit)]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("-o", "--output", help="report path (default OUT_DIR/report.html)")
    ap.add_argument("--max-detail", type=int, default=6, help="points with timeline plots (default 6)")
    args = ap.parse_args(argv)
    out = args.out_dir
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        results = json.load(f)
    plots_wanted = set(results.get("plots", []))
    plot_dir = os.path.join(out, "plots")
    rows = results.get("rows", [])
    axes = results.get("axes", [])
    figures = results.get("figures", [])
    parts = []
    title = results.get("title") or results.get("experiment", "sweep")
    n_oom = sum(1 for r in rows if r.get("status") == "oom")
    parts.append(f"<h1>{html.escape(title)}</h1>")
    if results.get("description"):
        parts.append(f'<p class="desc">{html.escape(results["description"])}</p>')
    axes_text = ", ".join(f"<code>{html.escape(a['name'])}</code> ({len(a['values'])})" for a in axes) or "none"
    parts.append(f"<p>Experiment <code>{html.escape(results.get('experiment', ''))}</code>, runner "
                 f"<code>{html.escape(results.get('runner', ''))}</code>: {len(rows)} points over axes {axes_text}; "
                 f"{n_oom} ran out of memory. Tables: <a href=\"results.csv\">results.csv</a>, "
                 f"<a href=\"results.json\">results.json</a>. <span id=\"plots-status\"></span></p>")

    if "axes" in plots_wanted and axes and rows:
        parts.append("<h2>Figures against each axis</h2>")
        for i, axis in enumerate(axes):
            path = os.path.join(plot_dir, f"axis-{i}.png")
            sv.save(sv.axis_chart(results, i), path)
            parts.append(img_tag(path, f"figures against {axis['name']}"))

    parts.append("<h2>Results</h2><table><tr>")
    parts.extend(f"<th>{html.escape(a['name'])}</th>" for a in axes)
    parts.extend(f"<th>{html.escape(f)}</th>" for f in figures)
    parts.append("</tr>")
    for r in rows:
        cls = ' class="oom"' if r.get("status") == "oom" else ""
        parts.append(f"<tr{cls}>")
        parts.extend(f'<td class="axis">{html.escape(str(r.get(a["name"], "")))}</td>' for a in axes)
        parts.extend(f"<td>{fmt_value(f, r.get(f))}</td>" for f in figures)
        parts.append("</tr>")
    parts.append("</table>")

    detail_kinds = [k for k in ("memory", "address-map", "links") if k in plots_wanted]
    detail = pick_detail_points(rows, args.max_detail) if detail_kinds else []
    if detail:
        parts.append("<h2>Timelines</h2>")
        parts.append("<p>Each point's timeline (<code>points/ID.timeline.json</code>) opens in "
                     "<a href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a> (Open trace file).</p>")
        for n, r in enumerate(detail):
            tl_path = os.path.join(out, "points", r["timeline"])
            label = ", ".join(f"{a['name']}={r.get(a['name'])}" for a in axes) or "the only point"
            parts.append(f"<details{' open' if n == 0 else ''}><summary>point {r['point']}: {html.escape(label)}"
                         f" ({html.escape(str(r.get('status')))})</summary>")
            if not os.path.exists(tl_path):
                parts.append(f"<p>timeline {html.escape(r['timeline'])} is missing</p></details>")
                continue
            tl = sv.Timeline(tl_path)
            parts.append(f'<p><a href="points/{html.escape(r["timeline"])}">{html.escape(r["timeline"])}</a></p>')
            for kind in detail_kinds:
                path = os.path.join(plot_dir, f"point-{r['point']}-{kind}.png")
                sv.save(sv.timeline_figure(tl, kind), path)
                parts.append(img_tag(path, f"point {r['point']} {kind}"))
            parts.append("</details>")

    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(parts) + f"\n<script>{SCRIPT}</script>\n</body></html>\n")
    target = args.output or os.path.join(out, "report.html")
    tmp = target + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
