#!/usr/bin/env python3
"""cuDNN's time on a model's conv2d layers: the GPU yardstick for hetc's cuda
backend (README.md, "Benchmarks").

Reads a hetc model (api/model-format.md; default samples/resnet50.json),
infers every node's shape and times torch.nn.functional.conv2d in fp32 on
each distinct conv2d shape (N, C, H, W, K, R, S, stride, padding, dilation,
groups), with torch.backends.cudnn.benchmark on: once with TF32 off (strict
fp32, what hetc's fp32 kernels compute) and once with TF32 allowed (the
tensor cores; what PyTorch does by default for convolutions). Each time is
the median of --repeat runs (at least 20) after --warmup runs, every run
bracketed by its own pair of CUDA events with the GPU's queue kept ahead of
the host (a torch.cuda._sleep before the timed runs), so launch overhead
stays out of the kernel time. The plain convolution is timed: no bias,
residual or activation (hetc fuses those into its kernel; cuDNN's number is
the harder yardstick).

Rows are named and ordered like hetc's tasks: with --hetc-tasks FILE (what
`hetc tasks MODEL` printed) one row per hetc conv2d task, with its task
number, count and full workload key, so the rows join with
bench_conv_vs_onednn's table by task number (join_cudnn.py); a task's
epilogue does not change its cuDNN time, so tasks of one shape share one
timing. Without it, one row per distinct shape, named by the shape part of
hetc's key, in the order hetc's loader sorts the model's nodes (its task
list, made after fusion, can order them differently: join by shape then).
Either way the model's own conv2d nodes are enumerated and, with
--hetc-tasks, checked against the task list (a warning where hetc made
conv2d tasks of other ops, e.g. a batch_norm with no conv before it).

Prints a table (layer, GFLOP, ms, GFLOPS for fp32 and TF32, and the whole
network: every conv2d node, each shape weighted by how often it occurs) and
writes --csv.

  cudnn_layers.py [--model PATH] [--hetc-tasks FILE] [--device cuda|cpu]
                  [--repeat N] [--warmup N] [--csv PATH] [--dry-run]

--dry-run enumerates the layers and writes the CSV without timing anything
(no PyTorch needed); --device cpu times PyTorch's CPU convolution instead
(wall clock; only to try the script where there is no GPU).
"""
import argparse
import collections
import csv
import json
import math
import os
import re
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SHAPE_FIELDS = ("n", "c", "h", "w", "k", "r", "s", "stride_h", "stride_w", "pad_t", "pad_l", "pad_b", "pad_r",
                "dil_h", "dil_w", "groups")
Shape = collections.namedtuple("Shape", SHAPE_FIELDS)

# ---- the model: shapes of every node, in hetc's topological order ----------


def pair(value, default):
    if value is None:
        return list(default)
    return [int(value[0]), int(value[1])]


def padding4(value):
    """[top, left, bottom, right]; a 2-list [h, w] is symmetric."""
    if value is None:
        return [0, 0, 0, 0]
    if len(value) == 2:
        return [int(value[0]), int(value[1]), int(value[0]), int(value[1])]
    return [int(v) for v in value]


def conv_out(size, pad_a, pad_b, kernel, stride, dilation):
    return (size + pad_a + pad_b - dilation * (kernel - 1) - 1) // stride + 1


def pool_out(size, pad_a, pad_b, kernel, stride, ceil_mode):
    span = size + pad_a + pad_b - kernel
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    # A window that would start inside the bottom/right padding only is
    # dropped (as in PyTorch).
    if ceil_mode and (out - 1) * stride >= size + pad_a:
        out -= 1
    return out


def topological_order(inputs, nodes):
    """Kahn's algorithm as hetc's loader runs it (driver/model/loader.c):
    the ready nodes in /nodes order first, then each node's consumers in
    /nodes order as their last input becomes ready; FIFO."""
    index = {node["name"]: i for i, node in enumerate(nodes)}
    pending = [0] * len(nodes)
    consumers = [[] for _ in nodes]
    for i, node in enumerate(nodes):
        for name in node.get("inputs", []):
            if name in index:
                pending[i] += 1
                consumers[index[name]].append(i)
    order = [i for i in range(len(nodes)) if pending[i] == 0]
    head = 0
    while head < len(order):
        for c in consumers[order[head]]:
            pending[c] -= 1
            if pending[c] == 0:
                order.append(c)
        head += 1
    if len(order) != len(nodes):
        raise SystemExit("cudnn_layers: the model has a cycle")
    return order


