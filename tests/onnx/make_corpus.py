#!/usr/bin/env python3
"""Generate the ONNX import corpus of tests/onnx (one small model per case).

Usage:
    python3 tests/onnx/make_corpus.py           (re)write tests/onnx/corpus/*
    python3 tests/onnx/make_corpus.py --check   regenerate into a temp dir, exit 1
                                                if a committed file differs
    python3 tests/onnx/make_corpus.py --out DIR write into DIR instead

For every case NAME the corpus holds NAME.onnx (the model), NAME.input.bin (its
one data input) and NAME.expected.bin (every graph output, in graph-output
order, concatenated), all float32 little-endian row-major; corpus.tsv lists the
cases (its header comment describes the columns). The expected outputs come
from onnxruntime's CPUExecutionProvider, with graph optimizations off and one
thread, so that two runs on one machine give the same bytes.

The models imitate what PyTorch's exporter writes (node names like
"/layer1/0/conv1/Conv", weights like "layer1.0.conv1.weight", Conv attributes
spelled out, Shape/Gather/Unsqueeze/Concat/Reshape before a classifier, ...),
built with onnx.helper since torch is not needed. Weights and inputs come from
numpy's legacy RandomState seeded with the crc32 of the case name, whose
streams numpy keeps stable across versions.

--check compares every file byte for byte, except that NAME.expected.bin may
differ within a relative 1e-5 (printed as a note): onnxruntime picks its
kernels by CPU, so another machine can round the last bits differently.

No variant had to be dropped. One onnxruntime refuses to run:
  * BatchNormalization-6 (batchnorm_opset6, is_test=1) has no onnxruntime
    kernel; the model is kept as opset 6 and its expected output comes from the
    same graph, same weights, stamped opset 7 (is_test dropped, spatial=1),
    which computes the same function.
"""

import argparse
import os
import sys
import tempfile
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, external_data_helper, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "corpus")

RTOL = 1e-4       # the normal tolerance
# Whole networks are held to the normal tolerance too: on vec, cpu and opencl
# their worst error measured 1.5e-5 (a stack of convolutions, each summing
# hundreds of products in another order).
RTOL_NET = RTOL
NET_WHY = None
CHECK_RTOL = 1e-5  # --check: how far a regenerated expected.bin may drift

# The IR version each opset came with (onnx/helper.py VERSION_TABLE): what an
# exporter stamps. IR 3 (opset < 9 here) still requires every initializer to be
# listed among the graph inputs, as old PyTorch exports do.
IR_FOR_OPSET = {6: 3, 7: 3, 9: 4, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 23: 11, 25: 11, 28: 11}

PRODUCER = "hetc-make_corpus"

# ---------------------------------------------------------------------------
# Graph builder
# ---------------------------------------------------------------------------


def scope_of(name):
    """A PyTorch module path ("layer1.0.conv1") as a node scope ("/layer1/0/conv1")."""
    return "/" + name.replace(".", "/") if name else ""


