#!/usr/bin/env python3
"""Converts a hetc model.json into an ONNX model (opset 13) with the same
weights, so that onnxruntime and OpenVINO run exactly the graph hetc runs.

Weights come from the model's own source: a weights file is read as
api/model-format.md lays it out, and `{"init": "random", "seed": N}` is
reproduced bit for bit (SplitMix64 per tensor, seeded with seed XOR
fnv1a64(name)), so the peers' outputs can be compared with hetc's.

    model_to_onnx.py MODEL.json OUT.onnx
"""
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
U64 = np.uint64


def fnv1a64(text):
    h = 0xcbf29ce484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def splitmix64_uniform(state, count):
    """The first `count` values u in [0, 1) of hetc's SplitMix64 stream."""
    with np.errstate(over="ignore"):
        steps = np.arange(1, count + 1, dtype=U64) * U64(0x9E3779B97F4A7C15)
        z = U64(state) + steps
        z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
        z = z ^ (z >> U64(31))
    return (z >> U64(40)).astype(np.float64) * (1.0 / 16777216.0)


def random_param(seed, name, shape, kind):
    """kind: 'weight', 'positive' (gamma, var) or 'small' (bias, beta, mean)."""
    count = int(np.prod(shape))
    u = splitmix64_uniform(seed ^ fnv1a64(name), count)
    if kind == "positive":
        values = 0.5 + u
    else:
        fan_in = count / shape[0]
        scale = np.sqrt(3.0 / fan_in) if kind == "weight" else 0.1
        values = (2.0 * u - 1.0) * scale
    return values.astype(np.float32).reshape(shape)


