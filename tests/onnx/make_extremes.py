#!/usr/bin/env python3
"""Generate tests/onnx/extremes: the corpus's models with attributes at their extremes.

Usage:
    python3 tests/onnx/make_extremes.py           (re)write tests/onnx/extremes/*
    python3 tests/onnx/make_extremes.py --check   regenerate into a temp dir, exit 1
                                                  if a committed file differs
    python3 tests/onnx/make_extremes.py --out DIR write into DIR instead

A differential test: every model of tests/onnx/corpus holding an attribute
or constant that a decomposition could mishandle (a clip bound, a pad value,
an epsilon, a slope, a scale) is written again once per extreme value, huge
and tiny, with onnxruntime's outputs on the corpus's input beside it. An
importer that shifts values by a bound (x - lo + lo) or multiplies by zero
passes the corpus and fails here. Every variant of a whole network would add
hundreds of kilobytes; networks get the first extreme of each kind only.

The files follow the corpus's layout (NAME.onnx, NAME.input.bin,
NAME.expected.bin, corpus.tsv with KIND "ext"); variants are
named MODEL__OP_K. test_onnx_corpus judges them element by element, near zero
on the lower quartile of the output's magnitudes (tests/onnx/float_files.h),
so that a few huge values (a pad of 1e9) do not excuse the rest.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
DEFAULT_OUT = os.path.join(HERE, "extremes")
sys.path.insert(0, HERE)
import make_corpus  # noqa: E402  (its onnxruntime session, tolerances and check)

INF = float("inf")
CLIP_BOUNDS = [(-1e10, 1e10), (-1e4, 1e4), (-3e38, 3e38), (0.3, 0.3), (-1e-30, 1e-30), (1.5, 1e30),
               (-1e30, -1.5)]
PAD_VALUES = [1e9, -1e9, 3e38, INF, -INF, 1e6, 1e-30]
EPSILONS = [1e10, 1e-30]
SLOPES = [1e10, 1e-30, -1e4]
ELU_ALPHAS = [1e10, 1e-30]
HARD_SIGMOID = [(1e10, 0.5), (1e-30, 1e-30), (0.2, 1e10)]
LRN = [(1e10, 1e-4), (1.0, 1e-30)]  # (bias, alpha)
GEMM = [(1e10, 1e10), (1e-30, 1e-30)]  # (alpha, beta)


def set_attr(node, name, value):
    for a in node.attribute:
        if a.name == name:
            node.attribute.remove(a)
            break
    node.attribute.append(helper.make_attribute(name, value))


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def opset_of(model):
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def scalar(model, name, value):
    """A float32 scalar initializer `name` (replaced if there); returns its name."""
    for t in list(model.graph.initializer):
        if t.name == name:
            model.graph.initializer.remove(t)
    model.graph.initializer.append(numpy_helper.from_array(np.array(value, np.float32), name))
    return name


def set_input(node, index, name):
    while len(node.input) <= index:
        node.input.append("")
    node.input[index] = name


# Each mutator: (op type, the extremes, whether a node takes them, how).
def clip_takes(model, node):
    return True


def clip_apply(model, node, bounds):
    lo, hi = bounds
    if opset_of(model) < 11:
        set_attr(node, "min", lo)
        set_attr(node, "max", hi)
    else:
        set_input(node, 1, scalar(model, "extreme.clip_min", lo))
        set_input(node, 2, scalar(model, "extreme.clip_max", hi))


def pad_takes(model, node):
    return attr(node, "mode", b"constant") in (b"constant", "constant")


def pad_apply(model, node, value):
    if opset_of(model) < 11:
        set_attr(node, "value", value)
    else:
        set_input(node, 2, scalar(model, "extreme.pad_value", value))


def always(model, node):
    return True


# Variants looser than their model's tolerance, and why.
LOOSER = {
    "Elu": (1e-3, "alpha * (exp(x) - 1) near x = 0 keeps about four digits in onnxruntime's "
                  "kernel and in hetc's alike, and the lower-quartile floor judges those elements"),
}


MUTATORS = [
    ("Clip", CLIP_BOUNDS, clip_takes, clip_apply),
    ("Pad", PAD_VALUES, pad_takes, pad_apply),
    ("BatchNormalization", EPSILONS, always, lambda m, n, v: set_attr(n, "epsilon", v)),
    ("LeakyRelu", SLOPES, always, lambda m, n, v: set_attr(n, "alpha", v)),
    ("Elu", ELU_ALPHAS, always, lambda m, n, v: set_attr(n, "alpha", v)),
    ("HardSigmoid", HARD_SIGMOID, always,
     lambda m, n, v: (set_attr(n, "alpha", v[0]), set_attr(n, "beta", v[1]))),
    ("LRN", LRN, always, lambda m, n, v: (set_attr(n, "bias", v[0]), set_attr(n, "alpha", v[1]))),
    ("Gemm", GEMM, always, lambda m, n, v: (set_attr(n, "alpha", v[0]), set_attr(n, "beta", v[1]))),
]


def corpus_cases():
    """(name, kind, shape text, rtol text) of every corpus case, in corpus.tsv order."""
    with open(os.path.join(CORPUS, "corpus.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, kind, shape, rtol, _ = line.rstrip("\n").split("\t")
            yield name, kind, shape, rtol


TSV_HEADER = """\
# hetc ONNX extremes: the corpus's models with attributes at their extremes.
# Written by tests/onnx/make_extremes.py; do not edit. Columns as corpus.tsv's;
# KIND is "ext": judged element by element, near zero on 1% of the lower
# quartile of the output's nonzero magnitudes (tests/onnx/float_files.h).
# NAME is MODEL__OP_K: corpus model MODEL with every OP node given extreme K
# of make_extremes.py's list for OP; the input is MODEL's.
"""


def generate(outdir):
    os.makedirs(outdir, exist_ok=True)
    written, lines, skipped = [], [TSV_HEADER], []
    for name, kind, shape, rtol in corpus_cases():
        path = os.path.join(CORPUS, name + ".onnx")
        base = onnx.load(path, load_external_data=False)
        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in base.graph.initializer):
            continue
        x = np.fromfile(os.path.join(CORPUS, name + ".input.bin"), "<f4").reshape(
            [int(d) for d in shape.split("x")])
        for op, extremes, takes, apply in MUTATORS:
            nodes = [i for i, n in enumerate(base.graph.node) if n.op_type == op and takes(base, n)]
            if not nodes:
                continue
            for k, extreme in enumerate(extremes[:1] if kind == "net" else extremes):
                model = onnx.ModelProto()
                model.CopyFrom(base)
                for i in nodes:
                    apply(model, model.graph.node[i], extreme)
                variant = "%s__%s_%d" % (name, op.lower(), k)
                data = model.SerializeToString()
                try:
                    outs = make_corpus.session(data).run(None, {"input": x})
                except Exception as e:  # onnxruntime lacks the kernel (BatchNormalization-6)
                    skipped.append("%s (%s)" % (variant, str(e).splitlines()[0][:80]))
                    continue
                with open(os.path.join(outdir, variant + ".onnx"), "wb") as f:
                    f.write(data)
                with open(os.path.join(outdir, variant + ".input.bin"), "wb") as f:
                    f.write(x.astype("<f4").tobytes())
                with open(os.path.join(outdir, variant + ".expected.bin"), "wb") as f:
                    f.write(b"".join(o.astype("<f4").ravel().tobytes() for o in outs))
                written += [variant + s for s in (".onnx", ".input.bin", ".expected.bin")]
                ops = sorted(set(n.op_type for n in model.graph.node))
                tolerance = rtol
                if op in LOOSER:
                    tolerance = make_corpus.rtol_text(LOOSER[op][0])
                    lines.append("# %s: RTOL %s: %s\n" % (variant, tolerance, LOOSER[op][1]))
                lines.append("%s\text\t%s\t%s\t%s\n" % (variant, shape, tolerance, ",".join(ops)))
    if skipped:
        lines.append("# not written (onnxruntime does not run them): %s\n" % ", ".join(skipped))
    with open(os.path.join(outdir, "corpus.tsv"), "w", newline="\n") as f:
        f.write("".join(lines))
    written.append("corpus.tsv")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if a committed file is out of date")
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory (default: tests/onnx/extremes)")
    args = ap.parse_args(argv)
    if args.check:
        return make_corpus.check(args.out, generate, "tests/onnx/extremes", "make_extremes.py")
    if os.path.isdir(args.out):
        for n in os.listdir(args.out):
            if n.endswith((".onnx", ".bin", ".tsv")):
                os.remove(os.path.join(args.out, n))
    names = generate(args.out)
    print("wrote %d files to %s" % (len(names), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