def model_convs(path):
    """The model's conv2d nodes in hetc's order: [(node name, Shape)]."""
    with open(path) as f:
        model = json.load(f)
    shapes = {i["name"]: [int(d) for d in i["shape"]] for i in model["inputs"]}
    nodes = model["nodes"]
    convs = []
    for i in topological_order(model["inputs"], nodes):
        node = nodes[i]
        op, attrs = node["op"], node.get("attrs", {})
        ins = [shapes[name] for name in node["inputs"]]
        x = ins[0]
        if op == "conv2d":
            kh, kw = pair(attrs["kernel"], None)
            sh, sw = pair(attrs.get("strides"), (1, 1))
            dh, dw = pair(attrs.get("dilation"), (1, 1))
            pt, pl, pb, pr = padding4(attrs.get("padding"))
            groups = int(attrs.get("groups", 1))
            k = int(attrs["channels"])
            out = [x[0], k, conv_out(x[2], pt, pb, kh, sh, dh), conv_out(x[3], pl, pr, kw, sw, dw)]
            convs.append((node["name"], Shape(x[0], x[1], x[2], x[3], k, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw,
                                              groups)))
        elif op == "dense":
            out = [x[0], int(attrs["units"])]
        elif op in ("max_pool2d", "avg_pool2d"):
            kh, kw = pair(attrs["kernel"], None)
            sh, sw = pair(attrs.get("strides"), (1, 1))
            pt, pl, pb, pr = padding4(attrs.get("padding"))
            ceil_mode = bool(attrs.get("ceil_mode", False))
            out = [x[0], x[1], pool_out(x[2], pt, pb, kh, sh, ceil_mode), pool_out(x[3], pl, pr, kw, sw, ceil_mode)]
        elif op == "global_avg_pool2d":
            out = [x[0], x[1], 1, 1]
        elif op == "concat":
            axis = int(attrs.get("axis", 1))
            axis = axis + len(x) if axis < 0 else axis
            out = list(x)
            out[axis] = sum(s[axis] for s in ins)
        elif op == "flatten":
            out = [x[0], math.prod(x[1:])]
        elif op == "reshape":
            out = [int(d) for d in attrs["shape"]]
            if -1 in out:
                known = math.prod(d for d in out if d != -1)
                out[out.index(-1)] = math.prod(x) // known
        else:  # batch_norm, bias_add, activations, add, multiply, softmax
            out = list(x)
        shapes[node["name"]] = out
    return convs


def shape_key(s):
    """The shape part of hetc's workload key (driver/graph/tasks.c)."""
    return (f"n{s.n} c{s.c} h{s.h} w{s.w} k{s.k} r{s.r}x{s.s} s{s.stride_h}x{s.stride_w} "
            f"p{s.pad_t},{s.pad_l},{s.pad_b},{s.pad_r} d{s.dil_h}x{s.dil_w} g{s.groups}")


KEY_RE = re.compile(r"n(\d+) c(\d+) h(\d+) w(\d+) k(\d+) r(\d+)x(\d+) s(\d+)x(\d+) p(\d+),(\d+),(\d+),(\d+) "
                    r"d(\d+)x(\d+) g(\d+)")


def parse_key(text):
    m = KEY_RE.match(text)
    return Shape(*(int(v) for v in m.groups())) if m else None


