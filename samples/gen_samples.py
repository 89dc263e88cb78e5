#!/usr/bin/env python3
"""Generate the hetc sample models (api/model-format.md, version 1).

Usage:
    python3 samples/gen_samples.py            regenerate every sample in samples/
    python3 samples/gen_samples.py --check    regenerate into a temp dir, exit 1
                                              if a committed sample differs
    python3 samples/gen_samples.py --out DIR  write the samples into DIR
    python3 samples/gen_samples.py --weights-file MODEL.json OUT.weights
            [--seed N] [--like-random-init]
        write a weights file holding exactly the parameters MODEL needs:
        values from random.Random(N) (default 1234), or, with
        --like-random-init, the values hetc's {"init": "random", "seed": N}
        gives (see random_init_values; slow for large models).

Python 3 standard library only. Other tests import this file:

    write_weights_file(path, tensors, ...)   write a .weights file
    encode_weights(tensors, ...)             the same, as bytes (to truncate,
                                             patch, or corrupt)
    model_parameters(model)                  [(name, shape, kind)] a model needs
    random_weights(params, seed)             deterministic tensors for them
    infer_shapes(model)                      {value: shape}, validating the graph
"""

import argparse
import filecmp
import json
import math
import os
import random
import re
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Model builder
# ---------------------------------------------------------------------------


class Net:
    """Collects nodes in order and tracks shapes while building."""

    def __init__(self, name, seed, inputs=(("data", [1, 3, 224, 224]),), weights=None):
        self.name = name
        self.inputs = []
        for iname, shape in inputs:
            inp = {"name": iname, "shape": list(shape), "dtype": "float32"}
            if len(shape) == 4:
                inp["layout"] = "NCHW"
            self.inputs.append(inp)
        self.weights = weights if weights is not None else {"init": "random", "seed": seed}
        self.nodes = []
        self.outputs = []
        self.shapes = {i["name"]: list(i["shape"]) for i in self.inputs}

    def add_node(self, name, op, inputs, attrs=None, empty_attrs=False):
        if isinstance(inputs, str):
            inputs = [inputs]
        node = {"name": name, "op": op, "inputs": list(inputs)}
        if attrs:
            node["attrs"] = attrs
        elif empty_attrs:
            node["attrs"] = {}
        self.nodes.append(node)
        self.shapes[name] = node_shape(node, [self.shapes[i] for i in inputs], "/nodes/%d" % (len(self.nodes) - 1))
        return name

    def shape(self, value):
        return self.shapes[value]

    # -- op helpers; each returns the output value name ----------------------

    def conv(self, name, x, channels, kernel, stride=1, pad=0, dilation=1, groups=1,
             bias=False, explicit=False):
        k = _pair(kernel)
        attrs = {"channels": channels, "kernel": k, "strides": _pair(stride)}
        if isinstance(pad, (list, tuple)) and len(pad) == 4:
            attrs["padding"] = list(pad)
        else:
            attrs["padding"] = _pair(pad)
        if explicit or _pair(dilation) != [1, 1]:
            attrs["dilation"] = _pair(dilation)
        if explicit or groups != 1:
            attrs["groups"] = groups
        if explicit or bias:
            attrs["bias"] = bias
        return self.add_node(name, "conv2d", x, attrs)

    def dense(self, name, x, units, bias=False):
        attrs = {"units": units}
        if bias:
            attrs["bias"] = True
        return self.add_node(name, "dense", x, attrs)

    def bn(self, name, x, epsilon=None):
        return self.add_node(name, "batch_norm", x, {"epsilon": epsilon} if epsilon is not None else None)

    def act(self, name, op, x):
        return self.add_node(name, op, x)

    def pool(self, name, op, x, kernel, stride=None, pad=0, ceil_mode=False, count_include_pad=None):
        attrs = {"kernel": _pair(kernel)}
        attrs["strides"] = _pair(stride if stride is not None else 1)
        if isinstance(pad, (list, tuple)) and len(pad) == 4:
            attrs["padding"] = list(pad)
        elif pad != 0:
            attrs["padding"] = _pair(pad)
        if ceil_mode:
            attrs["ceil_mode"] = True
        if count_include_pad is not None:
            attrs["count_include_pad"] = count_include_pad
        return self.add_node(name, op, x, attrs)

    def to_model(self):
        return {
            "format": "hetc-model",
            "version": 1,
            "name": self.name,
            "inputs": self.inputs,
            "weights": self.weights,
            "nodes": self.nodes,
            "outputs": list(self.outputs),
        }


def _pair(v):
    if isinstance(v, (list, tuple)):
        assert len(v) == 2
        return list(v)
    return [v, v]


# ---------------------------------------------------------------------------
# Shape inference and validation (api/model-format.md)
# ---------------------------------------------------------------------------

NAME_RE = re.compile(r"^[A-Za-z0-9_.:/-]{1,255}$")