class Graph:
    """Collects nodes and initializers of one model, PyTorch-style names."""

    def __init__(self, case, opset):
        self.opset = opset
        self.rank = len(case.shape)
        seed = zlib.crc32(case.name.encode())
        self.rng = np.random.RandomState(seed)
        self.x = "input"
        self.nodes = []
        self.inits = []
        self.init_names = set()
        self.node_names = set()

    # -- values ------------------------------------------------------------
    def normal(self, shape, std=1.0, mean=0.0):
        return (self.rng.standard_normal(shape) * std + mean).astype(np.float32)

    def uniform(self, shape, lo, hi):
        return self.rng.uniform(lo, hi, shape).astype(np.float32)

    def he(self, shape):
        """Kaiming-normal weights: keeps activations of order 1 through a net."""
        fan_in = int(np.prod(shape[1:]))
        return self.normal(shape, np.sqrt(2.0 / fan_in))

    def init(self, name, array):
        """An initializer (raw_data, as exporters write); returns its name."""
        assert name not in self.init_names, name
        self.init_names.add(name)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def shared(self, name, array):
        """An initializer several nodes read (added once)."""
        return name if name in self.init_names else self.init(name, array)

    def i64(self, name, values):
        return self.init(name, np.array(values, dtype=np.int64))

    def f32(self, name, values):
        return self.init(name, np.array(values, dtype=np.float32))

    # -- nodes -------------------------------------------------------------
    def node(self, op, inputs, scope="", **attrs):
        """Append a node named like PyTorch's ("/scope/Op", "/scope/Op_1", ...)."""
        base = "%s/%s" % (scope, op)
        name, k = base, 0
        while name in self.node_names:
            k += 1
            name = "%s_%d" % (base, k)
        self.node_names.add(name)
        out = name + "_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def op(self, op, inputs, name="", **attrs):
        return self.node(op, inputs, scope_of(name), **attrs)

    def constant(self, values, scope=""):
        """A Constant node (how PyTorch writes the scalars of shape arithmetic)."""
        arr = np.asarray(values)
        return self.node("Constant", [], scope, value=numpy_helper.from_array(arr))

    # -- layers ------------------------------------------------------------
    def conv(self, x, cin, cout, k, name, stride=1, pad=None, dilation=1, group=1,
             bias=True, pads=None, auto_pad=None, minimal=False):
        """Conv the way PyTorch writes it: all of dilations, group, kernel_shape,
        pads, strides spelled out (minimal=True: only pads, the rest defaulted)."""
        kh, kw = (k, k) if isinstance(k, int) else k
        w = self.init(name + ".weight", self.he([cout, cin // group, kh, kw]))
        inputs = [x, w]
        if bias:
            inputs.append(self.init(name + ".bias", self.normal([cout], 0.1)))
        if pads is None and auto_pad is None:
            ph, pw = (dilation * (kh - 1) // 2, dilation * (kw - 1) // 2) if pad is None \
                else ((pad, pad) if isinstance(pad, int) else pad)
            pads = [ph, pw, ph, pw]
        if minimal:
            return self.op("Conv", inputs, name, pads=pads)
        attrs = dict(dilations=[dilation, dilation], group=group, kernel_shape=[kh, kw],
                     strides=[stride, stride])
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        else:
            attrs["pads"] = pads
        return self.op("Conv", inputs, name, **attrs)

    def bn(self, x, c, name, eps=1e-5):
        """Eval-mode BatchNormalization with its four parameter tensors."""
        scale = self.init(name + ".weight", self.uniform([c], 0.5, 1.5))
        shift = self.init(name + ".bias", self.normal([c], 0.1))
        mean = self.init(name + ".running_mean", self.normal([c], 0.1))
        var = self.init(name + ".running_var", self.uniform([c], 0.5, 1.5))
        attrs = dict(epsilon=eps, momentum=0.9)
        if self.opset < 7:
            attrs["is_test"] = 1
        elif self.opset < 9:
            attrs["spatial"] = 1
        return self.op("BatchNormalization", [x, scale, shift, mean, var], name, **attrs)

    def relu(self, x, name=""):
        return self.op("Relu", [x], name)

    def clip6(self, x, name=""):
        """ReLU6: Clip with min/max inputs (opset 11+), one shared pair of constants."""
        lo = self.shared("clip_min", np.array(0.0, np.float32))
        hi = self.shared("clip_max", np.array(6.0, np.float32))
        return self.op("Clip", [x, lo, hi], name)

    def maxpool(self, x, k, s, p=0, name="", ceil=0):
        return self.op("MaxPool", [x], name, ceil_mode=ceil, kernel_shape=[k, k],
                       pads=[p] * 4, strides=[s, s])

    def avgpool(self, x, k, s, p=0, name="", ceil=0, include_pad=0):
        return self.op("AveragePool", [x], name, ceil_mode=ceil, count_include_pad=include_pad,
                       kernel_shape=[k, k], pads=[p] * 4, strides=[s, s])

    def gap(self, x, name=""):
        return self.op("GlobalAveragePool", [x], name)

    def flatten(self, x, name=""):
        return self.op("Flatten", [x], name, axis=1)

    def gemm(self, x, k, n, name, bias=True):
        """nn.Linear: Gemm with transB=1, weight [n, k]."""
        w = self.init(name + ".weight", self.he([n, k]))
        inputs = [x, w]
        if bias:
            inputs.append(self.init(name + ".bias", self.normal([n], 0.1)))
        return self.op("Gemm", inputs, name, alpha=1.0, beta=1.0, transB=1)

    def unsqueeze0(self, x):
        if self.opset < 13:
            return self.node("Unsqueeze", [x], axes=[0])
        return self.node("Unsqueeze", [x, self.constant(np.array([0], np.int64))])

    def shape_flatten(self, x):
        """x.view(x.size(0), -1): Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape."""
        shape = self.node("Shape", [x])
        batch = self.node("Gather", [shape, self.constant(np.array(0, np.int64))], axis=0)
        batch = self.unsqueeze0(batch)
        target = self.node("Concat", [batch, self.constant(np.array([-1], np.int64))], axis=0)
        return self.node("Reshape", [x, target])

    def shuffle(self, x, c, h, w, groups, name=""):
        """Channel shuffle as ShuffleNet exports it: Reshape 5-d, Transpose, Reshape."""
        s5 = self.i64(name + ".shuffle_shape5", [1, groups, c // groups, h, w])
        s4 = self.i64(name + ".shuffle_shape4", [1, c, h, w])
        y = self.op("Reshape", [x, s5], name)
        y = self.op("Transpose", [y], name, perm=[0, 2, 1, 3, 4])
        return self.op("Reshape", [y, s4], name)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


class Case:
    """One corpus entry; see case() for the options."""

    def __init__(self, fn, kind, shape, opset, rtol, why, symbolic, dist, ref_opset,
                 external, typed, value_info, outputs):
        self.fn = fn
        self.name = fn.__name__
        self.kind = kind
        self.shape = list(shape)
        self.opset = opset
        self.rtol = rtol
        self.why = why
        self.symbolic = symbolic
        self.dist = dist
        self.ref_opset = ref_opset
        self.external = external
        self.typed = typed
        self.value_info = value_info
        self.outputs = outputs


CASES = []


def case(kind, shape, opset=13, rtol=None, why=None, symbolic=False, dist="normal",
         ref_opset=None, external=False, typed=False, value_info=None, outputs=("output",)):
    """Register a model function fn(g) -> output tensor name (a list for several).

    shape: INPUT_SHAPE; opset: default-domain opset (IR version from IR_FOR_OPSET);
    rtol/why: a tolerance other than the kind's default and the reason for it;
    symbolic: input dim 0 is dim_param "N"; dist: input values ("normal",
    "wide" = normal x3, "large" = normal x20, "uniform" = [0,1)); ref_opset:
    onnxruntime runs the same graph at this opset instead; external: weights in
    NAME.weights.bin; typed: initializers in float_data; value_info: run onnx
    shape inference to record intermediate shapes (default: nets, as PyTorch
    does); outputs: the graph output names."""
    def register(fn):
        r = rtol if rtol is not None else (RTOL_NET if kind == "net" else RTOL)
        w = why if why is not None else (NET_WHY if kind == "net" else None)
        vi = value_info if value_info is not None else kind == "net"
        CASES.append(Case(fn, kind, shape, opset, r, w, symbolic, dist, ref_opset,
                          external, typed, vi, list(outputs)))
        return fn
    return register


def op_case(shape, **kw):
    return case("op", shape, **kw)


def net_case(shape, **kw):
    return case("net", shape, **kw)


SHAPE = [1, 8, 16, 16]
IMG = [1, 3, 16, 16]

# -- Conv ------------------------------------------------------------------


@op_case(IMG)
def conv_plain(g):
    """3x3 pad 1 with only `pads` given: kernel_shape comes from the weight."""
    return g.conv(g.x, 3, 8, 3, "conv", minimal=True)


@op_case(IMG)
def conv_bias(g):
    return g.conv(g.x, 3, 8, 3, "conv")


@op_case(IMG)
def conv_no_bias(g):
    return g.conv(g.x, 3, 8, 3, "conv", bias=False)


@op_case(IMG)
def conv_stride2(g):
    return g.conv(g.x, 3, 8, 3, "conv", stride=2)


@op_case(IMG)
def conv_dilation2(g):
    return g.conv(g.x, 3, 8, 3, "conv", dilation=2)


@op_case(SHAPE)
def conv_group2(g):
    return g.conv(g.x, 8, 12, 3, "conv", group=2)


@op_case(SHAPE)
def conv_depthwise(g):
    return g.conv(g.x, 8, 8, 3, "conv", group=8)


@op_case(SHAPE)
def conv_depthwise_multiplier2(g):
    """group = C_in with two output channels per group."""
    return g.conv(g.x, 8, 16, 3, "conv", group=8)


@op_case(IMG)
def conv_asym_pads(g):
    """pads [top=0, left=1, bottom=1, right=2]."""
    return g.conv(g.x, 3, 8, 3, "conv", pads=[0, 1, 1, 2])


@op_case(IMG)
def conv_same_upper(g):
    """16 -> 8 with stride 2: one padding row/column, at the end."""
    return g.conv(g.x, 3, 8, 3, "conv", stride=2, auto_pad="SAME_UPPER")


@op_case(IMG)
def conv_same_lower(g):
    """16 -> 8 with stride 2: one padding row/column, at the beginning."""
    return g.conv(g.x, 3, 8, 3, "conv", stride=2, auto_pad="SAME_LOWER")


@op_case(IMG)
def conv_valid(g):
    return g.conv(g.x, 3, 8, 3, "conv", auto_pad="VALID")


@op_case([1, 16, 16, 16])
def conv_1x1(g):
    return g.conv(g.x, 16, 32, 1, "conv")


@op_case(IMG)
def conv_5x5(g):
    return g.conv(g.x, 3, 8, 5, "conv")


@op_case([1, 3, 12, 20])
def conv_rect_kernel(g):
    """A 1x3 kernel on a non-square input (catches swapped H/W)."""
    return g.conv(g.x, 3, 8, (1, 3), "conv")


@op_case(IMG, symbolic=True)
def conv_symbolic_batch(g):
    return g.relu(g.conv(g.x, 3, 8, 3, "conv"), "conv")


@op_case(IMG, opset=21)
def conv_opset21(g):
    return g.relu(g.conv(g.x, 3, 8, 3, "conv"), "conv")


@op_case(IMG, opset=17)
def conv_opset17(g):
    return g.relu(g.conv(g.x, 3, 8, 3, "conv", stride=2), "conv")


@op_case(IMG, typed=True)
def conv_typed_weights(g):
    """Weight and bias in the typed float_data field instead of raw_data."""
    return g.conv(g.x, 3, 8, 3, "conv")


def conv_with_cast_weight(g, np_dtype):
    w = g.init("conv.weight", g.he([8, 3, 3, 3]).astype(np_dtype))
    wf = g.node("Cast", [w], "/conv", to=TensorProto.FLOAT)
    b = g.init("conv.bias", g.normal([8], 0.1))
    return g.op("Conv", [g.x, wf, b], "conv", dilations=[1, 1], group=1, kernel_shape=[3, 3],
                pads=[1, 1, 1, 1], strides=[1, 1])


@op_case(IMG)
def conv_fp16_weights(g):
    """FLOAT16 weight initializer -> Cast(to=FLOAT) -> Conv."""
    return conv_with_cast_weight(g, np.float16)


@op_case(IMG)
def conv_fp64_weights(g):
    """DOUBLE weight initializer -> Cast(to=FLOAT) -> Conv."""
    return conv_with_cast_weight(g, np.float64)


@op_case(IMG, external=True)
def conv_external_data(g):
    """Weight at offset 0 and bias at offset 1792 of conv_external_data.weights.bin."""
    return g.relu(g.conv(g.x, 3, 16, 3, "conv"), "conv")


@op_case(IMG, outputs=("output", "conv_out"))
def conv_two_outputs(g):
    """Two graph outputs: the Relu ("output") and the Conv it reads ("conv_out")."""
    c = g.conv(g.x, 3, 8, 3, "conv")
    return [g.relu(c, "conv"), c]


# -- ConvTranspose -----------------------------------------------------------


def conv_transpose(g, x, cin, cout, k, s, p, name, output_padding=None, group=1, dilation=1):
    w = g.init(name + ".weight", g.he([cin, cout // group, k, k]))
    b = g.init(name + ".bias", g.normal([cout], 0.1))
    attrs = dict(dilations=[dilation] * 2, group=group, kernel_shape=[k, k], pads=[p] * 4, strides=[s, s])
    if output_padding:
        attrs["output_padding"] = [output_padding] * 2
    return g.op("ConvTranspose", [x, w, b], name, **attrs)


@op_case([1, 8, 8, 8])
def convtranspose_stride2(g):
    """The usual 2x upsampler: kernel 4, stride 2, pad 1 (8 -> 16)."""
    return conv_transpose(g, g.x, 8, 4, 4, 2, 1, "up")


@op_case([1, 8, 8, 8])
def convtranspose_output_padding(g):
    """Kernel 3, stride 2, pad 1, output_padding 1 (8 -> 16)."""
    return conv_transpose(g, g.x, 8, 4, 3, 2, 1, "up", output_padding=1)


@op_case([1, 8, 8, 8])
def convtranspose_group2(g):
    """Two groups, kernel 3, stride 2, pad 1, output_padding 1."""
    return conv_transpose(g, g.x, 8, 6, 3, 2, 1, "up", output_padding=1, group=2)


@op_case([1, 4, 8, 8])
def convtranspose_dilation2(g):
    """Dilation 2, kernel 3, stride 2, pad 2, output_padding 1."""
    return conv_transpose(g, g.x, 4, 4, 3, 2, 2, "up", output_padding=1, dilation=2)


# -- Gemm / MatMul -----------------------------------------------------------

FC_IN = [1, 8, 4, 4]


@op_case(FC_IN)
def gemm_flatten(g):
    """Flatten + nn.Linear (transB=1)."""
    return g.gemm(g.flatten(g.x), 128, 10, "fc")


@op_case(FC_IN)
def gemm_transb0(g):
    """B stored [K, N], transB=0."""
    w = g.init("fc.weight", g.he([10, 128]).T.copy())
    b = g.init("fc.bias", g.normal([10], 0.1))
    return g.op("Gemm", [g.flatten(g.x), w, b], "fc", alpha=1.0, beta=1.0, transB=0)


@op_case(FC_IN)
def gemm_alpha_beta(g):
    w = g.init("fc.weight", g.he([10, 128]))
    b = g.init("fc.bias", g.normal([10], 0.5))
    return g.op("Gemm", [g.flatten(g.x), w, b], "fc", alpha=0.5, beta=2.0, transB=1)


@op_case(FC_IN)
def gemm_no_c(g):
    return g.gemm(g.flatten(g.x), 128, 10, "fc", bias=False)


@op_case([1, 64])
def gemm_2d_input(g):
    return g.gemm(g.x, 64, 10, "fc")


@op_case([1, 64])
def matmul_2d(g):
    w = g.init("fc.weight_t", g.he([10, 64]).T.copy())
    return g.op("MatMul", [g.x, w], "fc")


@op_case([1, 4, 8, 16])
def matmul_4d(g):
    """[1,C,H,W] x [W,N]: batched over the leading dims (nn.Linear on the last axis)."""
    w = g.init("fc.weight_t", g.he([10, 16]).T.copy())
    return g.op("MatMul", [g.x, w], "fc")


@op_case([1, 4, 8, 16])
def matmul_4d_add_bias(g):
    """nn.Linear on a 4-d tensor as PyTorch exports it: MatMul then Add of bias [N]."""
    w = g.init("fc.weight_t", g.he([10, 16]).T.copy())
    b = g.init("fc.bias", g.normal([10], 0.1))
    return g.op("Add", [g.op("MatMul", [g.x, w], "fc"), b], "fc")


# -- BatchNormalization ------------------------------------------------------


@op_case(IMG, opset=15)
def batchnorm_after_conv(g):
    """Conv (no bias) + BN: foldable into the Conv."""
    return g.bn(g.conv(g.x, 3, 8, 3, "conv", bias=False), 8, "bn")


@op_case(SHAPE, opset=15)
def batchnorm_after_relu(g):
    """Relu + BN: no Conv to fold into, a standalone per-channel affine."""
    return g.bn(g.relu(g.x, "relu"), 8, "bn")


@op_case(SHAPE, opset=9)
def batchnorm_opset9(g):
    return g.bn(g.x, 8, "bn")


@op_case(SHAPE, opset=7)
def batchnorm_opset7(g):
    """spatial=1; IR 3, initializers also listed as graph inputs."""
    return g.bn(g.x, 8, "bn")


@op_case(SHAPE, opset=6, ref_opset=7)
def batchnorm_opset6(g):
    """is_test=1; IR 3, initializers also listed as graph inputs. onnxruntime has
    no BatchNormalization-6 kernel: expected output from the opset-7 twin."""
    return g.bn(g.x, 8, "bn")


# -- Activations ---------------------------------------------------------------

ACT = dict(dist="wide")


@op_case(SHAPE, **ACT)
def relu(g):
    return g.relu(g.x)


@op_case(SHAPE, **ACT)
def leaky_relu(g):
    return g.op("LeakyRelu", [g.x], alpha=0.1)


@op_case(SHAPE, **ACT)
def prelu_per_channel(g):
    slope = g.init("prelu.weight", g.uniform([8, 1, 1], 0.05, 0.5))
    return g.op("PRelu", [g.x, slope], "prelu")


@op_case(SHAPE, **ACT)
def prelu_scalar(g):
    slope = g.f32("prelu.weight", [0.25])
    return g.op("PRelu", [g.x, slope], "prelu")


@op_case(SHAPE, opset=6, **ACT)
def clip_relu6_opset6(g):
    """ReLU6 as Clip-6: min/max attributes."""
    return g.op("Clip", [g.x], max=6.0, min=0.0)


@op_case(SHAPE, **ACT)
def clip_relu6(g):
    """ReLU6 as Clip-13: min/max as initializer inputs."""
    return g.clip6(g.x)


@op_case(SHAPE, **ACT)
def clip_max_only(g):
    """Clip-13 with min omitted ("") and max given."""
    hi = g.init("clip_max", np.array(6.0, np.float32))
    return g.op("Clip", [g.x, "", hi])


@op_case(SHAPE, **ACT)
def clip_range(g):
    lo = g.init("clip_min", np.array(-0.5, np.float32))
    hi = g.init("clip_max", np.array(0.5, np.float32))
    return g.op("Clip", [g.x, lo, hi])


@op_case(SHAPE, **ACT)
def sigmoid(g):
    return g.op("Sigmoid", [g.x])


@op_case(SHAPE, **ACT)
def hard_sigmoid(g):
    """No attributes: the defaults alpha 0.2, beta 0.5."""
    return g.op("HardSigmoid", [g.x])


@op_case(SHAPE, opset=14, **ACT)
def hard_swish(g):
    return g.op("HardSwish", [g.x])


@op_case(SHAPE, **ACT)
def tanh(g):
    return g.op("Tanh", [g.x])


@op_case(SHAPE, **ACT)
def elu(g):
    return g.op("Elu", [g.x], alpha=1.0)


@op_case(SHAPE, **ACT)
def softplus(g):
    return g.op("Softplus", [g.x])


# -- Elementwise binary ------------------------------------------------------


def two_convs(g):
    return g.conv(g.x, 8, 8, 3, "a"), g.conv(g.x, 8, 8, 3, "b")


@op_case(SHAPE)
def add_two_convs(g):
    a, b = two_convs(g)
    return g.op("Add", [a, b])


@op_case(SHAPE)
def sub_two_convs(g):
    a, b = two_convs(g)
    return g.op("Sub", [a, b])


@op_case(SHAPE)
def mul_two_convs(g):
    a, b = two_convs(g)
    return g.op("Mul", [a, b])


@op_case(SHAPE)
def div_two_convs(g):
    """a / sigmoid(b): a denominator kept away from zero."""
    a, b = two_convs(g)
    return g.op("Div", [a, g.op("Sigmoid", [b], "b")])


@op_case(SHAPE)
def add_broadcast(g):
    """[1,C,H,W] + [1,C,1,1] where the second is GlobalAveragePool's output."""
    return g.op("Add", [g.x, g.gap(g.x)])


@op_case(SHAPE)
def sub_broadcast(g):
    return g.op("Sub", [g.x, g.gap(g.x)])


@op_case(SHAPE)
def mul_broadcast_se(g):
    """Squeeze-and-excite: x * sigmoid(fc2(relu(fc1(GAP(x))))) with 1x1 Convs."""
    s = g.gap(g.x, "se")
    s = g.relu(g.conv(s, 8, 4, 1, "se.fc1"), "se")
    s = g.op("Sigmoid", [g.conv(s, 4, 8, 1, "se.fc2")], "se")
    return g.op("Mul", [g.x, s])


@op_case(SHAPE)
def div_broadcast(g):
    return g.op("Div", [g.x, g.op("Sigmoid", [g.gap(g.x)])])


@op_case(SHAPE)
def add_channel_const(g):
    """Add of a per-channel [C,1,1] initializer (a bias)."""
    return g.op("Add", [g.x, g.init("bias", g.normal([8, 1, 1], 0.5))])


@op_case(SHAPE)
def mul_channel_const(g):
    """Mul by a per-channel [C,1,1] initializer (a scale)."""
    return g.op("Mul", [g.x, g.init("scale", g.uniform([8, 1, 1], 0.5, 2.0))])


@op_case(IMG, dist="uniform")
def sub_div_normalize(g):
    """Input normalization: (x - mean[3,1,1]) / std[3,1,1]."""
    mean = g.f32("mean", np.array([0.485, 0.456, 0.406]).reshape(3, 1, 1))
    std = g.f32("std", np.array([0.229, 0.224, 0.225]).reshape(3, 1, 1))
    return g.op("Div", [g.op("Sub", [g.x, mean]), std])


@op_case(SHAPE, **ACT)
def div_scalar_hardswish(g):
    """Hard-swish written out: x * clip(x + 3, 0, 6) / 6, scalar constants."""
    y = g.op("Add", [g.x, g.f32("three", np.float32(3.0))])
    y = g.clip6(y)
    y = g.op("Mul", [g.x, y])
    return g.op("Div", [y, g.f32("six", np.float32(6.0))])


# -- SiLU, HardSwish, HardSigmoid: activations fused into epilogues ---------
# torch exports nn.SiLU as Sigmoid then Mul of the input and the gate,
# nn.Hardswish as HardSwish (opset 14), nn.Hardsigmoid as HardSigmoid with
# alpha 1/6 and beta 1/2. hetc fuses each into the conv2d or dense before it.


def silu(g, x, name=""):
    """SiLU as torch exports it: Mul(x, Sigmoid(x))."""
    return g.op("Mul", [x, g.op("Sigmoid", [x], name)], name)


def torch_hardsigmoid(g, x, name=""):
    return g.op("HardSigmoid", [x], name, alpha=1.0 / 6, beta=0.5)


@op_case(SHAPE)
def conv_silu(g):
    return silu(g, g.conv(g.x, 8, 12, 3, "conv"), "act")


@op_case(SHAPE)
def conv_bn_silu(g):
    """EfficientNet's Conv (no bias), BatchNormalization, SiLU."""
    y = g.bn(g.conv(g.x, 8, 12, 3, "conv", bias=False), 12, "bn")
    return silu(g, y, "act")


@op_case(SHAPE)
def conv_swish_gate_first(g):
    """Swish as other exporters write it: Mul(Sigmoid(x), x), the gate first."""
    y = g.conv(g.x, 8, 12, 3, "conv")
    return g.op("Mul", [g.op("Sigmoid", [y], "act"), y], "act")


@op_case(SHAPE, opset=14)
def conv_hardswish(g):
    return g.op("HardSwish", [g.conv(g.x, 8, 12, 3, "conv")], "act")


@op_case(SHAPE)
def conv_hardsigmoid(g):
    return torch_hardsigmoid(g, g.conv(g.x, 8, 12, 3, "conv"), "act")


@op_case(SHAPE, **ACT)
def hardswish_as_mul(g):
    """Hard-swish as x * HardSigmoid(x) (torch's hardsigmoid constants)."""
    return g.op("Mul", [g.x, torch_hardsigmoid(g, g.x, "act")], "act")


@op_case(FC_IN)
def gemm_silu(g):
    return silu(g, g.gemm(g.flatten(g.x), 128, 10, "fc"), "act")


@op_case(FC_IN, opset=14)
def gemm_hardswish(g):
    """HardSwish of a 2-d value (hetc imported it on 4-d values only before
    it had an op of its own)."""
    return g.op("HardSwish", [g.gemm(g.flatten(g.x), 128, 10, "fc")], "act")


@op_case(SHAPE, **ACT)
def silu_after_add(g):
    """A SiLU with no conv before it: after a broadcast Add."""
    return silu(g, g.op("Add", [g.x, g.gap(g.x)]), "act")


@op_case(SHAPE, **ACT)
def hardsigmoid_torch(g):
    return torch_hardsigmoid(g, g.x)


@op_case(SHAPE)
def sigmoid_two_consumers(g):
    """Mul(x, Sigmoid(x)) whose gate is read again (by an Add): no SiLU."""
    y = g.conv(g.x, 8, 12, 3, "conv")
    s = g.op("Sigmoid", [y], "act")
    return g.op("Add", [g.op("Mul", [y, s], "act"), s], "act")


@op_case(SHAPE, outputs=("output", "gate"))
def sigmoid_graph_output(g):
    """Mul(x, Sigmoid(x)) whose gate is a graph output too: no SiLU."""
    y = g.conv(g.x, 8, 12, 3, "conv")
    s = g.op("Sigmoid", [y], "act")
    return [g.op("Mul", [y, s], "act"), s]


# -- GELU and Erf (ABI minor 7) --------------------------------------------
# torch's legacy exporter writes nn.GELU() as Div(x, 1.4142135), Erf,
# Add(., 1), Mul(x, .), Mul(., 0.5), each scalar from a Constant node just
# before its reader; opset 20 has Gelu itself. hetc imports the chain as one
# gelu when its intermediates have no other readers, and fuses it into the
# conv2d or dense before it.


def exact_gelu(g, x, name="", mul_form=False, swapped=False):
    """The exact GELU as torch's legacy exporter writes it; mul_form scales by
    Mul(x, 0.70710677) instead of Div(x, 1.4142135), swapped puts every
    binary op's operands the other way round."""
    def pair(a, b):
        return [b, a] if swapped else [a, b]
    if mul_form:
        scaled = g.op("Mul", pair(x, g.constant(np.float32(0.70710677), scope_of(name))), name)
    else:
        scaled = g.op("Div", [x, g.constant(np.float32(1.4142135), scope_of(name))], name)
    e = g.op("Erf", [scaled], name)
    s = g.op("Add", pair(e, g.constant(np.float32(1.0), scope_of(name))), name)
    m = g.op("Mul", pair(x, s), name)
    return g.op("Mul", pair(m, g.constant(np.float32(0.5), scope_of(name))), name)


@op_case(SHAPE)
def conv_gelu_exact(g):
    return exact_gelu(g, g.conv(g.x, 8, 12, 3, "conv"), "act")


@op_case(SHAPE)
def conv_gelu_exact_mul_swapped(g):
    """Mul(0.70710677, x) for the scale, every operand pair reversed."""
    return exact_gelu(g, g.conv(g.x, 8, 12, 3, "conv"), "act", mul_form=True, swapped=True)


@op_case([2, 6, 5], **ACT)
def gelu_exact_rank3(g):
    """A transformer MLP's GELU, on a [batch, tokens, features] value."""
    return exact_gelu(g, g.x, "act")


@op_case(FC_IN, opset=20)
def gemm_gelu(g):
    return g.op("Gelu", [g.gemm(g.flatten(g.x), 128, 10, "fc")], "act")


@op_case(FC_IN, opset=20)
def gemm_gelu_tanh(g):
    return g.op("Gelu", [g.gemm(g.flatten(g.x), 128, 10, "fc")], "act", approximate="tanh")


def tanh_gelu(g, x, name="", pow_form=False):
    """nn.GELU(approximate="tanh") as torch's legacy exporter writes it:
    x^3 as Mul(x, Mul(x, x)) (or Pow(x, 3)), Mul 0.044715, Add x, Mul
    sqrt(2 / pi), Tanh, Add 1, Mul x, Mul 0.5, scalars first as torch puts
    them."""
    def c(v):
        return g.constant(np.float32(v), scope_of(name))
    if pow_form:
        cube = g.op("Pow", [x, c(3.0)], name)
    else:
        cube = g.op("Mul", [x, g.op("Mul", [x, x], name)], name)
    inner = g.op("Add", [x, g.op("Mul", [c(0.044715), cube], name)], name)
    t = g.op("Tanh", [g.op("Mul", [c(0.7978846), inner], name)], name)
    return g.op("Mul", [c(0.5), g.op("Mul", [x, g.op("Add", [c(1.0), t], name)], name)], name)


@op_case(SHAPE)
def conv_gelu_tanh_chain(g):
    return tanh_gelu(g, g.conv(g.x, 8, 12, 3, "conv"), "act")


@op_case(FC_IN)
def gemm_gelu_tanh_pow(g):
    return tanh_gelu(g, g.gemm(g.flatten(g.x), 128, 10, "fc"), "act", pow_form=True)


@op_case([2, 6, 5], **ACT)
def erf_rank3(g):
    """Erf of a computed value, alone (not part of a GELU)."""
    return g.op("Erf", [g.x], "act")


@op_case(SHAPE)
def gelu_erf_read_elsewhere(g):
    """The exact GELU chain whose Erf is read again (by an Add after it): no
    gelu, the ops one by one."""
    y = g.conv(g.x, 8, 12, 3, "conv")
    scaled = g.op("Div", [y, g.constant(np.float32(1.4142135), "/act")], "act")
    e = g.op("Erf", [scaled], "act")
    s = g.op("Add", [e, g.constant(np.float32(1.0), "/act")], "act")
    m = g.op("Mul", [y, s], "act")
    return g.op("Add", [g.op("Mul", [m, g.constant(np.float32(0.5), "/act")], "act"), e], "act")


@op_case(SHAPE)
def mul_scalar(g):
    return g.op("Mul", [g.x, g.f32("half", np.float32(0.5))])


@op_case(SHAPE)
def sum_three(g):
    a, b = two_convs(g)
    c = g.conv(g.x, 8, 8, 3, "c")
    return g.op("Sum", [a, b, c])


# -- Pooling -------------------------------------------------------------------


@op_case(SHAPE)
def maxpool_2x2(g):
    return g.maxpool(g.x, 2, 2)


@op_case(SHAPE)
def maxpool_3x3_s2_p1(g):
    return g.maxpool(g.x, 3, 2, 1)


@op_case([1, 8, 15, 15])
def maxpool_ceil(g):
    """15 -> 8 with kernel 2 stride 2 ceil_mode 1 (floor would give 7)."""
    return g.maxpool(g.x, 2, 2, ceil=1)


@op_case(SHAPE, dist="uniform")
def avgpool_exclude_pad(g):
    return g.avgpool(g.x, 3, 2, 1, include_pad=0)


@op_case(SHAPE, dist="uniform")
def avgpool_include_pad(g):
    return g.avgpool(g.x, 3, 2, 1, include_pad=1)


@op_case(SHAPE, dist="uniform")
def avgpool_ceil(g):
    """16 -> 8 with kernel 3 stride 2 ceil_mode 1: the last window hangs over."""
    return g.avgpool(g.x, 3, 2, ceil=1)


@op_case(SHAPE, dist="uniform")
def global_avgpool(g):
    return g.gap(g.x)


@op_case(SHAPE)
def global_maxpool(g):
    return g.op("GlobalMaxPool", [g.x])


# -- Shapes: Concat, Flatten, Reshape and shape subgraphs --------------------


@op_case(SHAPE)
def concat_two(g):
    a, b = two_convs(g)
    return g.op("Concat", [a, b], axis=1)


@op_case(SHAPE)
def concat_three(g):
    a, b = two_convs(g)
    c = g.conv(g.x, 8, 4, 1, "c")
    return g.op("Concat", [a, b, c], axis=1)


@op_case(FC_IN)
def flatten(g):
    return g.flatten(g.x)


@op_case(FC_IN)
def reshape_const(g):
    return g.op("Reshape", [g.x, g.i64("shape", [1, -1])])


@op_case(FC_IN, opset=11)
def reshape_shape_subgraph_opset11(g):
    """x.view(x.size(0), -1), Unsqueeze with the axes attribute."""
    return g.shape_flatten(g.x)


@op_case(FC_IN, symbolic=True)
def reshape_shape_subgraph_opset13(g):
    """x.view(x.size(0), -1), Unsqueeze with axes as an input; batch "N"."""
    return g.shape_flatten(g.x)


@op_case(SHAPE)
def flatten_constant_node(g):
    """A Constant node gives Reshape its target [1, 8, -1]; Flatten follows."""
    y = g.node("Reshape", [g.x, g.constant(np.array([1, 8, -1], np.int64))])
    return g.flatten(y)


@op_case(SHAPE)
def constantofshape_folded(g):
    """x + torch.full((N, C, 1, 1), 0.5): the shape built from Shape(x),
    ConstantOfShape fills it; the whole branch folds to a constant."""
    shape = g.node("Shape", [g.x])
    c = g.node("Gather", [shape, g.constant(np.array(1, np.int64))], axis=0)
    c = g.unsqueeze0(c)
    n = g.node("Gather", [shape, g.constant(np.array(0, np.int64))], axis=0)
    n = g.unsqueeze0(n)
    full_shape = g.node("Concat", [n, c, g.constant(np.array([1, 1], np.int64))], axis=0)
    half = g.node("ConstantOfShape", [full_shape],
                  value=numpy_helper.from_array(np.array([0.5], np.float32)))
    return g.node("Add", [g.x, half])


@op_case([1, 4, 8, 8])
def cast_shape_subgraph(g):
    """F.interpolate(x, scale_factor=2) as PyTorch 1.x wrote it: the sizes from
    Shape -> Slice -> Cast(FLOAT) -> Mul(2) -> Cast(INT64) -> Concat -> Resize."""
    shape = g.node("Shape", [g.x])
    hw = g.node("Slice", [shape, g.constant(np.array([2], np.int64)),
                          g.constant(np.array([4], np.int64)),
                          g.constant(np.array([0], np.int64))])
    hw = g.node("Cast", [hw], to=TensorProto.FLOAT)
    hw = g.node("Mul", [hw, g.constant(np.array([2.0, 2.0], np.float32))])
    hw = g.node("Cast", [hw], to=TensorProto.INT64)
    nc = g.node("Slice", [shape, g.constant(np.array([0], np.int64)),
                          g.constant(np.array([2], np.int64)),
                          g.constant(np.array([0], np.int64))])
    sizes = g.node("Concat", [nc, hw], axis=0)
    return g.node("Resize", [g.x, "", "", sizes], coordinate_transformation_mode="asymmetric",
                  cubic_coeff_a=-0.75, mode="nearest", nearest_mode="floor")


# -- Transpose and data movement ----------------------------------------------


@op_case([1, 8, 8, 8])
def channel_shuffle(g):
    """ShuffleNet's shuffle with 2 groups: Reshape [1,2,4,H,W], Transpose, Reshape."""
    return g.shuffle(g.x, 8, 8, 8, 2)


@op_case([1, 8, 12, 16])
def transpose_nhwc(g):
    """NCHW -> NHWC as the graph output (non-square, catches swapped axes)."""
    return g.op("Transpose", [g.x], perm=[0, 2, 3, 1])


@op_case([1, 16, 8, 8])
def pixel_shuffle_reshape(g):
    """PixelShuffle(2) written out: Reshape [1,4,2,2,8,8], Transpose, Reshape [1,4,16,16]."""
    y = g.op("Reshape", [g.x, g.i64("shape6", [1, 4, 2, 2, 8, 8])])
    y = g.op("Transpose", [y], perm=[0, 1, 4, 2, 5, 3])
    return g.op("Reshape", [y, g.i64("shape4", [1, 4, 16, 16])])


@op_case([1, 16, 8, 8])
def depth_to_space_dcr(g):
    """mode attribute left out: the default, DCR."""
    return g.op("DepthToSpace", [g.x], blocksize=2)


@op_case([1, 16, 8, 8])
def depth_to_space_crd(g):
    return g.op("DepthToSpace", [g.x], blocksize=2, mode="CRD")


@op_case([1, 4, 16, 16])
def space_to_depth(g):
    return g.op("SpaceToDepth", [g.x], blocksize=2)


@op_case([1, 4, 16, 16], opset=28)
def space_to_depth_crd_opset28(g):
    """SpaceToDepth's mode came with opset 28."""
    return g.op("SpaceToDepth", [g.x], blocksize=2, mode="CRD")


@op_case(SHAPE)
def cast_computed(g):
    """Cast of a computed float32 value to FLOAT: the value itself."""
    y = g.node("Relu", [g.x])
    y = g.node("Cast", [y], to=TensorProto.FLOAT)
    return g.op("Sigmoid", [y])


@op_case(SHAPE, opset=19)
def castlike_expanded(g):
    """CastLike as ONNX's expanded functions write it: a constant cast like
    the input (folded), and the input cast like itself."""
    half = g.node("CastLike", [g.f32("half", [0.5]), g.x])
    y = g.node("CastLike", [g.x, g.x])
    return g.op("Mul", [y, half])


@op_case(IMG, opset=25)
def conv_opset25(g):
    """Opsets 22 to 25 changed Conv and Relu only by their types."""
    return g.relu(g.conv(g.x, 3, 8, 3, "conv"), "conv")


# -- Softmax ---------------------------------------------------------------------


@op_case(FC_IN, opset=11)
def softmax_opset11_2d(g):
    """Classifier head: Flatten, Gemm, Softmax-11 on [1,10] logits."""
    return g.op("Softmax", [g.gemm(g.flatten(g.x), 128, 10, "fc")], axis=1)


@op_case(SHAPE, **ACT)
def softmax_opset13_axis1(g):
    return g.op("Softmax", [g.x], axis=1)


@op_case([1, 8, 8, 8], opset=11, rtol=1e-3,
         why="Softmax-11 coerces to 2-d: one softmax over all 512 values; "
             "the exponential sum's order differs between implementations")
def softmax_opset11_4d(g):
    """Softmax-11 axis=1 on 4-d: softmax over C*H*W together, not per pixel."""
    return g.op("Softmax", [g.x], axis=1)


@op_case([1, 10], **ACT)
def logsoftmax_2d(g):
    return g.op("LogSoftmax", [g.x], axis=1)


@op_case(FC_IN, opset=11)
def logsoftmax_opset11_head(g):
    """The head of a PyTorch classifier trained with NLLLoss: Flatten, Gemm,
    LogSoftmax-11 on [1,10] logits."""
    return g.op("LogSoftmax", [g.gemm(g.flatten(g.x), 128, 10, "fc")], axis=1)


@op_case(SHAPE, **ACT)
def logsoftmax_opset13_axis1(g):
    """LogSoftmax-13 over the channels of a 4-d value (per pixel)."""
    return g.op("LogSoftmax", [g.x], axis=1)


@op_case(SHAPE, **ACT)
def exp_log(g):
    """Log(Exp(x) + 1), softplus spelled out (Exp and Log of computed values)."""
    return g.op("Log", [g.op("Add", [g.op("Exp", [g.x]), g.f32("one", np.float32(1))])])


# -- Pad -------------------------------------------------------------------------

PADS = [0, 0, 1, 2, 0, 0, 2, 1]  # top 1, left 2, bottom 2, right 1


@op_case([1, 4, 8, 8])
def pad_constant(g):
    """Pad-13, pads as an input, constant_value omitted (0)."""
    return g.op("Pad", [g.x, g.i64("pads", PADS)], mode="constant")


@op_case([1, 4, 8, 8])
def pad_constant_value(g):
    return g.op("Pad", [g.x, g.i64("pads", PADS), g.f32("value", np.float32(1.5))],
                mode="constant")


@op_case([1, 4, 8, 8])
def pad_reflect(g):
    return g.op("Pad", [g.x, g.i64("pads", PADS)], mode="reflect")


@op_case([1, 4, 8, 8])
def pad_edge(g):
    return g.op("Pad", [g.x, g.i64("pads", PADS)], mode="edge")


@op_case([1, 4, 8, 8], opset=9)
def pad_opset9(g):
    """Pad-2: pads and value as attributes."""
    return g.op("Pad", [g.x], mode="constant", pads=PADS, value=0.0)


@op_case([1, 3, 16, 16], opset=9)
def pad_reflect_opset9(g):
    """Pad-2 reflect by 3 on each side: the first layer of a style-transfer
    net, as old exporters wrote it."""
    return g.op("Pad", [g.x], mode="reflect", pads=[0, 0, 3, 3, 0, 0, 3, 3])


@op_case([1, 4, 6, 5], opset=18)
def pad_edge_axes_h(g):
    """Pad-18 edge along H alone, through the axes input."""
    return g.op("Pad", [g.x, g.i64("pads", [2, 1]), "", g.i64("axes", [2])], mode="edge")


@op_case([1, 5, 6, 4], opset=18)
def pad_nhwc(g):
    """Pad-18 of dims 1 and 2 of an [N, H, W, C] value, as torch's Swin pads
    its windows: the padded dims moved to hetc's H and W and back; then a
    Pad by zeros everywhere (Swin's where the windows fit), which is the
    value itself."""
    y = g.op("Pad", [g.op("Relu", [g.x]), g.i64("pads", [0, 0, 0, 0, 0, 2, 1, 0])], mode="constant")
    return g.op("Pad", [y, g.i64("no_pads", [0] * 8)], mode="constant")


@op_case([2, 3, 4, 5], opset=18)
def pad_batch_edge(g):
    """Pad-18 edge along N and C (through axes): both moved to H and W."""
    return g.op("Pad", [g.x, g.i64("pads", [1, 0, 0, 2]), "", g.i64("axes", [0, 1])], mode="edge")


# -- LRN -------------------------------------------------------------------------

LRN_WHY = "LRN raises a windowed sum of squares to a fractional power (pow/exp/log differ)"


@op_case([1, 16, 16, 16], rtol=1e-3, why=LRN_WHY, dist="large")
def lrn_alexnet(g):
    """size 5, alpha 1e-4, beta 0.75, bias 1; inputs of magnitude ~20 so that
    the normalization visibly changes them."""
    return g.op("LRN", [g.x], alpha=1e-4, beta=0.75, bias=1.0, size=5)


@op_case([1, 16, 16, 16], rtol=1e-3, why=LRN_WHY)
def lrn_size3_bias2(g):
    return g.op("LRN", [g.x], alpha=0.01, beta=0.5, bias=2.0, size=3)


# -- activations and constant operands on values of rank 2, 3 and 5 -------------

RANKED_OUTPUTS = ("relu", "sigmoid", "hardswish", "leaky", "hardsigmoid", "elu", "clip", "prelu",
                  "batchnorm", "add_c", "mul_c", "c_minus", "neg", "abs", "softsign", "mish")


def ranked_activations(g):
    """Every activation and per-channel constant operand on x of any rank, one
    graph output each (channels: axis 1, 6 of them)."""
    x, rank = g.x, g.rank
    per_channel = [6] + [1] * (rank - 2)
    c = np.linspace(-1.5, 1.5, 6).astype(np.float32).reshape(per_channel)
    outs = [g.op("Relu", [x], "relu"), g.op("Sigmoid", [x], "sigmoid"), g.op("HardSwish", [x], "hardswish"),
            g.op("LeakyRelu", [x], "leaky", alpha=0.1),
            g.op("HardSigmoid", [x], "hardsigmoid", alpha=0.2, beta=0.5),
            g.op("Elu", [x], "elu", alpha=0.5),
            g.op("Clip", [x, g.f32("lo", -0.5), g.f32("hi", 0.7)], "clip"),
            g.op("PRelu", [x, g.init("slope", np.linspace(0.1, 0.6, 6).astype(np.float32).reshape(per_channel))],
                 "prelu"),
            g.op("BatchNormalization", [x] + [g.init(n, g.uniform([6], 0.5, 1.5)) for n in ("bn.g", "bn.b", "bn.m", "bn.v")],
                 "batchnorm"),
            g.op("Add", [x, g.init("add.const", c)], "add_c"), g.op("Mul", [x, g.init("mul.const", c)], "mul_c"),
            g.op("Sub", [g.init("sub.const", c), x], "c_minus"), g.op("Neg", [x], "neg"), g.op("Abs", [x], "abs"),
            g.op("Softsign", [x], "softsign"), g.op("Mish", [x], "mish")]
    return outs


@op_case([4, 6], opset=18, outputs=RANKED_OUTPUTS)
def activations_rank2(g):
    return ranked_activations(g)


@op_case([2, 6, 5], opset=18, outputs=RANKED_OUTPUTS)
def activations_rank3(g):
    return ranked_activations(g)


@op_case([1, 6, 3, 4, 5], opset=18, outputs=RANKED_OUTPUTS)
def activations_rank5(g):
    return ranked_activations(g)


@op_case(SHAPE, opset=18)
def folded_activations(g):
    """Every unary op hetc evaluates at import, on a constant the conv adds
    per channel: abs, sigmoid, tanh, exp, log, softplus, softsign, mish, elu,
    leaky relu, hard sigmoid and swish, reciprocal, erf, in a chain."""
    v = g.f32("base", np.linspace(0.2, 1.8, 8).astype(np.float32).reshape([8, 1, 1]))
    for op, attrs in (("Abs", {}), ("Sigmoid", {}), ("Tanh", {}), ("Exp", {}), ("Log", {}), ("Softplus", {}),
                      ("Softsign", {}), ("Mish", {}), ("Elu", {"alpha": 0.5}), ("LeakyRelu", {"alpha": 0.2}),
                      ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {}), ("Reciprocal", {}),
                      ("Erf", {})):
        v = g.op(op, [v], "fold", **attrs)
    return g.op("Add", [g.conv(g.x, 8, 8, 3, "conv"), v], "add")


@op_case(SHAPE, opset=13)
def folded_weight_standardisation(g):
    """NFNet-style scaled weight standardisation, computed at import: the
    conv's weight is (w - mean(w)) / sqrt(var(w) + eps) over each output
    channel's fan-in (ReduceMean, Sub, Pow, Sqrt, Div), times a gain clipped
    into [0.5, 2] (Clip)."""
    w = g.init("conv.weight_raw", g.normal([8, 8, 3, 3], 0.3, 0.1))
    mean = g.op("ReduceMean", [w], "ws", axes=[1, 2, 3], keepdims=1)
    centred = g.op("Sub", [w, mean], "ws")
    var = g.op("ReduceMean", [g.op("Pow", [centred, g.f32("two", 2.0)], "ws")], "ws", axes=[1, 2, 3], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.f32("eps", 1e-4)], "ws")], "ws")
    gain = g.op("Clip", [g.init("gain_raw", np.linspace(0, 3, 8).astype(np.float32).reshape([8, 1, 1, 1])),
                         g.f32("gain_lo", 0.5), g.f32("gain_hi", 2.0)], "ws")
    weight = g.op("Mul", [g.op("Div", [centred, std], "ws"), gain], "ws")
    y = g.op("Conv", [g.x, weight, g.init("conv.bias", g.normal([8], 0.1))], "conv", dilations=[1, 1],
             group=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    return g.relu(y, "relu")


@op_case(SHAPE, opset=18)
def folded_reductions(g):
    """A per-channel bias computed at import through every reduction and the
    variadic Max, Min and Sum: ReduceSum (axes as input), ReduceMax,
    ReduceMin, ReduceL2, ReduceProd (keepdims 0, then Unsqueeze), Max, Min,
    Sum."""
    base = g.init("base", g.uniform([8, 2, 3], 0.5, 1.5))
    axes = g.i64("axes_12", [1, 2])
    parts = [g.op("ReduceSum", [base, axes], "bias", keepdims=1),
             g.op("ReduceMax", [base, axes], "bias", keepdims=1),
             g.op("ReduceMin", [base, axes], "bias", keepdims=1),
             g.op("ReduceL2", [base, axes], "bias", keepdims=1),
             g.op("Unsqueeze", [g.op("ReduceProd", [base, axes], "bias", keepdims=0), axes], "bias")]
    bias = g.op("Sum", [g.op("Max", parts[:3], "bias"), g.op("Min", parts[3:], "bias"), parts[0]], "bias")
    return g.op("Add", [g.conv(g.x, 8, 8, 3, "conv"), bias], "add")


# -- Slice and Split of computed values ------------------------------------------


@op_case(SHAPE)
def slice_channel_halves(g):
    """ShuffleNet v2's channel split as torch's chunk(2, dim=1) exports it:
    two Slices of the conv's output (opset 13, starts/ends/axes as inputs),
    one half through a conv, then Concat."""
    y = g.conv(g.x, 8, 8, 3, "conv1")
    a = g.op("Slice", [y, g.i64("a.starts", [0]), g.i64("a.ends", [4]), g.i64("a.axes", [1])], "split")
    b = g.op("Slice", [y, g.i64("b.starts", [4]), g.i64("b.ends", [2 ** 63 - 1]), g.i64("b.axes", [1])], "split")
    b = g.conv(b, 4, 4, 3, "conv2")
    return g.op("Concat", [a, b], "cat", axis=1)


@op_case(SHAPE)
def slice_hw_steps(g):
    """Slice over H with step 2 and over W backwards with step -3, channels
    4 to 7: every axis but the batch one."""
    y = g.relu(g.conv(g.x, 8, 8, 3, "conv"), "relu")
    return g.op("Slice", [y, g.i64("starts", [4, 1, 15]), g.i64("ends", [-1, 16, 0]), g.i64("axes", [1, 2, 3]),
                          g.i64("steps", [1, 2, -3])], "slice")


@op_case(SHAPE, opset=9)
def slice_attributes_opset9(g):
    """Slice-1's attribute form (opset 9): channels 2 to 6 and rows from 3."""
    y = g.conv(g.x, 8, 8, 3, "conv")
    return g.op("Slice", [y], "slice", starts=[2, 3], ends=[6, 100], axes=[1, 2])


@op_case(SHAPE, opset=13, outputs=("a", "b", "c"))
def split_channels_opset13(g):
    """Split-13 with the sizes as input 1: 8 channels into 2, 5 and 1."""
    y = g.conv(g.x, 8, 8, 3, "conv")
    g.nodes.append(helper.make_node("Split", [y, g.i64("sizes", [2, 5, 1])], ["s0", "s1", "s2"], name="/split/Split",
                                    axis=1))
    return ["s0", g.relu("s1", "relu"), "s2"]


@op_case(SHAPE, opset=13, outputs=("gated", "window"))
def split_channel_views(g):
    """A gated split as CSP and GLU blocks use it: a conv's 32 channels split
    into halves (Split-13), one half times the other, concatenated back to
    the first; and channels 4 to 12 max-pooled. In block-aligned layouts
    the halves are read where they lie in the conv's output
    (compile/channel_view.h); channels 4 to 12 only row-major."""
    y = g.conv(g.x, 8, 32, 3, "conv")
    g.nodes.append(helper.make_node("Split", [y, g.i64("sizes", [16, 16])], ["a", "b"], name="/split/Split", axis=1))
    gated = g.op("Concat", ["a", g.op("Mul", ["a", "b"], "gate")], "cat", axis=1)
    window = g.op("Slice", [y, g.i64("starts", [4]), g.i64("ends", [12]), g.i64("axes", [1])], "window")
    return [gated, g.maxpool(window, 2, 2, name="pool")]


@op_case(SHAPE, opset=18, outputs=("a", "b", "c"))
def split_num_outputs_opset18(g):
    """Split-18 by num_outputs: 16 rows into 6, 6 and 4 (the last smaller)."""
    y = g.conv(g.x, 8, 8, 3, "conv")
    g.nodes.append(helper.make_node("Split", [y], ["s0", "s1", "s2"], name="/split/Split", axis=2, num_outputs=3))
    return ["s0", "s1", "s2"]


@op_case(SHAPE, opset=11, outputs=("a", "b"))
def split_attribute_opset11(g):
    """Split-11's attribute form over W with a negative axis, equal parts."""
    y = g.conv(g.x, 8, 8, 3, "conv")
    g.nodes.append(helper.make_node("Split", [y], ["s0", "s1"], name="/split/Split", axis=-1))
    return ["s0", "s1"]


@op_case([2, 6, 10])
def slice_rank3_steps(g):
    """A rank-3 value: axis 1 from 1 by 2, axis 2 backwards by -3."""
    return g.op("Slice", [g.x, g.i64("starts", [1, 9]), g.i64("ends", [6, -100]), g.i64("axes", [1, 2]),
                          g.i64("steps", [2, -3])])


@op_case([3, 4, 5, 6])
def slice_batch_axis(g):
    """The batch axis too: items 1 and 2 of 3, and channels 1 to 2."""
    return g.op("Slice", [g.x, g.i64("starts", [1, 1]), g.i64("ends", [3, 3]), g.i64("axes", [0, 1])])


@op_case([6, 12], opset=18, outputs=("a", "b"))
def split_rank2(g):
    """Split-18 of a rank-2 value along its last axis, sizes 5 and 7."""
    g.nodes.append(helper.make_node("Split", [g.x, g.i64("sizes", [5, 7])], ["s0", "s1"], name="/split/Split",
                                    axis=1))
    return ["s0", "s1"]


@op_case([1, 5, 8])
def gather_token(g):
    """ViT's x[:, 0]: a scalar index along axis 1 drops the axis."""
    y = g.op("Relu", [g.x])
    return g.op("Gather", [y, g.i64("index", 0)], axis=1)


@op_case([1, 10, 32])
def matmul_attention(g):
    """Self-attention as ViT exports it: Q, K, V by MatMul with weights,
    heads split by Reshape and Transpose, scores Q K^T (a MatMul of two
    computed values) scaled, Softmax over the keys, then the weighted
    values (another), heads merged back."""
    heads, dim = 4, 8
    def project(name):
        y = g.op("MatMul", [g.x, g.init(name + ".weight_t", g.he([32, 32]))], name)
        y = g.op("Reshape", [y, g.i64(name + ".heads", [1, 10, heads, dim])])
        return g.op("Transpose", [y], perm=[0, 2, 1, 3])
    q, k, v = project("q"), project("k"), project("v")
    scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])], "scores")
    scores = g.op("Mul", [scores, g.f32("scale", [dim ** -0.5])])
    attn = g.op("Softmax", [scores], axis=-1)
    y = g.op("Transpose", [g.op("MatMul", [attn, v], "weighted")], perm=[0, 2, 1, 3])
    return g.op("Reshape", [y, g.i64("merged", [1, 10, 32])])


@op_case([4, 8])
def matmul_computed_1d(g):
    """1-d operands: [4, 8] x [8] -> [4] and [8] x [8, 4] -> [4], the
    vector the column sums of the input."""
    v = g.op("ReduceSum", [g.x, g.i64("axes", [0])], keepdims=0)
    left = g.op("MatMul", [g.op("Relu", [g.x]), v], "matrix_vector")
    right = g.op("MatMul", [v, g.op("Transpose", [g.x], perm=[1, 0])], "vector_matrix")
    return g.op("Add", [left, right])


@op_case([2, 3, 5, 6])
def matmul_computed_broadcast(g):
    """Batch dims that broadcast: [2, 3, 5, 6] x [3, 6, 4] (a lower rank,
    expanded over the 2) and [1, 3, 5, 6] x [2, 1, 6, 4] (each operand
    expanded over the other's)."""
    b = g.op("Reshape", [g.op("Slice", [g.x, g.i64("s0", [0, 0, 0]), g.i64("e0", [1, 4, 6]), g.i64("a0", [0, 2, 3])]),
                         g.i64("b_shape", [3, 6, 4])])
    first = g.op("MatMul", [g.x, b], "lower_rank")
    a = g.op("Slice", [g.x, g.i64("s1", [1]), g.i64("e1", [2]), g.i64("a1", [0])])
    c = g.op("Reshape", [g.op("Slice", [g.x, g.i64("s2", [0, 0, 0]), g.i64("e2", [1, 4, 6]), g.i64("a2", [1, 2, 3])]),
                         g.i64("c_shape", [2, 1, 6, 4])])
    second = g.op("MatMul", [g.op("Sigmoid", [a]), c], "both_expanded")
    return g.op("Add", [first, second])


@op_case([1, 2, 3, 5, 4])
def einsum_attention(g):
    """MaxViT's attention as torch exports it: scores by Einsum
    "B G H I D, B G H J D -> B G H I J" (the second operand's last two
    letters swapped), Softmax, then "B G H I J, B G H J D -> B G H I D"."""
    k = g.op("Sigmoid", [g.x])
    scores = g.op("Einsum", [g.x, k], equation="B G H I D, B G H J D -> B G H I J")
    attn = g.op("Softmax", [scores], axis=-1)
    return g.op("Einsum", [attn, g.op("Tanh", [g.x])], equation="B G H I J, B G H J D -> B G H I D")


@op_case([4, 6, 5])
def einsum_forms(g):
    """Einsum forms around a product: an implicit output ("bij,bjk": the
    letters that appear once, alphabetically, so [i, k], b summed with j),
    and an output whose letters are permuted and whose batch letter is not
    first ("bij,bjk->kbi")."""
    t = g.op("Transpose", [g.x], perm=[0, 2, 1])
    implicit = g.op("Reshape", [g.op("Einsum", [g.x, t], equation="bij,bjk"), g.i64("one_batch", [1, 6, 6])])
    permuted = g.op("Einsum", [g.x, t], equation="bij,bjk->kbi")
    return g.op("Add", [g.op("Transpose", [permuted], perm=[1, 2, 0]), implicit])


@op_case([2, 3, 4, 6])
def binary_rank_broadcast_mod(g):
    """An Add of two computed values of different ranks ([2, 3, 4, 6] and
    [4, 6]: the lower gains leading 1s), and Mod folded on constants: an
    integer Mod with the divisor's sign (-16 mod 40 = 24, a Reshape's dim)
    and a float one with fmod=1 (7.5 fmod 2 = 1.5, a scale)."""
    rows = g.op("Sigmoid", [g.op("Reshape", [g.op("Slice", [g.x, g.i64("s0", [0, 0]), g.i64("e0", [1, 1]),
                                                            g.i64("a0", [0, 1])]), g.i64("rows", [4, 6])])])
    summed = g.op("Add", [g.x, rows])
    last = g.op("Mod", [g.i64("minus16", [-16]), g.i64("forty", [40])])
    flat = g.op("Reshape", [summed, g.op("Concat", [g.i64("lead", [2, 3]), last], axis=0)])
    scale = g.op("Mod", [g.f32("seven_half", [7.5]), g.f32("two", [2.0])], fmod=1)
    return g.op("Mul", [flat, scale])


@op_case([2, 6, 16])
def reciprocal_computed(g):
    """Reciprocal of a computed value as LayerNormalization's expanded form
    uses it (the normalised value times the reciprocal of the deviation),
    and of a value of both signs."""
    mean = g.op("ReduceMean", [g.x], axes=[-1])
    centred = g.op("Sub", [g.x, mean])
    variance = g.op("ReduceMean", [g.op("Mul", [centred, centred])], axes=[-1])
    deviation = g.op("Sqrt", [g.op("Add", [variance, g.f32("epsilon", [1e-5])])])
    normalised = g.op("Mul", [centred, g.op("Reciprocal", [deviation], "inverse")])
    signed = g.op("Reciprocal", [g.op("Add", [g.op("Mul", [g.x, g.f32("scale", [3.0])]), g.f32("shift", [0.5])])],
                  "signed")
    return g.op("Add", [normalised, g.op("Tanh", [signed])])


@op_case([1, 10, 32], opset=23)
def attention_op_gqa_causal(g):
    """ONNX's Attention op (opset 23) on 3-d Q, K, V projected from the
    input: 4 query heads over 2 key/value heads (grouped-query), causal,
    an explicit scale and a softcap."""
    def project(name, width):
        return g.op("MatMul", [g.x, g.init(name + ".weight_t", g.he([32, width]))], name)
    q, k, v = project("q", 32), project("k", 16), project("v", 16)
    return g.op("Attention", [q, k, v], "attention", q_num_heads=4, kv_num_heads=2, is_causal=1,
                scale=0.3, softcap=5.0)


@op_case([1, 10, 32], opset=23)
def attention_op_masks(g):
    """Attention on 4-d heads with a constant bool mask (a band, a key
    beyond it, one query row masked whole: its weights are 0, as the spec
    says) and a float mask computed from the input."""
    def heads(name):
        y = g.op("MatMul", [g.x, g.init(name + ".weight_t", g.he([32, 32]))], name)
        y = g.op("Reshape", [y, g.i64(name + ".heads", [1, 10, 4, 8])])
        return g.op("Transpose", [y], perm=[0, 2, 1, 3])
    q, k, v = heads("q"), heads("k"), heads("v")
    band = np.abs(np.arange(10)[:, None] - np.arange(10)[None, :]) <= 2
    band[:, 9] = True
    band[4, :] = False
    y = g.op("Attention", [q, k, v, g.init("band", band)], "banded")
    bias = g.op("Mul", [g.op("Tanh", [g.op("MatMul", [g.x, g.init("bias.weight_t", g.he([32, 10]))], "bias")]),
                        g.f32("bias.scale", [2.0])])
    bias = g.op("Reshape", [bias, g.i64("bias.shape", [1, 1, 10, 10])])
    z = g.op("Attention", [q, k, v, bias], "biased", scale=0.5)
    merged = g.op("Add", [y, z])
    return g.op("Reshape", [g.op("Transpose", [merged], perm=[0, 2, 1, 3]), g.i64("merged", [1, 10, 32])])


@op_case([1, 3, 4, 4])
def gathernd_bias(g):
    """Swin V2's relative position bias: a table computed from constants by
    a small MLP (MatMul, Relu: folded), read by GatherND at a [4, 4, 1]
    index (folded), per head, then added; and a GatherND with batch_dims 1
    (a row per head) scaling it."""
    coords = g.f32("coords", np.linspace(-1, 1, 18).reshape(9, 2).astype(np.float32))
    table = g.op("Relu", [g.op("MatMul", [coords, g.init("mlp.weight", g.normal([2, 3]))])])
    index = g.i64("index", np.arange(16).reshape(4, 4, 1) % 9)
    bias = g.op("Transpose", [g.op("GatherND", [table, index])], perm=[2, 0, 1])
    scales = g.op("GatherND", [g.f32("per_head", np.arange(12).reshape(3, 4, 1).astype(np.float32) / 8),
                               g.i64("head_rows", [[[1]], [[3]], [[0]]])], batch_dims=1)
    return g.op("Mul", [g.op("Add", [g.x, bias]), g.op("Reshape", [scales, g.i64("scale_shape", [1, 3, 1, 1])])])


@op_case([1, 4, 4, 3], opset=18)
def scatternd_mask(g):
    """Swin's shifted-window mask: a zero [4, 4] mask (ConstantOfShape)
    whose regions ScatterND writes with region numbers, folded, then added
    to the input's last two dims transposed."""
    mask = g.op("ConstantOfShape", [g.i64("mask_shape", [4, 4])],
                value=helper.make_tensor("zero", TensorProto.FLOAT, [1], [0.0]))
    rows = g.i64("rows", [[2], [3]])
    mask = g.op("ScatterND", [mask, rows, g.f32("rows_value", np.full([2, 4], 1.0, np.float32))])
    cells = g.i64("cells", [[0, 3], [1, 3], [3, 3]])
    mask = g.op("ScatterND", [mask, cells, g.f32("cells_value", np.array([2.0, 2.0, 5.0], np.float32))],
                reduction="add")
    return g.op("Add", [g.op("Transpose", [g.x], perm=[0, 3, 1, 2]), mask])


@op_case(SHAPE)
def gather_indices_2d(g):
    """Indices [[15, 0], [-1, 3]] along H (negative counts from the end):
    the result is rank 5."""
    return g.op("Gather", [g.x, g.i64("indices", [[15, 0], [-1, 3]])], axis=2)


@op_case([1, 8, 1, 16])
def expand_computed(g):
    """Expand to a higher rank: [1, 8, 1, 16] by [2, 1, 1, 4, 1] -> [2, 1, 8, 4, 16]."""
    return g.op("Expand", [g.op("Relu", [g.x]), g.i64("shape", [2, 1, 1, 4, 1])])


@op_case([1, 4, 3, 5])
def tile_computed(g):
    """Tile by [1, 2, 1, 3]: the channels twice, W three times."""
    return g.op("Tile", [g.x, g.i64("repeats", [1, 2, 1, 3])])


@op_case(SHAPE)
def expand_tile_constants(g):
    """Expand and Tile of constants, folded: a [8] bias tiled to [16] and
    expanded to [1, 16, 1, 1], sliced back to 8 channels, added."""
    bias = g.op("Tile", [g.f32("bias", np.linspace(-1, 1, 8).astype(np.float32)), g.i64("repeats", [2])])
    bias = g.op("Expand", [g.op("Reshape", [bias, g.i64("column", [16, 1, 1])]), g.i64("shape", [1, 16, 1, 1])])
    bias = g.op("Slice", [bias, g.i64("starts", [4]), g.i64("ends", [12]), g.i64("axes", [1])])
    return g.op("Add", [g.x, bias])


@op_case(SHAPE)
def mask_folded(g):
    """A mask built from constants as Swin's shifted windows build theirs
    (Range, Equal, Less, Not, And, Or, Xor, GreaterOrEqual, Where), all
    folded, then added to the input."""
    idx = g.op("Range", [g.i64("start", 0), g.i64("limit", 16), g.i64("delta", 1)])
    low = g.op("Less", [idx, g.i64("eight", 8)])
    even = g.op("Equal", [g.op("Sub", [idx, g.op("Mul", [g.op("Div", [idx, g.i64("two", 2)]), g.i64("two2", 2)])]),
                          g.i64("zero", 0)])
    pick = g.op("Or", [g.op("And", [low, g.op("Not", [even])]), g.op("Xor", [even, g.op("GreaterOrEqual", [idx, g.i64("twelve", 12)])])])
    mask = g.op("Where", [pick, g.f32("hit", [0.0]), g.f32("miss", [-100.0])])
    return g.op("Add", [g.x, mask])


@op_case([1, 4, 8])
def concat_constant_token(g):
    """ViT's class token: a constant [1, 1, 8] before the 4 computed tokens,
    then a position embedding of the whole [5, 8] added."""
    tokens = g.op("Concat", [g.f32("cls", np.linspace(-1, 1, 8).reshape(1, 1, 8).astype(np.float32)),
                             g.op("Relu", [g.x])], axis=1)
    return g.op("Add", [tokens, g.f32("pos", np.linspace(-2, 2, 40).reshape(5, 8).astype(np.float32))])


@op_case(SHAPE)
def concat_constants_between(g):
    """Constants before, between and after two computed values, on H."""
    c = lambda name, rows: g.f32(name, np.full((1, 8, rows, 16), float(rows), dtype=np.float32))
    return g.op("Concat", [c("a", 1), g.x, c("b", 2), g.op("Relu", [g.x]), c("c", 3)], axis=2)


@op_case(SHAPE)
def arith_full_constants(g):
    """x * C, then / D, then E - that, with C, D, E varying over H and W."""
    hw = lambda name, lo, hi: g.f32(name, np.linspace(lo, hi, 256).reshape(16, 16).astype(np.float32))
    y = g.op("Mul", [g.x, hw("scale", -2, 2)])
    y = g.op("Div", [y, hw("divisor", 0.5, 3)])
    return g.op("Sub", [hw("minuend", -1, 1), y])


@op_case(SHAPE)
def prelu_slope_per_row(g):
    """PRelu with a slope per row and column [16, 16]."""
    return g.op("PRelu", [g.x, g.f32("slope", np.linspace(-0.5, 0.5, 256).reshape(16, 16).astype(np.float32))])


@op_case([1, 8, 1, 16], opset=13)
def squeeze_unsqueeze_computed(g):
    """Squeeze axis 2 (axes as input), Unsqueeze at 0 and -1: reshapes."""
    y = g.op("Squeeze", [g.op("Relu", [g.x]), g.i64("axes", [2])])
    return g.op("Unsqueeze", [y, g.i64("new_axes", [0, -1])])


# -- Dropout, Identity -----------------------------------------------------------


@op_case(SHAPE, opset=12)
def dropout_opset12(g):
    """Dropout-12 with ratio as an input (inference: a no-op) between two Convs."""
    y = g.conv(g.x, 8, 8, 3, "conv1")
    y = g.op("Dropout", [y, g.f32("ratio", np.float32(0.5))], "drop")
    return g.conv(y, 8, 8, 3, "conv2")


@op_case(SHAPE, opset=7)
def dropout_opset7(g):
    """Dropout-7 with the ratio attribute between two Convs; IR 3."""
    y = g.conv(g.x, 8, 8, 3, "conv1")
    y = g.op("Dropout", [y], "drop", ratio=0.5)
    return g.conv(y, 8, 8, 3, "conv2")


@op_case(SHAPE, opset=7)
def dropout_mask_unread(g):
    """Dropout-7 listing its mask output, which no node reads (as the old model
    zoo's exports do): the mask is dropped."""
    y = g.conv(g.x, 8, 8, 3, "conv1")
    y = g.op("Dropout", [y], "drop", ratio=0.5)
    g.nodes[-1].output.append("drop_mask")
    return g.conv(y, 8, 8, 3, "conv2")


@op_case(SHAPE, opset=12)
def maxpool_indices_unread(g):
    """MaxPool-12 listing its indices output, which no node reads."""
    y = g.conv(g.x, 8, 8, 3, "conv1")
    y = g.op("MaxPool", [y], "pool", kernel_shape=[2, 2], strides=[2, 2])
    g.nodes[-1].output.append("pool_indices")
    return g.relu(y, "relu")


@op_case(SHAPE)
def identity_between_convs(g):
    y = g.conv(g.x, 8, 8, 3, "conv1")
    y = g.op("Identity", [y], "id")
    return g.conv(y, 8, 8, 3, "conv2")


@op_case(SHAPE)
def matmul_of_constants(g):
    """A per-channel bias computed at import by a batched MatMul of
    constants ([2, 8, 3] @ [3, 1], summed over the batch), as exporters
    leave weight arithmetic in the graph."""
    prod = g.op("MatMul", [g.init("a", g.normal([2, 8, 3])), g.init("b", g.normal([3, 1]))], "bias")
    total = g.op("ReduceSum", [prod, g.i64("axes", [0])], "bias", keepdims=0)
    bias = g.op("Reshape", [total, g.i64("shape", [1, 8, 1, 1])], "bias")
    return g.op("Add", [g.x, bias])


# -- Instance, group and layer normalization -------------------------------------


@op_case(SHAPE, dist="large")
def instance_norm(g):
    """InstanceNormalization of [1,8,16,16] (values of order 20: the mean
    must not swamp the variance)."""
    return g.op("InstanceNormalization", [g.x, g.init("in.scale", g.normal([8], 0.5, 1.0)),
                                          g.init("in.bias", g.normal([8], 0.1))], epsilon=1e-5)


@op_case([2, 6, 20])
def instance_norm_rank3(g):
    return g.op("InstanceNormalization", [g.x, g.init("in.scale", g.normal([6], 0.5, 1.0)),
                                          g.init("in.bias", g.normal([6], 0.1))], epsilon=1e-3)


@op_case(SHAPE, opset=21)
def group_norm_opset21(g):
    """GroupNormalization-21: scale and bias a channel."""
    return g.op("GroupNormalization", [g.x, g.init("gn.scale", g.normal([8], 0.5, 1.0)),
                                       g.init("gn.bias", g.normal([8], 0.1))], num_groups=2, epsilon=1e-5)


@op_case(SHAPE)
def group_norm_torch(g):
    """torch.nn.GroupNorm(4, 8) as the legacy exporter writes it below opset
    18: Reshape to [N, 4, -1], InstanceNormalization with unit scale, Reshape
    back, Mul and Add per channel."""
    flat = g.op("Reshape", [g.x, g.i64("group_shape", [1, 4, -1])], "gn")
    norm = g.op("InstanceNormalization", [flat, g.f32("ones", [1] * 4), g.f32("zeros", [0] * 4)], "gn",
                epsilon=1e-5)
    back = g.op("Reshape", [norm, g.i64("shape", [1, 8, 16, 16])], "gn")
    scaled = g.op("Mul", [back, g.init("gn.weight", g.normal([8, 1, 1], 0.5, 1.0))], "gn")
    return g.op("Add", [scaled, g.init("gn.bias", g.normal([8, 1, 1], 0.1))], "gn")


@op_case([2, 10, 32], opset=17)
def layer_norm_last(g):
    """LayerNormalization over the last dim, as ViT's blocks have it."""
    return g.op("LayerNormalization", [g.x, g.init("ln.weight", g.normal([32], 0.5, 1.0)),
                                       g.init("ln.bias", g.normal([32], 0.1))], axis=-1, epsilon=1e-6)


@op_case([2, 10, 32], opset=17, outputs=("output", "mean", "inv_std"))
def layer_norm_statistics(g):
    """LayerNormalization over the last two dims with its Mean and
    InvStdDev outputs read (graph outputs)."""
    g.nodes.append(helper.make_node("LayerNormalization", [g.x, g.init("ln.weight", g.normal([10, 1], 0.5, 1.0).repeat(32, 1))],
                                    ["y", "m", "s"], name="/ln/LayerNormalization", axis=1, epsilon=1e-3))
    return ["y", "m", "s"]


@op_case([2, 10, 32], opset=17)
def layer_norm_no_bias(g):
    return g.op("LayerNormalization", [g.x, g.init("ln.weight", g.normal([32], 0.5, 1.0))], axis=2)


@op_case([2, 6, 5, 4], opset=17)
def layer_norm_three_axes(g):
    """LayerNormalization over [6, 5, 4] with a scale that varies along the
    first of them only."""
    scale = np.repeat(g.normal([6, 1, 1], 0.5, 1.0), 20).reshape(6, 5, 4)
    return g.op("LayerNormalization", [g.x, g.init("ln.weight", scale),
                                       g.init("ln.bias", np.zeros([6, 5, 4], np.float32))], axis=1)


@op_case(SHAPE, opset=17)
def layer_norm_channels_nhwc(g):
    """ConvNeXt's LayerNorm2d: Transpose to NHWC, LayerNormalization over
    the channels, Transpose back."""
    nhwc = g.op("Transpose", [g.x], "norm", perm=[0, 2, 3, 1])
    ln = g.op("LayerNormalization", [nhwc, g.init("norm.weight", g.normal([8], 0.5, 1.0)),
                                     g.init("norm.bias", g.normal([8], 0.1))], "norm", axis=-1, epsilon=1e-6)
    return g.op("Transpose", [ln], "norm", perm=[0, 3, 1, 2])


# -- Upsample / Resize -----------------------------------------------------------

UP = [1, 4, 8, 8]


def resize(g, inputs, mode, ctm):
    return g.op("Resize", [g.x] + inputs, coordinate_transformation_mode=ctm,
                cubic_coeff_a=-0.75, mode=mode, nearest_mode="floor")


@op_case(UP, opset=9)
def upsample_nearest_opset9(g):
    return g.op("Upsample", [g.x, g.f32("scales", [1, 1, 2, 2])], mode="nearest")


@op_case(UP, opset=11)
def resize_nearest_opset11(g):
    """Resize-11 nearest x2 with the empty roi tensor PyTorch passes."""
    roi = g.init("roi", np.zeros([0], np.float32))
    return resize(g, [roi, g.f32("scales", [1, 1, 2, 2])], "nearest", "asymmetric")


@op_case(UP)
def resize_linear_half_pixel(g):
    return resize(g, ["", g.f32("scales", [1, 1, 2, 2])], "linear", "half_pixel")


@op_case(UP)
def resize_linear_pytorch_half_pixel(g):
    """What PyTorch writes for bilinear, align_corners=False."""
    return resize(g, ["", g.f32("scales", [1, 1, 2, 2])], "linear", "pytorch_half_pixel")


@op_case(UP)
def resize_sizes(g):
    """Nearest to sizes [1,4,12,20]: non-integer, different per axis."""
    return resize(g, ["", "", g.i64("sizes", [1, 4, 12, 20])], "nearest", "asymmetric")


@op_case(UP)
def resize_linear_align_corners(g):
    return resize(g, ["", g.f32("scales", [1, 1, 2, 2])], "linear", "align_corners")


@op_case(UP, opset=9)
def upsample_linear_opset9(g):
    """Upsample-9 linear (asymmetric coordinates), as older exporters wrote it."""
    return g.op("Upsample", [g.x, g.f32("scales", [1, 1, 2, 2])], mode="linear")


@op_case(UP)
def resize_linear_downscale(g):
    """Linear to half the size and to 3/4: sources between pixels, no antialiasing."""
    return resize(g, ["", "", g.i64("sizes", [1, 4, 4, 6])], "linear", "half_pixel")


@op_case(UP)
def resize_nearest_scale_1_5(g):
    """Nearest by 1.5 with half_pixel and round_prefer_floor (Resize-13's defaults)."""
    return g.op("Resize", [g.x, "", g.f32("scales", [1, 1, 1.5, 1.5])], mode="nearest")


# -- ReduceMean --------------------------------------------------------------------


@op_case(SHAPE, dist="uniform")
def reducemean_keepdims(g):
    return g.op("ReduceMean", [g.x], axes=[2, 3], keepdims=1)


@op_case(SHAPE, dist="uniform")
def reducemean_no_keepdims(g):
    return g.op("ReduceMean", [g.x], axes=[2, 3], keepdims=0)


@op_case(SHAPE, opset=18, dist="uniform")
def reducemean_opset18(g):
    """ReduceMean-18: axes as an input."""
    return g.op("ReduceMean", [g.x, g.i64("axes", [2, 3])], keepdims=1)


@op_case([1, 32, 32, 32], dist="uniform", rtol=1e-3,
         why="one mean of 32768 values: float sums in another order drift past 1e-4")
def reducemean_large(g):
    return g.op("ReduceMean", [g.x], axes=[1, 2, 3], keepdims=1)


# -- the other reductions, on computed values ------------------------------------


@op_case(SHAPE)
def reducemean_channels(g):
    """Over axis 1, not the last: moved last by a transpose."""
    return g.op("ReduceMean", [g.x], axes=[1], keepdims=1)


@op_case(SHAPE, opset=13)
def reducesum_channels_no_keepdims(g):
    """ReduceSum-13: axes as an input, over the channels."""
    return g.op("ReduceSum", [g.x, g.i64("axes", [1])], keepdims=0)


@op_case(SHAPE, opset=18)
def reducemax_height(g):
    return g.op("ReduceMax", [g.x, g.i64("axes", [2])], keepdims=1)


@op_case([1, 4, 64, 64])
def reducemax_4096(g):
    """4096 values a max: more than one window side, so a 1024 x 4 window."""
    return g.op("ReduceMax", [g.x], axes=[2, 3], keepdims=0)


@op_case(SHAPE)
def reducemin_channels_and_width(g):
    return g.op("ReduceMin", [g.x], axes=[1, 3], keepdims=1)


@op_case([2, 6, 10])
def reducel2_last(g):
    return g.op("ReduceL2", [g.x], axes=[-1], keepdims=1)


@op_case([2, 6, 10])
def reducel1_middle(g):
    return g.op("ReduceL1", [g.x], axes=[1], keepdims=0)


@op_case(SHAPE)
def reducesumsquare_all(g):
    """No axes: every axis."""
    return g.op("ReduceSumSquare", [g.x], keepdims=1)


@op_case(SHAPE, dist="uniform")
def reducelogsum_plane(g):
    return g.op("ReduceLogSum", [g.x], axes=[2, 3], keepdims=1)


@op_case(SHAPE, dist="uniform")
def sqrt_computed(g):
    """Sqrt of a computed value: exp(log(x) / 2), 0 at 0."""
    return g.op("Sqrt", [g.op("Relu", [g.x])])


@op_case(SHAPE)
def pow_computed_integers(g):
    """x^2 + x^3 - x^4 (products of x) + x^1."""
    p2 = g.op("Pow", [g.x, g.f32("two", 2.0)])
    p3 = g.op("Pow", [g.x, g.f32("three", 3.0)])
    p4 = g.op("Pow", [g.x, g.f32("four", 4.0)])
    p1 = g.op("Pow", [g.x, g.f32("one", 1.0)])
    return g.op("Add", [g.op("Sub", [g.op("Add", [p2, p3]), p4]), p1])


@op_case(SHAPE, dist="uniform")
def pow_computed_fraction(g):
    """x^1.5 of x in [0, 1): exp(1.5 log x)."""
    return g.op("Pow", [g.x, g.f32("exponent", 1.5)])


@op_case(SHAPE, dist="large")
def reducelogsumexp_channels(g):
    """Inputs up to about 60: exp alone would overflow float32 past 88."""
    return g.op("ReduceLogSumExp", [g.x], axes=[1], keepdims=1)


# ---------------------------------------------------------------------------
# Whole networks
# ---------------------------------------------------------------------------

NET = [1, 3, 32, 32]


def basic_block(g, x, cin, cout, stride, name):
    """ResNet basic block, Conv+BN unfolded; 1x1 strided projection when needed."""
    y = g.relu(g.bn(g.conv(x, cin, cout, 3, name + ".conv1", stride=stride, bias=False),
                    cout, name + ".bn1"), name)
    y = g.bn(g.conv(y, cout, cout, 3, name + ".conv2", bias=False), cout, name + ".bn2")
    if stride != 1 or cin != cout:
        x = g.conv(x, cin, cout, 1, name + ".downsample.0", stride=stride, bias=False)
        x = g.bn(x, cout, name + ".downsample.1")
    return g.relu(g.op("Add", [y, x], name), name)


@net_case(NET)
def resnet_style(g):
    """Stem conv7x7/2+BN+Relu+MaxPool, three basic blocks (one with a 1x1/2
    projection), GlobalAveragePool, Flatten, Gemm; Conv+BN pairs unfolded."""
    y = g.conv(g.x, 3, 16, 7, "conv1", stride=2, bias=False)
    y = g.relu(g.bn(y, 16, "bn1"), "relu")
    y = g.maxpool(y, 3, 2, 1, "maxpool")
    y = basic_block(g, y, 16, 16, 1, "layer1.0")
    y = basic_block(g, y, 16, 32, 2, "layer2.0")
    y = basic_block(g, y, 32, 32, 1, "layer2.1")
    y = g.flatten(g.gap(y, "avgpool"))
    return g.gemm(y, 32, 10, "fc")


def inverted_residual(g, x, cin, cout, stride, t, name):
    """MobileNetV2 block with BN folded into the Conv biases, ReLU6 as Clip."""
    hidden = cin * t
    y, i = x, 0
    if t != 1:
        y = g.clip6(g.conv(y, cin, hidden, 1, "%s.conv.%d" % (name, i)), name + ".conv.%d" % i)
        i += 1
    y = g.clip6(g.conv(y, hidden, hidden, 3, "%s.conv.%d" % (name, i), stride=stride,
                       group=hidden), name + ".conv.%d" % i)
    y = g.conv(y, hidden, cout, 1, "%s.conv.%d" % (name, i + 1))
    if stride == 1 and cin == cout:
        y = g.op("Add", [x, y], name)
    return y


@net_case(NET, symbolic=True)
def mobilenet_v2_style(g):
    """Conv/2 + ReLU6, four inverted residuals (expansion 1 and 6, depthwise
    group=C, one residual Add), 1x1 Conv, GlobalAveragePool, the
    Shape/Gather/Unsqueeze/Concat/Reshape flatten, Gemm; batch dim "N"."""
    y = g.clip6(g.conv(g.x, 3, 16, 3, "features.0.0", stride=2), "features.0")
    y = inverted_residual(g, y, 16, 8, 1, 1, "features.1")
    y = inverted_residual(g, y, 8, 12, 2, 6, "features.2")
    y = inverted_residual(g, y, 12, 12, 1, 6, "features.3")
    y = inverted_residual(g, y, 12, 16, 2, 6, "features.4")
    y = g.clip6(g.conv(y, 16, 64, 1, "features.5.0"), "features.5")
    y = g.shape_flatten(g.gap(y))
    return g.gemm(y, 64, 10, "classifier.1")


def shuffle_unit(g, x, cin, cout, stride, h, name):
    """ShuffleNetV2-like unit without the channel split (Slice-free): two
    branches on the whole input, Concat, channel shuffle (groups 2). BN folded."""
    half = cout // 2
    if stride == 2:
        a = g.conv(x, cin, cin, 3, name + ".branch1.0", stride=2, group=cin)
        a = g.relu(g.conv(a, cin, half, 1, name + ".branch1.2"), name + ".branch1")
    else:
        a = g.relu(g.conv(x, cin, half, 1, name + ".branch1.0"), name + ".branch1")
    b = g.relu(g.conv(x, cin, half, 1, name + ".branch2.0"), name + ".branch2.1")
    b = g.conv(b, half, half, 3, name + ".branch2.3", stride=stride, group=half)
    b = g.relu(g.conv(b, half, half, 1, name + ".branch2.5"), name + ".branch2.6")
    y = g.op("Concat", [a, b], name, axis=1)
    return g.shuffle(y, cout, h // stride, h // stride, 2, name)


@net_case(NET)
def shufflenet_style(g):
    """Conv/2+Relu, MaxPool/2, a stride-2 and a stride-1 shuffle unit, 1x1 Conv,
    mean over H,W (ReduceMean keepdims 0, as x.mean([2, 3])), Gemm."""
    y = g.relu(g.conv(g.x, 3, 24, 3, "conv1.0", stride=2), "conv1")
    y = g.maxpool(y, 3, 2, 1, "maxpool")
    y = shuffle_unit(g, y, 24, 48, 2, 8, "stage2.0")
    y = shuffle_unit(g, y, 48, 48, 1, 4, "stage2.1")
    y = g.relu(g.conv(y, 48, 64, 1, "conv5.0"), "conv5")
    y = g.op("ReduceMean", [y], axes=[2, 3], keepdims=0)
    return g.gemm(y, 64, 10, "fc")


def basic_conv(g, x, cin, cout, k, name, stride=1):
    """torchvision Inception's BasicConv2d: Conv (no bias) + BN(eps 1e-3) + Relu."""
    y = g.conv(x, cin, cout, k, name + ".conv", stride=stride, bias=False)
    return g.relu(g.bn(y, cout, name + ".bn", eps=1e-3), name)


@net_case(NET, opset=17)
def inception_style(g):
    """Stem, an Inception-A-like module (1x1 | 1x1-3x3 | 1x1-3x3-3x3 |
    avgpool-1x1), MaxPool, a module with a 5x5 and a maxpool-proj branch,
    GlobalAveragePool, Flatten, Gemm; Conv+BN unfolded."""
    y = basic_conv(g, g.x, 3, 16, 3, "Conv2d_1a_3x3")
    y = g.maxpool(y, 3, 2, 1, "maxpool1")
    b1 = basic_conv(g, y, 16, 8, 1, "Mixed_5b.branch1x1")
    b2 = basic_conv(g, y, 16, 8, 1, "Mixed_5b.branch3x3_1")
    b2 = basic_conv(g, b2, 8, 12, 3, "Mixed_5b.branch3x3_2")
    b3 = basic_conv(g, y, 16, 4, 1, "Mixed_5b.branch3x3dbl_1")
    b3 = basic_conv(g, b3, 4, 6, 3, "Mixed_5b.branch3x3dbl_2")
    b3 = basic_conv(g, b3, 6, 6, 3, "Mixed_5b.branch3x3dbl_3")
    b4 = g.avgpool(y, 3, 1, 1, "Mixed_5b", include_pad=1)
    b4 = basic_conv(g, b4, 16, 6, 1, "Mixed_5b.branch_pool")
    y = g.op("Concat", [b1, b2, b3, b4], "Mixed_5b", axis=1)  # 32 channels
    y = g.maxpool(y, 3, 2, 1, "maxpool2")
    b1 = basic_conv(g, y, 32, 12, 1, "Mixed_5c.branch1x1")
    b2 = basic_conv(g, y, 32, 8, 1, "Mixed_5c.branch5x5_1")
    b2 = basic_conv(g, b2, 8, 12, 5, "Mixed_5c.branch5x5_2")
    b3 = g.maxpool(y, 3, 1, 1, "Mixed_5c")
    b3 = basic_conv(g, b3, 32, 8, 1, "Mixed_5c.branch_pool")
    y = g.op("Concat", [b1, b2, b3], "Mixed_5c", axis=1)  # 32 channels
    y = g.flatten(g.gap(y, "avgpool"))
    return g.gemm(y, 32, 10, "fc")


def dense_layer(g, features, cin, growth, name):
    """DenseNet layer: Concat(previous) -> BN-Relu-Conv1x1 -> BN-Relu-Conv3x3."""
    x = features[0] if len(features) == 1 else g.op("Concat", features, name, axis=1)
    y = g.relu(g.bn(x, cin, name + ".norm1"), name + ".relu1")
    y = g.conv(y, cin, 2 * growth, 1, name + ".conv1", bias=False)
    y = g.relu(g.bn(y, 2 * growth, name + ".norm2"), name + ".relu2")
    return g.conv(y, 2 * growth, growth, 3, name + ".conv2", bias=False)


def dense_block(g, x, cin, layers, growth, name):
    features = [x]
    for i in range(layers):
        features.append(dense_layer(g, features, cin + i * growth, growth,
                                    "%s.denselayer%d" % (name, i + 1)))
    return g.op("Concat", features, name, axis=1), cin + layers * growth


@net_case(NET, opset=17)
def densenet_style(g):
    """Stem Conv+BN+Relu+MaxPool, a 3-layer dense block (growth 8), a transition
    (BN-Relu-1x1 Conv-AveragePool), a 2-layer dense block, BN-Relu,
    GlobalAveragePool, the Shape...Reshape flatten, Gemm. BNs that follow a
    Concat have no Conv to fold into."""
    y = g.conv(g.x, 3, 16, 3, "features.conv0", bias=False)
    y = g.relu(g.bn(y, 16, "features.norm0"), "features.relu0")
    y = g.maxpool(y, 3, 2, 1, "features.pool0")
    y, c = dense_block(g, y, 16, 3, 8, "features.denseblock1")
    y = g.relu(g.bn(y, c, "features.transition1.norm"), "features.transition1")
    y = g.conv(y, c, c // 2, 1, "features.transition1.conv", bias=False)
    y = g.avgpool(y, 2, 2, name="features.transition1.pool")
    y, c = dense_block(g, y, c // 2, 2, 8, "features.denseblock2")
    y = g.relu(g.bn(y, c, "features.norm5"))
    y = g.shape_flatten(g.gap(y))
    return g.gemm(y, c, 10, "classifier")


@net_case([1, 16, 8, 8], opset=17)
def densenet_block24(g):
    """DenseNet-121's third dense block, as many concat inputs in small: 24
    layers, each a 1x1 Conv (growth 4) over the Concat of all before it, so
    that the last layer's Concat reads 24 inputs and the block's own reads 25,
    as torchvision's export does (a Concat of that many inputs once failed to
    compile on any pair of targets). Full dense layers (BN-Relu-Conv twice)
    are densenet_style's; here each layer is one kernel, so that the pairs of
    targets it is compiled on stay quick."""
    features, c = [g.x], 16
    for i in range(24):
        name = "features.denseblock3.denselayer%d" % (i + 1)
        x = features[0] if len(features) == 1 else g.op("Concat", features, name, axis=1)
        features.append(g.conv(x, c + 4 * i, 4, 1, name + ".conv", bias=False))
    return g.op("Concat", features, "features.denseblock3", axis=1)


@net_case(NET, opset=11)
def vgg_style(g):
    """Conv3x3+Relu stacks with MaxPool, Flatten, Gemm-Relu-Dropout twice,
    Gemm, Softmax; BN-free (Conv biases), Dropout-10 with the ratio attribute."""
    y, cin, i = g.x, 3, 0
    for stage in ([16, 16], [32, 32], [32]):
        for cout in stage:
            y = g.relu(g.conv(y, cin, cout, 3, "features.%d" % i), "features.%d" % (i + 1))
            cin, i = cout, i + 2
        y = g.maxpool(y, 2, 2, name="features.%d" % i)
        i += 1
    y = g.flatten(y)
    y = g.op("Dropout", [g.relu(g.gemm(y, 32 * 4 * 4, 64, "classifier.0"), "classifier.1")],
             "classifier.2", ratio=0.5)
    y = g.op("Dropout", [g.relu(g.gemm(y, 64, 64, "classifier.3"), "classifier.4")],
             "classifier.5", ratio=0.5)
    return g.op("Softmax", [g.gemm(y, 64, 10, "classifier.6")], axis=1)


def mbconv(g, x, cin, cout, stride, t, name):
    """EfficientNet's MBConv: 1x1 expansion, depthwise 3x3, squeeze-and-excite
    (its reduction with SiLU, its gate a Sigmoid), 1x1 projection, each Conv
    (no bias) followed by BatchNormalization; SiLU as Sigmoid and Mul."""
    hidden, y = cin * t, x
    if t != 1:
        y = g.bn(g.conv(y, cin, hidden, 1, name + ".expand_conv", bias=False), hidden, name + ".bn0")
        y = silu(g, y, name + ".act0")
    y = g.bn(g.conv(y, hidden, hidden, 3, name + ".depthwise_conv", stride=stride, group=hidden, bias=False),
             hidden, name + ".bn1")
    y = silu(g, y, name + ".act1")
    squeezed = max(1, cin // 4)
    s = silu(g, g.conv(g.gap(y, name + ".se"), hidden, squeezed, 1, name + ".se.conv_reduce"), name + ".se.act1")
    s = g.op("Sigmoid", [g.conv(s, squeezed, hidden, 1, name + ".se.conv_expand")], name + ".se")
    y = g.op("Mul", [y, s], name + ".se")
    y = g.bn(g.conv(y, hidden, cout, 1, name + ".project_conv", bias=False), cout, name + ".bn2")
    if stride == 1 and cin == cout:
        y = g.op("Add", [y, x], name)
    return y


@net_case(NET)
def efficientnet_style(g):
    """EfficientNet-B0 in small: stem Conv/2+BN+SiLU, three MBConv blocks
    (expansion 1 and 6, one stride 2, one residual), head 1x1 Conv+BN+SiLU,
    GlobalAveragePool, Flatten, Gemm."""
    y = g.bn(g.conv(g.x, 3, 16, 3, "conv_stem", stride=2, bias=False), 16, "bn0")
    y = silu(g, y, "act0")
    y = mbconv(g, y, 16, 8, 1, 1, "blocks.0")
    y = mbconv(g, y, 8, 12, 2, 6, "blocks.1")
    y = mbconv(g, y, 12, 12, 1, 6, "blocks.2")
    y = silu(g, g.bn(g.conv(y, 12, 64, 1, "conv_head", bias=False), 64, "bn1"), "act1")
    y = g.flatten(g.gap(y, "avgpool"))
    return g.gemm(y, 64, 10, "classifier")


def mbv3_block(g, x, cin, hidden, cout, k, stride, se, hard, name):
    """MobileNetV3's inverted residual: 1x1 expansion, depthwise kxk,
    squeeze-and-excite gated by HardSigmoid (torch's), 1x1 projection; each
    Conv (no bias) with BatchNormalization; ReLU or HardSwish."""
    def act(v, i):
        return g.op("HardSwish", [v], "%s.act%d" % (name, i)) if hard else g.relu(v, "%s.act%d" % (name, i))
    y = x
    if hidden != cin:
        y = act(g.bn(g.conv(y, cin, hidden, 1, name + ".block.0.0", bias=False), hidden, name + ".block.0.1"), 0)
    y = act(g.bn(g.conv(y, hidden, hidden, k, name + ".block.1.0", stride=stride, group=hidden, bias=False),
                 hidden, name + ".block.1.1"), 1)
    if se:
        squeezed = max(8, hidden // 4)
        s = g.relu(g.conv(g.gap(y, name + ".se"), hidden, squeezed, 1, name + ".se.fc1"), name + ".se")
        s = torch_hardsigmoid(g, g.conv(s, squeezed, hidden, 1, name + ".se.fc2"), name + ".se")
        y = g.op("Mul", [y, s], name + ".se")
    y = g.bn(g.conv(y, hidden, cout, 1, name + ".block.3.0", bias=False), cout, name + ".block.3.1")
    if stride == 1 and cin == cout:
        y = g.op("Add", [y, x], name)
    return y


@net_case(NET, opset=17)
def mobilenet_v3_style(g):
    """MobileNetV3-Small in small: stem Conv/2+BN+HardSwish, four blocks
    (ReLU and HardSwish ones, squeeze-and-excite, kernels 3 and 5, one
    residual), head 1x1 Conv+BN+HardSwish, GlobalAveragePool, Flatten,
    Gemm+HardSwish, Gemm."""
    y = g.bn(g.conv(g.x, 3, 16, 3, "features.0.0", stride=2, bias=False), 16, "features.0.1")
    y = g.op("HardSwish", [y], "features.0.2")
    y = mbv3_block(g, y, 16, 16, 16, 3, 2, True, False, "features.1")
    y = mbv3_block(g, y, 16, 64, 24, 3, 2, False, False, "features.2")
    y = mbv3_block(g, y, 24, 72, 24, 3, 1, False, False, "features.3")
    y = mbv3_block(g, y, 24, 96, 40, 5, 1, True, True, "features.4")
    y = g.bn(g.conv(y, 40, 96, 1, "features.5.0", bias=False), 96, "features.5.1")
    y = g.flatten(g.gap(g.op("HardSwish", [y], "features.5.2"), "avgpool"))
    y = g.op("HardSwish", [g.gemm(y, 96, 64, "classifier.0")], "classifier.1")
    return g.gemm(y, 64, 10, "classifier.3")


# ---------------------------------------------------------------------------
# Building, running, writing
# ---------------------------------------------------------------------------


def make_input(c):
    """The case's data input, from its own seeded stream."""
    rng = np.random.RandomState(zlib.crc32(("input:" + c.name).encode()))
    if c.dist == "uniform":
        x = rng.uniform(0.0, 1.0, c.shape)
    elif c.dist == "wide":
        x = rng.standard_normal(c.shape) * 3.0
    elif c.dist == "large":
        x = rng.standard_normal(c.shape) * 20.0
    else:
        x = rng.standard_normal(c.shape)
    return x.astype(np.float32)


def typed_copy(t):
    """The same float tensor in the typed float_data field."""
    arr = numpy_helper.to_array(t)
    return helper.make_tensor(t.name, TensorProto.FLOAT, arr.shape, arr.ravel().tolist())


def build(c, opset, out_shapes):
    """The case's ModelProto at `opset`; out_shapes None: outputs without shape."""
    g = Graph(c, opset)
    outs = c.fn(g)
    outs = outs if isinstance(outs, list) else [outs]
    names = c.outputs
    assert len(names) == len(outs), c.name
    rename = dict(zip(outs, names))
    for n in g.nodes:
        for field in (n.input, n.output):
            for i, v in enumerate(field):
                field[i] = rename.get(v, v)
    batch = "N" if c.symbolic else c.shape[0]
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch] + c.shape[1:])]
    outputs = []
    for i, n in enumerate(names):
        shape = None
        if out_shapes is not None:
            shape = list(out_shapes[i])
            if c.symbolic:
                shape[0] = "N"
        outputs.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, shape))
    inits = [typed_copy(t) for t in g.inits] if c.typed else g.inits
    ir = IR_FOR_OPSET[opset]
    if ir < 4:
        inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    graph = helper.make_graph(g.nodes, c.name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=ir, producer_name=PRODUCER, producer_version="1")
    return model


def session(src):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.use_deterministic_compute = True
    so.log_severity_level = 3
    return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])