def flops(s):
    oh = conv_out(s.h, s.pad_t, s.pad_b, s.r, s.stride_h, s.dil_h)
    ow = conv_out(s.w, s.pad_l, s.pad_r, s.s, s.stride_w, s.dil_w)
    return 2.0 * s.n * s.k * oh * ow * (s.c // s.groups) * s.r * s.s


def hetc_tasks(path):
    """conv2d rows of `hetc tasks` output: [(task, count, key, Shape)]."""
    rows = []
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*(\d+)\s+(\d+)\s+[\d.]+\s+conv2d (\S.*\S)\s*$", line)
            if m:
                shape = parse_key(m.group(3))
                if shape is None:
                    raise SystemExit(f"cudnn_layers: {path}: cannot read the workload '{m.group(3)}'")
                rows.append((int(m.group(1)), int(m.group(2)), m.group(3), shape))
    if not rows:
        raise SystemExit(f"cudnn_layers: {path}: no conv2d task lines (expected `hetc tasks MODEL` output)")
    return rows


# ---- timing ------------------------------------------------------------------


def set_tf32(torch, allowed):
    """TF32 for cuDNN convolutions, through the API this PyTorch has (2.9+
    has fp32_precision and deprecates allow_tf32; the two must not be
    mixed). Returns a description."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):
        try:
            conv.fp32_precision = "tf32" if allowed else "ieee"
            return f"torch.backends.cudnn.conv.fp32_precision = {conv.fp32_precision!r}"
        except Exception:  # noqa: BLE001 -- an older 'conv' namespace: fall back
            pass
    torch.backends.cudnn.allow_tf32 = allowed
    return f"torch.backends.cudnn.allow_tf32 = {torch.backends.cudnn.allow_tf32}"


class Timer:
    def __init__(self, torch, device, repeat, warmup):
        self.torch, self.device, self.repeat, self.warmup = torch, device, repeat, warmup
        self.inputs = {}

    def operands(self, s):
        if s not in self.inputs:
            torch = self.torch
            g = torch.Generator(device="cpu").manual_seed(1234)
            x = torch.rand((s.n, s.c, s.h, s.w), generator=g) * 2 - 1
            w = (torch.rand((s.k, s.c // s.groups, s.r, s.s), generator=g) * 2 - 1) / math.sqrt(
                (s.c // s.groups) * s.r * s.s)
            # F.conv2d pads symmetrically: asymmetric padding is applied to
            # the input once, outside the timed region.
            symmetric = s.pad_t == s.pad_b and s.pad_l == s.pad_r
            if not symmetric:
                x = torch.nn.functional.pad(x, (s.pad_l, s.pad_r, s.pad_t, s.pad_b))
            padding = (s.pad_t, s.pad_l) if symmetric else (0, 0)
            self.inputs[s] = (x.to(self.device).contiguous(), w.to(self.device).contiguous(), padding)
        return self.inputs[s]

    def median_ms(self, s):
        torch = self.torch
        x, w, padding = self.operands(s)
        F = torch.nn.functional

        def run():
            return F.conv2d(x, w, None, (s.stride_h, s.stride_w), padding, (s.dil_h, s.dil_w), s.groups)

        with torch.inference_mode():
            for _ in range(self.warmup):  # the first run picks cuDNN's algorithm (benchmark mode)
                run()
            if self.device == "cpu":
                samples = []
                for _ in range(self.repeat):
                    t = time.perf_counter()
                    run()
                    samples.append((time.perf_counter() - t) * 1e3)
                return statistics.median(samples)
            torch.cuda.synchronize()
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.repeat)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.repeat)]
            # Keep the GPU busy while the host queues every timed run, so each
            # event pair brackets GPU work only (~0.1 ms of host time a run).
            if hasattr(torch.cuda, "_sleep"):
                torch.cuda._sleep(int(self.repeat * 2e5))
            for start, end in zip(starts, ends):
                start.record()
                run()
                end.record()
            torch.cuda.synchronize()
            return statistics.median(start.elapsed_time(end) for start, end in zip(starts, ends))


# ---- main --------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=os.path.join(ROOT, "samples", "resnet50.json"))
    parser.add_argument("--hetc-tasks", help="output of `hetc tasks MODEL`: rows per hetc task, joinable by number")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per layer and mode (median; >= 20)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--csv", help="write the table as CSV here")
    parser.add_argument("--dry-run", action="store_true", help="enumerate the layers only; no PyTorch")
    args = parser.parse_args()
    if args.repeat < 20 and not args.dry_run:
        parser.error("--repeat must be at least 20 (the median of >= 20 runs)")
    if args.warmup < 1:
        parser.error("--warmup must be at least 1 (the first run picks the algorithm)")

    convs = model_convs(args.model)
    per_shape = collections.Counter(shape for _, shape in convs)
    model_name = os.path.splitext(os.path.basename(args.model))[0]
    if args.hetc_tasks:
        rows = [{"task": t, "count": c, "layer": key, "shape": shape} for t, c, key, shape in hetc_tasks(args.hetc_tasks)]
        from_tasks = collections.Counter()
        for row in rows:
            from_tasks[row["shape"]] += row["count"]
        if from_tasks != per_shape:
            print(f"cudnn_layers: warning: hetc's tasks and the model's conv2d nodes differ "
                  f"(hetc lowers some other ops to conv2d, or the model was changed): "
                  f"only in tasks {dict((shape_key(k), v) for k, v in (from_tasks - per_shape).items())}, "
                  f"only in the model {dict((shape_key(k), v) for k, v in (per_shape - from_tasks).items())}",
                  file=sys.stderr)
    else:
        rows = [{"task": "", "count": n, "layer": shape_key(shape), "shape": shape} for shape, n in per_shape.items()]

    # What is timed and how each shape weighs in the whole network: the
    # rows' shapes and counts (hetc's tasks, or the model's conv2d nodes).
    weights = collections.Counter()
    for row in rows:
        weights[row["shape"]] += row["count"]
    layers = sum(weights.values())
    modes = []  # (column name, tf32 allowed)
    header = [f"{model_name}: {layers} conv2d layers" + (f" in {len(rows)} hetc tasks" if args.hetc_tasks else "") +
              f", {len(weights)} distinct shapes"]
    timer = None
    if not args.dry_run:
        try:
            import torch
        except ImportError as e:
            raise SystemExit(f"cudnn_layers: PyTorch is needed to time ({e}); --dry-run only enumerates")
        if args.device == "cuda":
            if not torch.cuda.is_available():
                raise SystemExit("cudnn_layers: no CUDA device visible to PyTorch (torch.cuda.is_available() is "
                                 "False); --device cpu or --dry-run work without one")
            props = torch.cuda.get_device_properties(0)
            header.append(f"device: {props.name}, {props.multi_processor_count} SMs; torch {torch.__version__}, "
                          f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
            torch.backends.cudnn.enabled = True
            torch.backends.cudnn.benchmark = True
            modes = [("fp32", False), ("tf32", True)]
        else:
            header.append(f"device: cpu ({torch.get_num_threads()} threads); torch {torch.__version__} "
                          f"(no cuDNN: a trial of the script, not a yardstick)")
            modes = [("fp32", False)]
        timer = Timer(torch, args.device, args.repeat, args.warmup)
        header.append(f"torch.nn.functional.conv2d, fp32 tensors, no bias; median of {args.repeat} runs after "
                      f"{args.warmup} warm-up runs" + (", CUDA events, cudnn.benchmark on" if args.device == "cuda"
                                                       else ", wall clock"))

    timings = {}  # (shape, mode) -> ms
    for name, tf32 in modes:
        if args.device == "cuda":
            header.append(f"{name}: {set_tf32(timer.torch, tf32)}")
        for shape in weights:
            timings[(shape, name)] = timer.median_ms(shape)
    if args.device == "cuda" and modes:
        set_tf32(timer.torch, False)

    for line in header:
        print(line)
    print()
    mode_names = [m for m, _ in modes] or ["fp32", "tf32"]
    cols = "".join(f" | {m + ' ms':>9} {m + ' GFLOPS':>12}" for m in mode_names)
    print(f"{'#':>3} {'x':>3} {'layer':<50} {'GFLOP':>7}{cols}")
    out_rows = []
    for row in rows:
        s = row["shape"]
        gflop = flops(s) / 1e9
        line = f"{row['task']!s:>3} {row['count']:>3} {row['layer'][:50]:<50} {gflop:7.3f}"
        record = {"task": row["task"], "count": row["count"], "layer": row["layer"], "shape": shape_key(s),
                  **s._asdict(), "gflop": f"{gflop:.6f}"}
        for m in mode_names:
            ms = timings.get((s, m))
            line += f" | {ms:9.4f} {gflop / ms * 1e3:12.1f}" if ms else f" | {'-':>9} {'-':>12}"
            record[f"{m}_ms"] = f"{ms:.6f}" if ms else ""
            record[f"{m}_gflops"] = f"{gflop / ms * 1e3:.2f}" if ms else ""
        print(line)
        out_rows.append(record)
    total_gflop = sum(flops(s) * n for s, n in weights.items()) / 1e9
    print(f"\nwhole network ({layers} conv2d layers, {total_gflop:.2f} GFLOP):", end="")
    for m in mode_names:
        if all((s, m) in timings for s in weights):
            total_ms = sum(timings[(s, m)] * n for s, n in weights.items())
            print(f"  {m} {total_ms:.3f} ms ({total_gflop / total_ms * 1e3:.1f} GFLOPS)", end="")
    print()
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()))
            writer.writeheader()
            writer.writerows(out_rows)
        print(f"wrote {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