# op -> (number of inputs (min, max), allowed attrs with defaults, required attrs)
OPS = {
    "conv2d": ((1, 1), {"channels": None, "kernel": None, "strides": [1, 1], "padding": [0, 0, 0, 0],
                        "dilation": [1, 1], "groups": 1, "bias": False}, ("channels", "kernel")),
    "dense": ((1, 1), {"units": None, "bias": False}, ("units",)),
    "batch_norm": ((1, 1), {"epsilon": 1e-5}, ()),
    "bias_add": ((1, 1), {}, ()),
    "relu": ((1, 1), {}, ()),
    "relu6": ((1, 1), {}, ()),
    "sigmoid": ((1, 1), {}, ()),
    "tanh": ((1, 1), {}, ()),
    "add": ((2, 2), {}, ()),
    "multiply": ((2, 2), {}, ()),
    "max_pool2d": ((1, 1), {"kernel": None, "strides": [1, 1], "padding": [0, 0, 0, 0],
                            "ceil_mode": False}, ("kernel",)),
    "avg_pool2d": ((1, 1), {"kernel": None, "strides": [1, 1], "padding": [0, 0, 0, 0],
                            "ceil_mode": False, "count_include_pad": False}, ("kernel",)),
    "global_avg_pool2d": ((1, 1), {}, ()),
    "concat": ((1, 64), {"axis": 1}, ()),
    "flatten": ((1, 1), {}, ()),
    "reshape": ((1, 1), {"shape": None}, ("shape",)),
    "softmax": ((1, 1), {"axis": -1}, ()),
}


class ModelError(ValueError):
    pass


def _fail(path, msg):
    raise ModelError("%s: %s" % (path, msg))


def _ints(path, v, n, minimum):
    if (not isinstance(v, list) or len(v) != n
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= minimum for x in v)):
        _fail(path, "expected %d integers >= %d, got %s" % (n, minimum, json.dumps(v)))
    return v


def _padding(path, v):
    if isinstance(v, list) and len(v) == 2:
        _ints(path, v, 2, 0)
        return [v[0], v[1], v[0], v[1]]
    return _ints(path, v, 4, 0)


def _window(path, size, k, s, lo, hi, d, ceil_mode):
    span = size + lo + hi - d * (k - 1) - 1
    if span < 0:
        _fail(path, "window larger than the padded input")
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= size + lo:  # last window would start in the padding only
            out -= 1
    else:
        out = span // s + 1
    if out < 1:
        _fail(path, "output size < 1")
    return out


def node_shape(node, in_shapes, path="node"):
    """Output shape of one node given its input shapes; raises ModelError."""
    op = node["op"]
    if op not in OPS:
        _fail(path + "/op", "unknown op %r" % op)
    (nmin, nmax), allowed, required = OPS[op]
    if not nmin <= len(in_shapes) <= nmax:
        _fail(path + "/inputs", "%s takes %d..%d inputs, got %d" % (op, nmin, nmax, len(in_shapes)))
    given = node.get("attrs", {})
    for key in given:
        if key not in allowed:
            _fail(path + "/attrs/" + key, "unknown attribute for %s" % op)
    for key in required:
        if key not in given:
            _fail(path + "/attrs", "missing required attribute %r" % key)
    a = dict(allowed)
    a.update(given)
    ap = path + "/attrs/"
    x = in_shapes[0]

    def need_rank(r):
        if len(x) != r:
            _fail(path + "/inputs/0", "%s needs a %d-d input, got %s" % (op, r, x))

    if op == "conv2d":
        need_rank(4)
        n, c, h, w = x
        ch = a["channels"]
        if not isinstance(ch, int) or isinstance(ch, bool) or ch < 1:
            _fail(ap + "channels", "expected a positive integer")
        kh, kw = _ints(ap + "kernel", a["kernel"], 2, 1)
        sh, sw = _ints(ap + "strides", a["strides"], 2, 1)
        dh, dw = _ints(ap + "dilation", a["dilation"], 2, 1)
        t, l, b, r = _padding(ap + "padding", a["padding"])
        g = a["groups"]
        if not isinstance(g, int) or isinstance(g, bool) or g < 1 or c % g or ch % g:
            _fail(ap + "groups", "groups %r must divide C_in %d and channels %d" % (g, c, ch))
        if not isinstance(a["bias"], bool):
            _fail(ap + "bias", "expected a boolean")
        return [n, ch, _window(path, h, kh, sh, t, b, dh, False), _window(path, w, kw, sw, l, r, dw, False)]
    if op == "dense":
        need_rank(2)
        if not isinstance(a["units"], int) or a["units"] < 1:
            _fail(ap + "units", "expected a positive integer")
        return [x[0], a["units"]]
    if op == "batch_norm":
        need_rank(4)
        if not isinstance(a["epsilon"], (int, float)) or a["epsilon"] <= 0:
            _fail(ap + "epsilon", "expected a number > 0")
        return list(x)
    if op == "bias_add":
        if len(x) not in (2, 4):
            _fail(path + "/inputs/0", "bias_add needs a 2-d or 4-d input")
        return list(x)
    if op in ("relu", "relu6", "sigmoid", "tanh"):
        return list(x)
    if op in ("add", "multiply"):
        y = in_shapes[1]
        if len(y) != len(x) or any(b not in (a_, 1) for a_, b in zip(x, y)):
            _fail(path + "/inputs/1", "shape %s does not broadcast to %s" % (y, x))
        return list(x)
    if op in ("max_pool2d", "avg_pool2d"):
        need_rank(4)
        n, c, h, w = x
        kh, kw = _ints(ap + "kernel", a["kernel"], 2, 1)
        sh, sw = _ints(ap + "strides", a["strides"], 2, 1)
        t, l, b, r = _padding(ap + "padding", a["padding"])
        if max(t, b) >= kh or max(l, r) >= kw:
            _fail(ap + "padding", "pool padding must be smaller than the kernel")
        cm = a["ceil_mode"]
        return [n, c, _window(path, h, kh, sh, t, b, 1, cm), _window(path, w, kw, sw, l, r, 1, cm)]
    if op == "global_avg_pool2d":
        need_rank(4)
        return [x[0], x[1], 1, 1]
    if op == "concat":
        rank = len(x)
        axis = a["axis"]
        if not -rank <= axis < rank:
            _fail(ap + "axis", "axis out of range")
        axis %= rank
        out = list(x)
        for i, y in enumerate(in_shapes[1:], 1):
            if len(y) != rank or any(y[d] != x[d] for d in range(rank) if d != axis):
                _fail(path + "/inputs/%d" % i, "shape %s does not match %s" % (y, x))
            out[axis] += y[axis]
        return out
    if op == "flatten":
        return [x[0], _prod(x[1:])]
    if op == "reshape":
        shp = a["shape"]
        if (not isinstance(shp, list) or not 1 <= len(shp) <= 6
                or not all(isinstance(v, int) and (v >= 1 or v == -1) for v in shp)
                or shp.count(-1) > 1):
            _fail(ap + "shape", "bad shape %s" % json.dumps(shp))
        known = _prod([v for v in shp if v != -1])
        total = _prod(x)
        out = list(shp)
        if -1 in shp:
            if total % known:
                _fail(ap + "shape", "cannot infer -1")
            out[shp.index(-1)] = total // known
        if _prod(out) != total:
            _fail(ap + "shape", "element count %d != %d" % (_prod(out), total))
        return out
    if op == "softmax":
        if not -len(x) <= a["axis"] < len(x):
            _fail(ap + "axis", "axis out of range")
        return list(x)
    raise AssertionError(op)