def run(src, x):
    outs = session(src).run(None, {"input": x})
    for o in outs:
        assert o.dtype == np.float32 and np.all(np.isfinite(o)), "bad output"
    return outs


def externalize(model, outdir, name):
    """Move the Conv weight (offset 0) and bias (next 256-byte boundary) into
    NAME.weights.bin; returns the file's bytes."""
    location = name + ".weights.bin"
    blob = b""
    for t in model.graph.initializer:
        data = t.raw_data
        offset = (len(blob) + 255) // 256 * 256
        blob += b"\0" * (offset - len(blob)) + data
        external_data_helper.set_external_data(t, location, offset, len(data))
        t.data_location = TensorProto.EXTERNAL
        t.ClearField("raw_data")
    with open(os.path.join(outdir, location), "wb") as f:
        f.write(blob)
    return location


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def generate_case(c, outdir):
    """Write NAME.onnx (and its data file), NAME.input.bin and NAME.expected.bin;
    returns (the file names written, the model's op types, sorted)."""
    x = make_input(c)
    run_opset = c.ref_opset or c.opset  # the opset of the graph onnxruntime runs
    shapes = [o.shape for o in run(build(c, run_opset, None).SerializeToString(), x)]
    model = build(c, c.opset, shapes)
    if c.value_info:
        model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    written = []
    if c.external:
        written.append(externalize(model, outdir, c.name))
    path = os.path.join(outdir, c.name + ".onnx")
    write(path, model.SerializeToString())
    written.append(c.name + ".onnx")
    onnx.checker.check_model(path, full_check=True)
    if c.ref_opset:
        outs = run(build(c, c.ref_opset, shapes).SerializeToString(), x)
    else:
        outs = run(path, x)
    write(os.path.join(outdir, c.name + ".input.bin"), x.astype("<f4").tobytes())
    expected = b"".join(o.astype("<f4").ravel().tobytes() for o in outs)
    write(os.path.join(outdir, c.name + ".expected.bin"), expected)
    written += [c.name + ".input.bin", c.name + ".expected.bin"]
    return written, sorted(set(n.op_type for n in model.graph.node))


