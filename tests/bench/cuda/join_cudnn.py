#!/usr/bin/env python3
"""hetc's conv2d kernels against cuDNN, layer by layer: joins the table
bench_conv_vs_onednn printed (tests/bench/bench_conv_vs_onednn.c, any of
its forms: with or without oneDNN, --search or --records, --baseline) with
the CSV cudnn_layers.py wrote.

Per layer: hetc's ms, GFLOPS and % of the peak the bench used (the GPU
descriptor's fp32 peak for a GPU target, which its header names; --peak
overrides), cuDNN's fp32 (TF32 off) ms, GFLOPS and % of that peak, cuDNN
with TF32, and the ratios cuDNN time / hetc time (> 1: hetc is faster),
against fp32 and against TF32; for every hetc column of the bench (default,
and searched or tuned when it has one). Then the geometric mean of each
ratio over the distinct layers and the whole network (every conv2d layer,
each task weighted by its count).

Rows join by hetc task number when the CSV has them (cudnn_layers.py
--hetc-tasks), checking that the shapes agree; otherwise by shape.

  join_cudnn.py --bench BENCH.txt --cudnn CUDNN.csv [--csv OUT.csv] [--peak GFLOPS]
"""
import argparse
import csv
import math
import re
import sys

ROW_RE = re.compile(r"^(\d+)\s+(\d+)\s+(.{46})\s+(\d+(?:\.\d+)?) \|(.*)$")
PEAK_RE = {
    "device": re.compile(r"^device peak \(target '([^']+)' device 0 descriptor, (.*)\): ([\d.]+) GFLOPS fp32"),
    "machine": re.compile(r"^machine peak \(measured FMA loop, (\d+) threads?\): ([\d.]+) GFLOPS fp32"),
}


def fail(message):
    sys.exit(f"join_cudnn: {message}")


def parse_hetc_group(text, with_ratio):
    """' name  ms GFLOPS %peak [ratio] ' -> (name, ms, GFLOPS) as printed."""
    tokens = text.split()
    if with_ratio:
        tokens = tokens[:-1]  # oneDNN time / hetc time
    if len(tokens) < 4 or not tokens[-1].endswith("%"):
        raise ValueError(f"not a hetc column: '{text}'")
    return " ".join(tokens[:-3]), float(tokens[-3]), float(tokens[-2])


def hetc_ms(ms, gflops, flop):
    """The bench prints ms to 3 decimals (1 us: coarse for a GPU kernel of
    10 us) and GFLOPS to 1: the time from whichever is more precise."""
    if gflops > 0 and 0.05 / gflops < 0.0005 / max(ms, 1e-9):
        return flop / gflops / 1e6
    return ms


def read_bench(path):
    with open(path) as f:
        lines = f.read().splitlines()
    bench = {"peak": None, "peak_text": None, "columns": [], "rows": [], "target": None}
    for line in lines:
        m = PEAK_RE["device"].match(line)
        if m:
            bench["peak"], bench["peak_text"] = float(m.group(3)), f"{m.group(2)} ({m.group(1)} device descriptor)"
            bench["target"] = m.group(1)
        m = PEAK_RE["machine"].match(line)
        if m and bench["peak"] is None:
            bench["peak"], bench["peak_text"] = float(m.group(2)), f"the CPU's measured FMA peak ({m.group(1)} threads)"
        m = re.match(r"^\S+ conv2d layers: hetc target '([^']+)'", line)
        if m:
            bench["target"] = m.group(1)
    header = next((line for line in lines if line.startswith("#   x   layer")), None)
    if header is None:
        fail(f"{path}: no table (no line starting '#   x   layer'): is this bench_conv_vs_onednn's output?")
    groups = header.split("|")
    with_ratio = "ratio" in groups[1]
    # The hetc columns: group 1 (default), and group 2 when it is the
    # searched/tuned one; a baseline's group and oneDNN's are not read.
    bench["columns"] = ["default"]
    if len(groups) > 2 and ("searched template" in groups[2] or "tuned template" in groups[2]):
        bench["columns"].append("searched" if "searched" in groups[2] else "tuned")
    for line in lines:
        m = ROW_RE.match(line)
        if not m:
            continue
        parts = m.group(5).split("|")
        row = {"task": int(m.group(1)), "count": int(m.group(2)), "layer": m.group(3).rstrip(),
               "mflop": float(m.group(4)), "hetc": []}
        for k in range(len(bench["columns"])):
            row["hetc"].append(parse_hetc_group(parts[k], with_ratio))
        bench["rows"].append(row)
    if not bench["rows"]:
        fail(f"{path}: the table has no rows (the bench failed before its first layer?)")
    return bench