def _prod(v):
    p = 1
    for d in v:
        p *= d
    return p


TOP_KEYS = {"format", "version", "name", "inputs", "weights", "nodes", "outputs"}


def infer_shapes(model, where="model.json"):
    """Validate a model dict and return {value name: shape}."""
    if set(model) != TOP_KEYS:
        _fail(where, "top-level keys %s" % sorted(model))
    if model["format"] != "hetc-model" or model["version"] != 1:
        _fail(where, "bad format/version")
    shapes = {}
    for i, inp in enumerate(model["inputs"]):
        if not set(inp) <= {"name", "shape", "dtype", "layout"}:
            _fail("%s: /inputs/%d" % (where, i), "unknown key")
        if len(inp["shape"]) == 4 and inp.get("layout") != "NCHW":
            _fail("%s: /inputs/%d" % (where, i), "4-d input needs layout NCHW")
        if inp["dtype"] != "float32":
            _fail("%s: /inputs/%d" % (where, i), "dtype")
        shapes[inp["name"]] = list(inp["shape"])
    byname = {}
    for i, node in enumerate(model["nodes"]):
        if not set(node) <= {"name", "op", "inputs", "attrs"}:
            _fail("%s: /nodes/%d" % (where, i), "unknown key")
        byname[node["name"]] = (i, node)
    names = list(shapes) + [n["name"] for n in model["nodes"]]
    for nm in names:
        if not NAME_RE.match(nm):
            _fail(where, "bad name %r" % nm)
    if len(set(names)) != len(names):
        _fail(where, "duplicate names")
    # topological order (nodes may appear in any order)
    state = {}

    def visit(name, stack):
        if name in shapes:
            return
        if name not in byname:
            _fail(where, "unknown value %r" % name)
        if state.get(name) == 1:
            _fail(where, "cycle through %r" % name)
        state[name] = 1
        i, node = byname[name]
        for src in node["inputs"]:
            visit(src, stack)
        shapes[name] = node_shape(node, [shapes[s] for s in node["inputs"]], "%s: /nodes/%d" % (where, i))
        for s in shapes[name]:
            if s < 1:
                _fail(where, "empty tensor at %r" % name)
        if _prod(shapes[name]) > 2 ** 31:
            _fail(where, "tensor %r too large" % name)
        state[name] = 2

    for node in model["nodes"]:
        visit(node["name"], [])
    # liveness: every node must reach an output
    live = set()
    todo = list(model["outputs"])
    while todo:
        v = todo.pop()
        if v in live:
            continue
        if v not in shapes:
            _fail(where, "unknown output %r" % v)
        live.add(v)
        if v in byname:
            todo.extend(byname[v][1]["inputs"])
    dead = [n for n in byname if n not in live]
    if dead:
        _fail(where, "dead nodes %s" % dead[:5])
    return shapes