TSV_HEADER = """\
# hetc ONNX import corpus. Written by tests/onnx/make_corpus.py; do not edit.
# One case a line, tab-separated: NAME KIND INPUT_SHAPE RTOL OPS
#   NAME         the files corpus/NAME.onnx, NAME.input.bin, NAME.expected.bin
#   KIND         op: one operator or attribute variant; net: a whole small network
#   INPUT_SHAPE  the shape of NAME.input.bin (float32, little-endian, row-major),
#                the value of the model's one graph input "input"; where that input's
#                dim 0 is dim_param "N" (marked below) this is the shape to run with
#   RTOL         relative tolerance against NAME.expected.bin (scale it by the output's
#                largest magnitude for elements near zero); reasons for looser ones below
#   OPS          the ONNX op types in the model, sorted, comma-separated
# NAME.expected.bin: every graph output in graph-output order, concatenated, float32 LE,
# from onnxruntime (CPUExecutionProvider, graph optimizations off, one thread).
# Models with opset < 9 are IR 3: their initializers are also listed as graph inputs.
# conv_external_data.onnx keeps its weights in conv_external_data.weights.bin (same dir).
"""


def rtol_text(r):
    """1e-4 written "1e-4"."""
    mantissa, exponent = ("%e" % r).split("e")
    return "%se%d" % (mantissa.rstrip("0").rstrip("."), int(exponent))