def read_weights_file(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"HETCWTS1":
        sys.exit(f"{path}: not a hetc weights file")
    _, count = struct.unpack_from("<II", data, 8)
    at, tensors = 16, {}
    for _ in range(count):
        (name_len,) = struct.unpack_from("<I", data, at)
        name = data[at + 4:at + 4 + name_len].decode()
        at += 4 + name_len
        _, rank = struct.unpack_from("<II", data, at)
        dims = struct.unpack_from("<" + "q" * rank, data, at + 8)
        offset, nbytes = struct.unpack_from("<QQ", data, at + 8 + 8 * rank)
        at += 8 + 8 * rank + 16
        tensors[name] = np.frombuffer(data, np.float32, nbytes // 4, offset).reshape(dims)
    return tensors


class Converter:
    def __init__(self, model, model_path):
        self.model = model
        self.shapes = {i["name"]: list(i["shape"]) for i in model["inputs"]}
        self.nodes, self.initializers = [], []
        source = model["weights"]
        if "file" in source:
            path = os.path.join(os.path.dirname(model_path), source["file"])
            self.file_weights = read_weights_file(path)
        else:
            self.file_weights, self.seed = None, int(source["seed"])

    def param(self, node, suffix, shape, kind):
        name = f"{node['name']}.{suffix}"
        if self.file_weights is not None:
            value = np.asarray(self.file_weights[name], np.float32).reshape(shape)
        else:
            value = random_param(self.seed, name, shape, kind)
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def const(self, name, value):
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def emit(self, op, inputs, output, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))

    def convert_node(self, node):
        op, name, attrs = node["op"], node["name"], node.get("attrs", {})
        x = node["inputs"]
        shape = self.shapes[x[0]]
        out_shape = list(shape)
        if op == "conv2d":
            kh, kw = attrs["kernel"]
            sh, sw = attrs.get("strides", [1, 1])
            dh, dw = attrs.get("dilation", [1, 1])
            pad = attrs.get("padding", [0, 0, 0, 0])
            top, left, bottom, right = pad * 2 if len(pad) == 2 else pad
            groups, k = attrs.get("groups", 1), attrs["channels"]
            inputs = [x[0], self.param(node, "weight", [k, shape[1] // groups, kh, kw], "weight")]
            if attrs.get("bias", False):
                inputs.append(self.param(node, "bias", [k], "small"))
            self.emit("Conv", inputs, name, kernel_shape=[kh, kw], strides=[sh, sw],
                      dilations=[dh, dw], pads=[top, left, bottom, right], group=groups)
            oh = (shape[2] + top + bottom - dh * (kh - 1) - 1) // sh + 1
            ow = (shape[3] + left + right - dw * (kw - 1) - 1) // sw + 1
            out_shape = [shape[0], k, oh, ow]
        elif op == "dense":
            units = attrs["units"]
            inputs = [x[0], self.param(node, "weight", [units, shape[1]], "weight")]
            if attrs.get("bias", False):
                inputs.append(self.param(node, "bias", [units], "small"))
            self.emit("Gemm", inputs, name, transB=1)
            out_shape = [shape[0], units]
        elif op == "batch_norm":
            c = shape[1]
            inputs = [x[0], self.param(node, "gamma", [c], "positive"),
                      self.param(node, "beta", [c], "small"),
                      self.param(node, "mean", [c], "small"),
                      self.param(node, "var", [c], "positive")]
            self.emit("BatchNormalization", inputs, name, epsilon=attrs.get("epsilon", 1e-5))
        elif op == "bias_add":
            bias = self.param(node, "bias", [shape[1]], "small")
            if len(shape) == 4:
                self.reshape_const(bias, [shape[1], 1, 1])  # broadcast over H and W
            self.emit("Add", [x[0], bias], name)
        elif op in ("relu", "sigmoid", "tanh"):
            self.emit({"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh"}[op], x, name)
        elif op == "relu6":
            self.emit("Clip", [x[0], self.const(f"{name}.min", np.float32(0)),
                               self.const(f"{name}.max", np.float32(6))], name)
        elif op in ("add", "multiply"):
            self.emit("Add" if op == "add" else "Mul", x, name)
        elif op in ("max_pool2d", "avg_pool2d"):
            kh, kw = attrs["kernel"]
            sh, sw = attrs.get("strides", [1, 1])
            pad = attrs.get("padding", [0, 0, 0, 0])
            top, left, bottom, right = pad * 2 if len(pad) == 2 else pad
            ceil = attrs.get("ceil_mode", False)
            extra = {}
            if op == "avg_pool2d":
                extra["count_include_pad"] = int(attrs.get("count_include_pad", False))
            self.emit("MaxPool" if op == "max_pool2d" else "AveragePool", x, name,
                      kernel_shape=[kh, kw], strides=[sh, sw], pads=[top, left, bottom, right],
                      ceil_mode=int(ceil), **extra)
            out_shape = [shape[0], shape[1],
                         pool_extent(shape[2], kh, sh, top, bottom, ceil),
                         pool_extent(shape[3], kw, sw, left, right, ceil)]
        elif op == "global_avg_pool2d":
            self.emit("GlobalAveragePool", x, name)
            out_shape = [shape[0], shape[1], 1, 1]
        elif op == "concat":
            axis = attrs.get("axis", 1)
            axis = axis + len(shape) if axis < 0 else axis
            self.emit("Concat", x, name, axis=axis)
            out_shape[axis] = sum(self.shapes[i][axis] for i in x)
        elif op == "flatten":
            self.emit("Flatten", x, name, axis=1)
            out_shape = [shape[0], int(np.prod(shape[1:]))]
        elif op == "reshape":
            target = list(attrs["shape"])
            if -1 in target:
                known = int(np.prod([d for d in target if d != -1]))
                target[target.index(-1)] = int(np.prod(shape)) // known
            self.emit("Reshape", [x[0], self.const(f"{name}.shape", np.array(target, np.int64))],
                      name)
            out_shape = target
        elif op == "softmax":
            self.emit("Softmax", x, name, axis=attrs.get("axis", -1))
        else:
            sys.exit(f"model_to_onnx: op '{op}' (node '{name}') has no ONNX mapping here")
        self.shapes[name] = out_shape

    def reshape_const(self, tensor_name, shape):
        """Replaces an initializer by itself reshaped (bias to [C, 1, 1])."""
        for i, init in enumerate(self.initializers):
            if init.name == tensor_name:
                value = numpy_helper.to_array(init).reshape(shape)
                self.initializers[i] = numpy_helper.from_array(value, tensor_name)
        return tensor_name

    def convert(self):
        done = set(self.shapes)
        pending = list(self.model["nodes"])
        while pending:  # nodes may be listed in any order
            ready = [n for n in pending if all(i in done for i in n["inputs"])]
            if not ready:
                sys.exit("model_to_onnx: the graph has a cycle or a dangling input")
            for node in ready:
                self.convert_node(node)
                done.add(node["name"])
            pending = [n for n in pending if n["name"] not in done]
        inputs = [helper.make_tensor_value_info(i["name"], TensorProto.FLOAT, i["shape"])
                  for i in self.model["inputs"]]
        outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, self.shapes[o])
                   for o in self.model["outputs"]]
        graph = helper.make_graph(self.nodes, self.model["name"], inputs, outputs,
                                  self.initializers)
        onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                       producer_name="hetc tests/bench/peers")
        onnx_model.ir_version = 8
        onnx.checker.check_model(onnx_model)
        return onnx_model


def pool_extent(size, kernel, stride, before, after, ceil):
    span = size + before + after - kernel
    extent = (span + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (extent - 1) * stride >= size + before:
        extent -= 1  # a window starting in the end padding only is dropped
    return extent


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        model = json.load(f)
    onnx.save(Converter(model, sys.argv[1]).convert(), sys.argv[2])


if __name__ == "__main__":
    main()