def model_parameters(model, shapes=None):
    """[(tensor name, shape, kind)] in node order; kind is weight, bias,
    gamma, beta, mean or var."""
    if shapes is None:
        shapes = infer_shapes(model)
    params = []
    for node in model["nodes"]:
        op, a, nm = node["op"], node.get("attrs", {}), node["name"]
        x = shapes[node["inputs"][0]] if node["inputs"] else None
        if op == "conv2d":
            kh, kw = a["kernel"]
            params.append((nm + ".weight", [a["channels"], x[1] // a.get("groups", 1), kh, kw], "weight"))
            if a.get("bias", False):
                params.append((nm + ".bias", [a["channels"]], "bias"))
        elif op == "dense":
            params.append((nm + ".weight", [a["units"], x[1]], "weight"))
            if a.get("bias", False):
                params.append((nm + ".bias", [a["units"]], "bias"))
        elif op == "bias_add":
            params.append((nm + ".bias", [x[1]], "bias"))
        elif op == "batch_norm":
            for k in ("gamma", "beta", "mean", "var"):
                params.append(("%s.%s" % (nm, k), [x[1]], k))
    return params


def conv_dense_macs(model, shapes):
    """Multiply-accumulates of conv2d and dense nodes (FLOPs / 2)."""
    total = 0
    for node in model["nodes"]:
        a = node.get("attrs", {})
        if node["op"] == "conv2d":
            cin = shapes[node["inputs"][0]][1]
            kh, kw = a["kernel"]
            total += _prod(shapes[node["name"]]) * (cin // a.get("groups", 1)) * kh * kw
        elif node["op"] == "dense":
            total += _prod(shapes[node["name"]]) * shapes[node["inputs"][0]][1]
    return total


# ---------------------------------------------------------------------------
# Weights files
# ---------------------------------------------------------------------------

WEIGHTS_MAGIC = b"HETCWTS1"


def _f32(values):
    """Pack a sequence of floats (or pass bytes through) as little-endian float32."""
    if isinstance(values, (bytes, bytearray)):
        return bytes(values)
    return struct.pack("<%df" % len(values), *values)


def encode_weights(tensors, align=64, magic=WEIGHTS_MAGIC, version=1, count=None):
    """Encode a .weights file (api/model-format.md) and return its bytes.

    tensors: iterable of (name, shape, values[, overrides]). values is a
    sequence of floats (packed as float32) or raw bytes. overrides is an
    optional dict to forge a bad entry: any of name (bytes or str), name_len,
    dtype, rank, dims, offset, nbytes. Data blocks follow the entry table in
    the given order, each aligned to `align` bytes. `magic`, `version` and
    `count` (defaults to the number of tensors) can be forged too.
    """
    tensors = [tuple(t) for t in tensors]
    entries = []
    for t in tensors:
        name, shape, values = t[0], list(t[1]), t[2]
        ov = t[3] if len(t) > 3 else {}
        data = _f32(values)
        nb = ov.get("name", name)
        if isinstance(nb, str):
            nb = nb.encode("utf-8")
        entries.append({
            "name": nb,
            "name_len": ov.get("name_len", len(nb)),
            "dtype": ov.get("dtype", 1),
            "rank": ov.get("rank", len(shape)),
            "dims": ov.get("dims", shape),
            "data": data,
            "offset": ov.get("offset"),
            "nbytes": ov.get("nbytes", len(data)),
        })
    header_len = 16 + sum(4 + len(e["name"]) + 4 + 4 + 8 * len(e["dims"]) + 16 for e in entries)
    pos = header_len
    blobs = []
    for e in entries:
        pos = (pos + align - 1) // align * align
        blobs.append((pos, e["data"]))
        if e["offset"] is None:
            e["offset"] = pos
        pos += len(e["data"])
    out = bytearray()
    out += magic
    out += struct.pack("<II", version, len(entries) if count is None else count)
    for e in entries:
        out += struct.pack("<I", e["name_len"]) + e["name"]
        out += struct.pack("<II", e["dtype"], e["rank"])
        out += struct.pack("<%dq" % len(e["dims"]), *e["dims"])
        out += struct.pack("<QQ", e["offset"], e["nbytes"])
    assert len(out) == header_len
    for off, data in blobs:
        out += b"\0" * (off - len(out))
        out += data
    return bytes(out)


def write_weights_file(path, tensors, truncate=None, **kwargs):
    """Write a .weights file; see encode_weights for `tensors` and kwargs.
    truncate=N keeps only the first N bytes (a truncated file)."""
    data = encode_weights(tensors, **kwargs)
    if truncate is not None:
        data = data[:truncate]
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


def read_weights_file(path):
    """Parse a .weights file into [(name, dims, [floats])] (for tests)."""
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[:8] == WEIGHTS_MAGIC, "bad magic"
    version, count = struct.unpack_from("<II", buf, 8)
    assert version == 1
    pos, out = 16, []
    for _ in range(count):
        (nl,) = struct.unpack_from("<I", buf, pos)
        name = buf[pos + 4:pos + 4 + nl].decode()
        pos += 4 + nl
        dtype, rank = struct.unpack_from("<II", buf, pos)
        pos += 8
        dims = list(struct.unpack_from("<%dq" % rank, buf, pos))
        pos += 8 * rank
        off, nbytes = struct.unpack_from("<QQ", buf, pos)
        pos += 16
        assert dtype == 1 and nbytes == 4 * _prod(dims) and off + nbytes <= len(buf)
        out.append((name, dims, list(struct.unpack_from("<%df" % (nbytes // 4), buf, off))))
    return out


def random_weights(params, seed=1234):
    """Deterministic float32-representable values for model_parameters()
    output, drawn in order from random.Random(seed): weights uniform in
    +-sqrt(3/fan_in), biases/beta/mean in +-0.1, gamma/var in [0.5, 1.5)."""
    rng = random.Random(seed)
    tensors = []
    for name, shape, kind in params:
        n = _prod(shape)
        if kind == "weight":
            lim = math.sqrt(3.0 / _prod(shape[1:]))
            vals = [(2.0 * rng.random() - 1.0) * lim for _ in range(n)]
        elif kind in ("bias", "beta", "mean"):
            vals = [(2.0 * rng.random() - 1.0) * 0.1 for _ in range(n)]
        else:
            vals = [0.5 + rng.random() for _ in range(n)]
        tensors.append((name, shape, vals))
    return tensors


_M64 = (1 << 64) - 1


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & _M64
    return h


def random_init_values(name, shape, kind, seed):
    """The values {"init": "random", "seed": seed} gives tensor `name`
    (api/model-format.md: SplitMix64 seeded with seed ^ fnv1a64(name)).
    Arithmetic is done in double and rounded once to float32."""
    state = (seed ^ fnv1a64(name.encode("utf-8"))) & _M64
    n = _prod(shape)
    lim = math.sqrt(3.0 / _prod(shape[1:])) if kind == "weight" else None
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & _M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        z ^= z >> 31
        u = (z >> 40) * (2.0 ** -24)
        if kind == "weight":
            out.append((2.0 * u - 1.0) * lim)
        elif kind in ("bias", "beta", "mean"):
            out.append((2.0 * u - 1.0) * 0.1)
        else:
            out.append(0.5 + u)
    return out


# ---------------------------------------------------------------------------
# Sample models
# ---------------------------------------------------------------------------


def _head(net, x, classes=1000):
    x = net.add_node("avgpool", "global_avg_pool2d", x)
    x = net.add_node("flatten", "flatten", x)
    x = net.dense("fc", x, classes, bias=True)
    net.outputs.append(net.add_node("prob", "softmax", x))


def _resnet_stem(net):
    x = net.conv("conv1", "data", 64, 7, stride=2, pad=3)
    x = net.bn("bn1", x)
    x = net.act("relu", "relu", x)
    return net.pool("maxpool", "max_pool2d", x, 3, 2, pad=1)


def _downsample(net, p, x, cout, stride):
    if stride == 1 and net.shape(x)[1] == cout:
        return x
    s = net.conv(p + "downsample.0", x, cout, 1, stride=stride)
    return net.bn(p + "downsample.1", s)


def resnet18():
    net = Net("resnet18", seed=18)
    x = _resnet_stem(net)
    for stage, width in enumerate((64, 128, 256, 512), 1):
        for blk in range(2):
            p = "layer%d.%d." % (stage, blk)
            stride = 2 if stage > 1 and blk == 0 else 1
            sc = _downsample(net, p, x, width, stride)
            y = net.conv(p + "conv1", x, width, 3, stride=stride, pad=1)
            y = net.bn(p + "bn1", y)
            y = net.act(p + "relu1", "relu", y)
            y = net.conv(p + "conv2", y, width, 3, pad=1)
            y = net.bn(p + "bn2", y)
            y = net.add_node(p + "add", "add", [y, sc])
            x = net.act(p + "relu2", "relu", y)
    _head(net, x)
    return net


def resnet50():
    net = Net("resnet50", seed=50)
    x = _resnet_stem(net)
    for stage, (width, blocks) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3)), 1):
        for blk in range(blocks):
            p = "layer%d.%d." % (stage, blk)
            stride = 2 if stage > 1 and blk == 0 else 1
            sc = _downsample(net, p, x, width * 4, stride)
            y = net.conv(p + "conv1", x, width, 1)
            y = net.bn(p + "bn1", y)
            y = net.act(p + "relu1", "relu", y)
            y = net.conv(p + "conv2", y, width, 3, stride=stride, pad=1)
            y = net.bn(p + "bn2", y)
            y = net.act(p + "relu2", "relu", y)
            y = net.conv(p + "conv3", y, width * 4, 1)
            y = net.bn(p + "bn3", y)
            y = net.add_node(p + "add", "add", [y, sc])
            x = net.act(p + "relu3", "relu", y)
    _head(net, x)
    return net


def vgg19():
    net = Net("vgg19", seed=19)
    plan = [[64, 64], [128, 128], [256] * 4, [512] * 4, [512] * 4]
    x = "data"
    for stage, chans in enumerate(plan, 1):
        for i, c in enumerate(chans, 1):
            x = net.conv("conv%d_%d" % (stage, i), x, c, 3, pad=1, bias=True)
            x = net.act("conv%d_%d.relu" % (stage, i), "relu", x)
        x = net.pool("pool%d" % stage, "max_pool2d", x, 2, 2)
    x = net.add_node("flatten", "flatten", x)
    x = net.dense("fc6", x, 4096, bias=True)
    x = net.act("fc6.relu", "relu", x)
    x = net.dense("fc7", x, 4096, bias=True)
    x = net.act("fc7.relu", "relu", x)
    x = net.dense("fc8", x, 1000, bias=True)
    net.outputs.append(net.add_node("prob", "softmax", x))
    return net


def mobilenet_v1():
    net = Net("mobilenet_v1", seed=1)
    x = net.conv("conv0", "data", 32, 3, stride=2, pad=1)
    x = net.bn("conv0.bn", x)
    x = net.act("conv0.relu6", "relu6", x)
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
            (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]
    for i, (cout, stride) in enumerate(plan, 1):
        p = "block%d." % i
        c = net.shape(x)[1]
        x = net.conv(p + "dw", x, c, 3, stride=stride, pad=1, groups=c)
        x = net.bn(p + "dw.bn", x)
        x = net.act(p + "dw.relu6", "relu6", x)
        x = net.conv(p + "pw", x, cout, 1)
        x = net.bn(p + "pw.bn", x)
        x = net.act(p + "pw.relu6", "relu6", x)
    x = net.add_node("avgpool", "global_avg_pool2d", x)
    x = net.conv("fc", x, 1000, 1, bias=True)
    x = net.add_node("flatten", "flatten", x)
    net.outputs.append(net.add_node("prob", "softmax", x))
    return net


def squeezenet():
    net = Net("squeezenet1_1", seed=11)
    x = net.conv("conv1", "data", 64, 3, stride=2, bias=True)
    x = net.act("conv1.relu", "relu", x)
    x = net.pool("pool1", "max_pool2d", x, 3, 2, ceil_mode=True)

    def fire(i, x, s, e):
        p = "fire%d." % i
        sq = net.act(p + "squeeze.relu", "relu", net.conv(p + "squeeze", x, s, 1, bias=True))
        e1 = net.act(p + "expand1x1.relu", "relu", net.conv(p + "expand1x1", sq, e, 1, bias=True))
        e3 = net.act(p + "expand3x3.relu", "relu", net.conv(p + "expand3x3", sq, e, 3, pad=1, bias=True))
        return net.add_node(p + "concat", "concat", [e1, e3], {"axis": 1})

    x = fire(2, x, 16, 64)
    x = fire(3, x, 16, 64)
    x = net.pool("pool3", "max_pool2d", x, 3, 2, ceil_mode=True)
    x = fire(4, x, 32, 128)
    x = fire(5, x, 32, 128)
    x = net.pool("pool5", "max_pool2d", x, 3, 2, ceil_mode=True)
    x = fire(6, x, 48, 192)
    x = fire(7, x, 48, 192)
    x = fire(8, x, 64, 256)
    x = fire(9, x, 64, 256)
    x = net.conv("conv10", x, 1000, 1, bias=True)
    x = net.act("conv10.relu", "relu", x)
    x = net.add_node("avgpool", "global_avg_pool2d", x)
    x = net.add_node("flatten", "flatten", x)
    net.outputs.append(net.add_node("prob", "softmax", x))
    return net


def tiny_conv():
    net = Net("tiny_conv", seed=101, inputs=[("data", [1, 3, 16, 16])])
    x = net.conv("conv1", "data", 5, 3, pad=1)
    x = net.bn("bn1", x)
    x = net.act("relu1", "relu", x)
    x = net.pool("pool1", "max_pool2d", x, 2, 2)
    x = net.conv("conv2", x, 7, 3, pad=1, bias=True)
    x = net.act("relu2", "relu6", x)
    x = net.add_node("gap", "global_avg_pool2d", x)
    x = net.add_node("flatten", "flatten", x)
    x = net.dense("fc", x, 13, bias=True)
    net.outputs.append(net.add_node("prob", "softmax", x))
    return net


def tiny_residual():
    net = Net("tiny_residual", seed=102, inputs=[("data", [1, 5, 12, 10])])
    x = net.conv("conv1", "data", 7, 3, pad=1)
    x = net.bn("bn1", x)
    x = net.act("relu1", "relu", x)
    # block1: strided, asymmetric padding, dilated, projection shortcut
    y = net.conv("block1.conv1", x, 13, 3, stride=2, pad=[0, 1, 1, 0])
    y = net.bn("block1.bn1", y)
    y = net.act("block1.relu1", "relu", y)
    y = net.conv("block1.conv2", y, 13, 3, pad=2, dilation=2)
    y = net.bn("block1.bn2", y)
    sc = net.conv("block1.downsample.0", x, 13, 1, stride=2)
    sc = net.bn("block1.downsample.1", sc)
    y = net.add_node("block1.add", "add", [y, sc])
    x = net.act("block1.relu2", "relu", y)
    # block2: identity shortcut, conv with bias (bias + residual + relu epilogue)
    y = net.conv("block2.conv1", x, 13, 3, pad=1)
    y = net.bn("block2.bn1", y)
    y = net.act("block2.relu1", "relu", y)
    y = net.conv("block2.conv2", y, 13, [3, 1], pad=[1, 0], bias=True)
    y = net.add_node("block2.add", "add", [y, x])
    net.outputs.append(net.act("block2.relu2", "relu", y))
    return net


def tiny_depthwise():
    net = Net("tiny_depthwise", seed=103, inputs=[("data", [1, 6, 11, 9])])
    x = net.conv("gconv1", "data", 9, 3, pad=1, groups=3, bias=True)     # grouped, 2 in / 3 out per group
    x = net.act("gconv1.relu6", "relu6", x)
    x = net.conv("dw1", x, 9, 3, stride=2, pad=1, groups=9)               # depthwise, strided
    x = net.bn("dw1.bn", x)
    x = net.act("dw1.relu6", "relu6", x)
    x = net.conv("pw1", x, 13, 1, bias=True)                              # pointwise
    x = net.act("pw1.relu6", "relu6", x)
    x = net.conv("dw2", x, 13, 5, pad=2, groups=13, bias=True)            # depthwise 5x5
    x = net.act("dw2.relu6", "relu6", x)
    x = net.conv("mult", x, 26, 3, pad=[1, 1, 1, 1], groups=13)           # groups == C_in, 2 out per group
    x = net.bn("mult.bn", x)
    x = net.act("mult.relu6", "relu6", x)
    x = net.conv("dw3", x, 26, 3, pad=2, dilation=2, groups=26)           # depthwise, dilated
    x = net.act("dw3.relu6", "relu6", x)
    x = net.conv("gconv2", x, 14, 1, groups=2)                            # grouped 1x1
    net.outputs.append(net.act("gconv2.relu6", "relu6", x))
    return net


def tiny_concat():
    net = Net("tiny_concat", seed=104, inputs=[("data", [1, 5, 10, 9])])
    a = net.conv("a.conv", "data", 7, 1, bias=True)
    a = net.act("a.relu", "relu", a)
    b = net.conv("b.conv", "data", 6, 3, pad=1)
    b = net.bn("b.bn", b)
    b = net.act("b.relu", "relu", b)
    b = net.pool("b.pool", "avg_pool2d", b, 3, 1, pad=1, count_include_pad=True)
    x = net.add_node("cat", "concat", [a, b, "data"], {"axis": 1})        # 7 + 6 + 5 = 18
    x = net.pool("pool1", "avg_pool2d", x, 2, 2, ceil_mode=True)          # partial last windows
    x = net.pool("pool2", "max_pool2d", x, 3, 3, pad=1, ceil_mode=True)   # ceil window in padding dropped
    y = net.pool("pool3", "avg_pool2d", "cat", 3, 2, pad=1, ceil_mode=True, count_include_pad=True)
    y = net.add_node("cat2", "concat", [y, y], {"axis": -3})
    net.outputs.extend([x, y])
    return net


def tiny_allops():
    net = Net("tiny_allops", seed=105, inputs=[("data", [1, 5, 12, 10])])
    x = net.conv("conv1", "data", 7, 3, pad=1, explicit=True)            # explicit defaults
    x = net.add_node("bias1", "bias_add", x)                         # 4-d bias_add
    r1 = net.act("relu1", "relu", x)
    y = net.conv("conv2", r1, 7, 3, pad=[1, 1, 1, 1])
    y = net.add_node("add1", "add", [y, r1])                              # full-shape add
    y = net.bn("bn_add", y, epsilon=1e-3)                                 # batch_norm not after a conv
    t = net.act("tanh1", "tanh", y)
    # squeeze-excitation
    s = net.add_node("se.pool", "global_avg_pool2d", t, empty_attrs=True)
    g = net.conv("se.reduce", s, 3, 1, bias=True)
    g = net.act("se.relu", "relu", g)
    g = net.conv("se.expand", g, 7, 1, bias=True)
    g = net.act("se.sigmoid", "sigmoid", g)
    t = net.add_node("se.scale", "multiply", [t, g])                      # broadcast [N,C,1,1]
    t = net.add_node("add_bcast", "add", [t, s])                          # broadcast add
    m = net.pool("maxpool", "max_pool2d", t, 2, 2)
    a = net.pool("avgpool", "avg_pool2d", t, 3, 2, pad=1, count_include_pad=False)
    c = net.add_node("cat", "concat", [m, a])                             # default axis
    c = net.act("cat.relu6", "relu6", c)
    net.outputs.append(net.add_node("softmax_c", "softmax", c, {"axis": 1}))
    f = net.add_node("gap", "global_avg_pool2d", c)
    f = net.add_node("flatten", "flatten", f)
    f = net.dense("fc1", f, 12)
    f = net.add_node("bias2", "bias_add", f)                           # 2-d bias_add
    f = net.act("fc1.relu", "relu", f)
    f = net.dense("fc2", f, 12, bias=True)
    f = net.add_node("reshape", "reshape", f, {"shape": [1, 3, -1]})
    net.outputs.insert(0, net.add_node("prob", "softmax", f))             # axis -1 on 3-d
    return net


def tiny_batch2():
    net = Net("tiny_batch2", seed=106, inputs=[("data", [2, 3, 15, 13])])
    x = net.conv("conv1", "data", 5, 3, stride=2, pad=1, bias=True)
    x = net.act("relu1", "relu", x)
    x = net.conv("conv2", x, 7, 3, pad=1)
    x = net.bn("bn2", x)
    x = net.act("relu2", "relu", x)
    p = net.pool("pool", "max_pool2d", x, 2, 2)
    x = net.add_node("gap", "global_avg_pool2d", p)
    x = net.add_node("flatten", "flatten", x)
    x = net.dense("fc", x, 13, bias=True)
    net.outputs.extend([net.add_node("prob", "softmax", x), p])
    return net


TINY_WEIGHTS_SEED = 1234


def tiny_weights():
    net = Net("tiny_weights", seed=None, inputs=[("data", [1, 3, 8, 8])],
              weights={"file": "tiny_weights.weights"})
    x = net.conv("conv1", "data", 5, 3, pad=1, bias=True)
    x = net.bn("bn1", x)
    x = net.act("relu1", "relu", x)
    x = net.conv("conv2", x, 7, 3, stride=2, pad=1)
    x = net.add_node("bias2", "bias_add", x)
    x = net.act("relu2", "relu6", x)
    x = net.add_node("gap", "global_avg_pool2d", x)
    x = net.add_node("flatten", "flatten", x)
    x = net.dense("fc", x, 4, bias=True)
    net.outputs.append(net.add_node("prob", "softmax", x))
    return net


MODELS = [
    ("resnet18.json", resnet18),
    ("resnet50.json", resnet50),
    ("vgg19.json", vgg19),
    ("mobilenet_v1.json", mobilenet_v1),
    ("squeezenet.json", squeezenet),
    ("tiny_conv.json", tiny_conv),
    ("tiny_residual.json", tiny_residual),
    ("tiny_depthwise.json", tiny_depthwise),
    ("tiny_concat.json", tiny_concat),
    ("tiny_allops.json", tiny_allops),
    ("tiny_batch2.json", tiny_batch2),
    ("tiny_weights.json", tiny_weights),
]


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def dumps_model(model):
    """Stable JSON: one line per input and per node."""
    def one(v):
        return json.dumps(v, separators=(", ", ": "))

    lines = ["{"]
    for key in ("format", "version", "name"):
        lines.append(' "%s": %s,' % (key, one(model[key])))
    lines.append(' "inputs": [')
    lines.append(",\n".join("  " + one(i) for i in model["inputs"]))
    lines.append(" ],")
    lines.append(' "weights": %s,' % one(model["weights"]))
    lines.append(' "nodes": [')
    lines.append(",\n".join("  " + one(n) for n in model["nodes"]))
    lines.append(" ],")
    lines.append(' "outputs": %s' % one(model["outputs"]))
    lines.append("}")
    return "\n".join(lines) + "\n"


# Published parameter counts (torchvision / Keras; batch_norm running stats
# excluded) and multiply-accumulate counts used as cross-checks.
EXPECTED = {
    "resnet18": (11689512, 1.814e9),
    "resnet50": (25557032, 4.089e9),
    "vgg19": (143667240, 19.63e9),
    "mobilenet_v1": (4231976, 0.569e9),
    "squeezenet1_1": (1235496, 0.35e9),
}


def check_model(model):
    """Shape-check a generated model; asserts the well-known facts."""
    shapes = infer_shapes(model, model["name"] + ".json")
    params = model_parameters(model, shapes)
    name = model["name"]
    ntrain = sum(_prod(s) for _, s, k in params if k not in ("mean", "var"))
    macs = conv_dense_macs(model, shapes)
    if name in EXPECTED:
        exp_params, exp_macs = EXPECTED[name]
        assert ntrain == exp_params, (name, ntrain, exp_params)
        assert abs(macs - exp_macs) < 0.01 * exp_macs, (name, macs, exp_macs)
    if name in ("resnet18", "resnet50"):
        width = 512 if name == "resnet18" else 2048
        assert shapes["flatten"] == [1, width], shapes["flatten"]
        assert shapes["maxpool"] == [1, 64, 56, 56]
        assert shapes["layer4.0.conv2"][2:] == [7, 7]
        assert shapes["prob"] == [1, 1000]
    if name == "vgg19":
        assert shapes["flatten"] == [1, 25088], shapes["flatten"]
        assert shapes["pool5"] == [1, 512, 7, 7]
    if name == "mobilenet_v1":
        assert shapes["block13.pw.relu6"] == [1, 1024, 7, 7]
        assert shapes["fc"] == [1, 1000, 1, 1]
        assert shapes["prob"] == [1, 1000]
    if name == "squeezenet1_1":
        assert shapes["conv1"] == [1, 64, 111, 111]
        assert shapes["pool1"] == [1, 64, 55, 55]
        assert shapes["fire2.concat"] == [1, 128, 55, 55]
        assert shapes["fire5.concat"] == [1, 256, 27, 27]
        assert shapes["pool5"] == [1, 256, 13, 13]
        assert shapes["fire9.concat"] == [1, 512, 13, 13]
        assert shapes["conv10"] == [1, 1000, 13, 13]
    if name == "tiny_residual":
        assert shapes["block1.conv1"] == [1, 13, 6, 5]
        assert shapes["block1.conv2"] == shapes["block1.downsample.1"] == [1, 13, 6, 5]
    if name == "tiny_concat":
        assert shapes["cat"] == [1, 18, 10, 9]
        assert shapes["pool1"] == [1, 18, 5, 5]
        assert shapes["pool2"] == [1, 18, 2, 2]  # ceil gives 3, the last window is dropped
        assert shapes["pool3"] == [1, 18, 6, 5]  # last row window half in padding
        assert shapes["cat2"] == [1, 36, 6, 5]
    if name == "tiny_allops":
        ops = {n["op"] for n in model["nodes"]}
        assert ops == set(OPS), set(OPS) - ops
        assert shapes["prob"] == [1, 3, 4] and shapes["softmax_c"] == [1, 14, 6, 5]
        assert len(model["outputs"]) == 2
    if name.startswith("tiny_"):
        assert any(s[1] % 8 for s in shapes.values() if len(s) == 4)
    return shapes, params


def generate(outdir, verbose=True):
    """Write every sample into outdir; returns the list of file names."""
    os.makedirs(outdir, exist_ok=True)
    written = []
    for fname, build in MODELS:
        model = build().to_model()
        shapes, params = check_model(model)
        with open(os.path.join(outdir, fname), "w", newline="\n") as f:
            f.write(dumps_model(model))
        written.append(fname)
        if verbose:
            print("%-22s %4d nodes  %11d parameters  %s -> %s" % (
                fname, len(model["nodes"]), sum(_prod(s) for _, s, _k in params),
                model["inputs"][0]["shape"], " ".join(str(shapes[o]) for o in model["outputs"])))
        wf = model["weights"].get("file")
        if wf:
            tensors = random_weights(params, TINY_WEIGHTS_SEED)
            size = write_weights_file(os.path.join(outdir, wf), tensors)
            # round trip: exact names, shapes and count
            back = read_weights_file(os.path.join(outdir, wf))
            assert [(n, d) for n, d, _ in back] == [(n, s) for n, s, _k in params]
            written.append(wf)
            if verbose:
                print("%-22s %4d tensors %12d bytes" % (wf, len(tensors), size))
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temp dir and fail if samples/ differs")
    ap.add_argument("--out", default=HERE, help="output directory (default: samples/)")
    ap.add_argument("--weights-file", nargs=2, metavar=("MODEL", "OUT"),
                    help="write a weights file with every parameter MODEL needs")
    ap.add_argument("--seed", type=int, default=TINY_WEIGHTS_SEED,
                    help="seed for --weights-file (default %d)" % TINY_WEIGHTS_SEED)
    ap.add_argument("--like-random-init", action="store_true",
                    help="with --weights-file: the values hetc's random init with --seed gives")
    args = ap.parse_args(argv)

    if args.weights_file:
        model_path, out = args.weights_file
        with open(model_path) as f:
            model = json.load(f)
        params = model_parameters(model, infer_shapes(model, model_path))
        if args.like_random_init:
            tensors = [(n, s, random_init_values(n, s, k, args.seed)) for n, s, k in params]
        else:
            tensors = random_weights(params, args.seed)
        size = write_weights_file(out, tensors)
        print("%s: %d tensors, %d bytes" % (out, len(tensors), size))
        return 0

    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            names = generate(tmp, verbose=False)
            bad = []
            for n in names:
                committed = os.path.join(HERE, n)
                if not os.path.exists(committed) or not filecmp.cmp(committed, os.path.join(tmp, n), shallow=False):
                    bad.append(n)
        if bad:
            print("samples out of date (run python3 samples/gen_samples.py): " + " ".join(bad), file=sys.stderr)
            return 1
        print("samples up to date (%d files)" % len(names))
        return 0

    generate(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