def generate(outdir):
    """Write the whole corpus into outdir; returns the file names written."""
    os.makedirs(outdir, exist_ok=True)
    names = set()
    written = []
    lines = [TSV_HEADER]
    for c in CASES:
        assert c.name not in names, c.name
        names.add(c.name)
        files, ops = generate_case(c, outdir)
        written += files
        if c.kind == "op" and c.why:
            lines.append("# %s: RTOL %s: %s\n" % (c.name, rtol_text(c.rtol), c.why))
        if c.kind == "net" and NET_WHY and not any(k.kind == "net" for k in CASES[:CASES.index(c)]):
            lines.append("# nets: RTOL %s: %s\n" % (rtol_text(RTOL_NET), NET_WHY))
        if c.symbolic:
            lines.append('# %s: input dim 0 is dim_param "N"\n' % c.name)
        lines.append("%s\t%s\t%s\t%s\t%s\n" % (c.name, c.kind, "x".join(map(str, c.shape)),
                                               rtol_text(c.rtol), ",".join(ops)))
    with open(os.path.join(outdir, "corpus.tsv"), "w", newline="\n") as f:
        f.write("".join(lines))
    written.append("corpus.tsv")
    return written


def same_expected(a, b):
    """Two expected.bin files equal within CHECK_RTOL (of each value or of the
    largest finite one), infinities and NaNs where they were."""
    if len(a) != len(b):
        return False
    x, y = np.frombuffer(a, "<f4"), np.frombuffer(b, "<f4")
    finite = np.isfinite(y)
    if not np.array_equal(finite, np.isfinite(x)) or \
            not np.array_equal(np.nan_to_num(x[~finite]), np.nan_to_num(y[~finite])):
        return False
    x, y = x[finite], y[finite]
    scale = max(float(np.max(np.abs(y))) if y.size else 0.0, 1e-30)
    return bool(np.all(np.abs(x - y) <= CHECK_RTOL * np.maximum(np.abs(y), scale)))