def read_cudnn(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail(f"{path}: no rows")
    for key in ("layer", "shape", "gflop", "fp32_ms"):
        if key not in rows[0]:
            fail(f"{path}: no '{key}' column (is this cudnn_layers.py's CSV?)")
    if not any(r["fp32_ms"] for r in rows):
        fail(f"{path}: no timings (a --dry-run CSV?)")
    return rows


def match(bench_row, cudnn_rows, by_task):
    """The cuDNN row for a bench row; checks shape and FLOPs."""
    layer = bench_row["layer"]
    shape_part = re.split(r"[+ ]f32|\+", layer)[0]
    if by_task:
        found = [r for r in cudnn_rows if r["task"] and int(r["task"]) == bench_row["task"]]
        if len(found) != 1:
            fail(f"task {bench_row['task']} ({layer}): {len(found)} rows in the cuDNN CSV")
        r = found[0]
        if not (r["layer"].startswith(layer) or r["shape"].startswith(shape_part)):
            fail(f"task {bench_row['task']}: the bench's '{layer}' is not the cuDNN CSV's '{r['layer']}' "
                 f"(were they made from different models or hetc versions?)")
    else:
        found = [r for r in cudnn_rows if r["shape"].startswith(shape_part)]
        # The bench's layer text is cut at 46 characters: FLOPs break ties.
        found = [r for r in found if abs(float(r["gflop"]) * 1e3 - bench_row["mflop"]) <= 0.051] or found
        if len({r["shape"] for r in found}) != 1:
            fail(f"task {bench_row['task']} ({layer}): {len(found)} matching shapes in the cuDNN CSV")
        r = found[0]
    if abs(float(r["gflop"]) * 1e3 - bench_row["mflop"]) > 0.051:
        fail(f"task {bench_row['task']}: {bench_row['mflop']} MFLOP in the bench, {float(r['gflop']) * 1e3:.1f} in the "
             f"cuDNN CSV")
    return r


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", required=True, help="bench_conv_vs_onednn's output")
    parser.add_argument("--cudnn", required=True, help="cudnn_layers.py's CSV")
    parser.add_argument("--csv", help="write the joined table as CSV here")
    parser.add_argument("--peak", type=float, help="the device's fp32 peak in GFLOPS (default: the bench's)")
    args = parser.parse_args()

    bench = read_bench(args.bench)
    cudnn_rows = read_cudnn(args.cudnn)
    peak = args.peak or bench["peak"]
    peak_text = f"{args.peak} GFLOPS (--peak)" if args.peak else f"{peak} GFLOPS, {bench['peak_text']}"
    if not peak:
        fail(f"{args.bench}: no peak line; give --peak")
    by_task = all(r.get("task") for r in cudnn_rows)
    has_tf32 = all(r.get("tf32_ms") for r in cudnn_rows)
    cols = bench["columns"]

    print(f"hetc target '{bench['target']}' vs cuDNN (PyTorch F.conv2d, fp32 tensors) on the same layers")
    print(f"% of peak: of {peak_text}")
    print("ratio: cuDNN time / hetc time (> 1: hetc is faster); fp32: cuDNN with TF32 off; tf32: TF32 allowed")
    print(f"rows joined by {'hetc task number' if by_task else 'shape'}\n")
    head = f"{'#':>3} {'x':>3} {'layer':<46} {'MFLOP':>7}"
    for c in cols:
        head += f" | {'hetc ' + c:<13} {'ms':>8} {'GFLOPS':>8} {'%peak':>6}"
    head += f" | {'cuDNN fp32 ms':>13} {'GFLOPS':>8} {'%peak':>6}"
    if has_tf32:
        head += f" | {'tf32 ms':>8} {'GFLOPS':>8}"
    head += " |" + "".join(f" {('vs fp32' if not k else 'vs tf32') + (' ' + c[:4] if len(cols) > 1 else ''):>12}"
                           for c in cols for k in range(1 + has_tf32))
    print(head)

    out = []
    log_ratio = {(c, k): 0.0 for c in cols for k in ("fp32", "tf32")}
    total = {"flop": 0.0, "fp32": 0.0, "tf32": 0.0, **{c: 0.0 for c in cols}}
    for row in bench["rows"]:
        r = match(row, cudnn_rows, by_task)
        flop = float(r["gflop"]) * 1e9  # the bench's MFLOP, to more digits (match checked them)
        fp32 = float(r["fp32_ms"])
        tf32 = float(r["tf32_ms"]) if has_tf32 else None
        line = f"{row['task']:>3} {row['count']:>3} {row['layer']:<46} {row['mflop']:7.1f}"
        record = {"task": row["task"], "count": row["count"], "layer": r["layer"], "mflop": f"{flop / 1e6:.3f}"}
        ratios = []
        for c, (name, printed_ms, printed_gflops) in zip(cols, row["hetc"]):
            ms = hetc_ms(printed_ms, printed_gflops, flop)
            g = flop / ms / 1e6
            line += f" | {name[:13]:<13} {ms:8.4f} {g:8.1f} {100 * g / peak:5.1f}%"
            record.update({f"hetc_{c}_template": name, f"hetc_{c}_ms": ms, f"hetc_{c}_gflops": round(g, 2),
                           f"hetc_{c}_pct_peak": round(100 * g / peak, 3)})
            total[c] += ms * row["count"]
            for k, lib_ms in (("fp32", fp32), ("tf32", tf32)):
                if lib_ms is None:
                    continue
                ratios.append(lib_ms / ms)
                log_ratio[(c, k)] += math.log(lib_ms / ms)
                record[f"ratio_{c}_vs_{k}"] = round(lib_ms / ms, 4)
        g = flop / fp32 / 1e6
        line += f" | {fp32:13.4f} {g:8.1f} {100 * g / peak:5.1f}%"
        record.update({"cudnn_fp32_ms": fp32, "cudnn_fp32_gflops": round(g, 2),
                       "cudnn_fp32_pct_peak": round(100 * g / peak, 3)})
        if has_tf32:
            line += f" | {tf32:8.4f} {flop / tf32 / 1e6:8.1f}"
            record.update({"cudnn_tf32_ms": tf32, "cudnn_tf32_gflops": round(flop / tf32 / 1e6, 2)})
        line += " |" + "".join(f" {x:11.3f}x" for x in ratios)
        print(line)
        total["flop"] += flop * row["count"]
        total["fp32"] += fp32 * row["count"]
        if has_tf32:
            total["tf32"] += tf32 * row["count"]
        out.append(record)

    n = len(bench["rows"])
    layers = sum(row["count"] for row in bench["rows"])
    print(f"\ngeometric mean over {n} distinct layers of cuDNN time / hetc time:")
    geomean = {"task": "geomean", "count": n, "layer": f"geometric mean over {n} distinct layers"}
    for c in cols:
        text = ", ".join(f"vs {k} {math.exp(log_ratio[(c, k)] / n):.3f}" for k in ("fp32", "tf32")
                         if k == "fp32" or has_tf32)
        print(f"  hetc {c:<8}: {text}")
        geomean.update({f"ratio_{c}_vs_{k}": round(math.exp(log_ratio[(c, k)] / n), 4) for k in ("fp32", "tf32")
                        if k == "fp32" or has_tf32})
    out.append(geomean)
    flop = total["flop"]
    print(f"whole network ({layers} conv2d layers, {flop / 1e9:.2f} GFLOP):")
    whole = {"task": "whole", "count": layers, "layer": "whole network", "mflop": f"{flop / 1e6:.3f}"}
    for c in cols:
        g = flop / total[c] / 1e6
        text = ", ".join(f"vs {k} {total[k] / total[c]:.3f}" for k in ("fp32", "tf32") if k == "fp32" or has_tf32)
        print(f"  hetc {c:<8}: {total[c]:.3f} ms ({g:.1f} GFLOPS, {100 * g / peak:.1f}% of peak); "
              f"cuDNN time / hetc time: {text}")
        whole.update({f"hetc_{c}_ms": round(total[c], 4), f"hetc_{c}_gflops": round(g, 2),
                      f"hetc_{c}_pct_peak": round(100 * g / peak, 3),
                      **{f"ratio_{c}_vs_{k}": round(total[k] / total[c], 4) for k in ("fp32", "tf32")
                         if k == "fp32" or has_tf32}})
    g = flop / total["fp32"] / 1e6
    print(f"  cuDNN fp32   : {total['fp32']:.3f} ms ({g:.1f} GFLOPS, {100 * g / peak:.1f}% of peak)")
    whole.update({"cudnn_fp32_ms": round(total["fp32"], 4), "cudnn_fp32_gflops": round(g, 2),
                  "cudnn_fp32_pct_peak": round(100 * g / peak, 3)})
    if has_tf32:
        g = flop / total["tf32"] / 1e6
        print(f"  cuDNN tf32   : {total['tf32']:.3f} ms ({g:.1f} GFLOPS, {100 * g / peak:.1f}% of the fp32 peak)")
        whole.update({"cudnn_tf32_ms": round(total["tf32"], 4), "cudnn_tf32_gflops": round(g, 2)})
    out.append(whole)
    if args.csv:
        fields = []
        for record in out:
            fields += [k for k in record if k not in fields]
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(out)
        print(f"wrote {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