def check(outdir, generate_into=None, what="tests/onnx/corpus", script="make_corpus.py"):
    """1 (and the files named) when what generate_into writes into a temporary
    folder differs from outdir's files; expected outputs may drift within
    CHECK_RTOL."""
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        names = (generate_into or generate)(tmp)
        committed = set(os.listdir(outdir)) if os.path.isdir(outdir) else set()
        for n in names:
            path = os.path.join(outdir, n)
            if not os.path.exists(path):
                bad.append(n + " (missing)")
                continue
            with open(path, "rb") as f:
                old = f.read()
            with open(os.path.join(tmp, n), "rb") as f:
                new = f.read()
            if old == new:
                continue
            if n.endswith(".expected.bin") and same_expected(new, old):
                print("note: %s differs within %g (onnxruntime on another CPU?)" % (n, CHECK_RTOL))
                continue
            bad.append(n)
        bad += [n + " (not generated)" for n in sorted(committed - set(names))]
    if bad:
        print("%s out of date (run python3 tests/onnx/%s):" % (what, script), file=sys.stderr)
        for n in bad:
            print("  differs: " + n, file=sys.stderr)
        return 1
    print("%s up to date (%d files)" % (what, len(names)))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if a committed file is out of date")
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help="output directory (default: tests/onnx/corpus)")
    args = ap.parse_args(argv)
    if args.check:
        return check(args.out)
    if os.path.isdir(args.out):
        for n in os.listdir(args.out):
            if n.endswith((".onnx", ".bin", ".tsv")):
                os.remove(os.path.join(args.out, n))
    names = generate(args.out)
    print("wrote %d files (%d cases) to %s" % (len(names), len(CASES), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
