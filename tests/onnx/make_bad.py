#!/usr/bin/env python3
"""Generate the malformed ONNX inputs of tests/onnx/bad (one file per defect).

Usage:
    python3 tests/onnx/make_bad.py           (re)write tests/onnx/bad/*
    python3 tests/onnx/make_bad.py --check   regenerate into a temp dir, exit 1
                                             if a committed file differs
    python3 tests/onnx/make_bad.py --out DIR write into DIR instead

Each case breaks one thing in a small valid model: input "input" [1,3,8,8] ->
Conv "conv0" (8 channels, 3x3, pad 1, weight "conv0.weight", bias "conv0.bias")
-> Relu "relu0" -> "output", opset 13. The messages the importer must print
live with the importer's tests; this script only writes the inputs. Models
broken on purpose skip onnx.checker; the valid ones (two_data_inputs,
int_input, symbolic_no_shape) pass it.
"""

import argparse
import filecmp
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "bad")

SHAPE = [1, 3, 8, 8]
IR_FOR_OPSET = {5: 7, 9: 4, 13: 7, 17: 8, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 29: 13}  # opset 5 with IR 7: valid, so the opset is the only defect


def conv_params():
    rng = np.random.RandomState(7)
    w = (rng.standard_normal([8, 3, 3, 3]) * 0.27).astype(np.float32)
    b = (rng.standard_normal([8]) * 0.1).astype(np.float32)
    return [numpy_helper.from_array(w, "conv0.weight"), numpy_helper.from_array(b, "conv0.bias")]


def conv_node(x="input"):
    return helper.make_node("Conv", [x, "conv0.weight", "conv0.bias"], ["conv0_out"], name="conv0",
                            dilations=[1, 1], group=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                            strides=[1, 1])


def relu_node(x="conv0_out", out="output", domain=None):
    return helper.make_node("Relu", [x], [out], name="relu0", domain=domain)


def model(nodes=None, inputs=None, outputs=None, inits=None, opsets=None, input_type=None):
    """The base conv model with any part replaced."""
    if inputs is None:
        inputs = [helper.make_tensor_value_info("input", input_type or TensorProto.FLOAT, SHAPE)]
    if outputs is None:
        outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8, 8, 8])]
    if nodes is None:
        nodes = [conv_node(), relu_node()]
    if inits is None:
        inits = conv_params()
    graph = helper.make_graph(nodes, "bad", inputs, outputs, initializer=inits)
    opsets = opsets or [("", 13)]
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                             ir_version=IR_FOR_OPSET[opsets[0][1]],
                             producer_name="hetc-make_bad", producer_version="1")


def checked(m):
    onnx.checker.check_model(m, full_check=True)
    return m


def bytes_of(m):
    return m.SerializeToString()


def with_weight(tensor):
    """conv_params() with conv0.weight replaced by `tensor`."""
    return [tensor, conv_params()[1]]


def external_weight(location, offset=None, length=3 * 3 * 3 * 8 * 4):
    t = onnx.TensorProto()
    t.name = "conv0.weight"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([8, 3, 3, 3])
    t.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    entries.append(("length", str(length)))
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def cases():
    """(file name, bytes) of every case, in a fixed order."""
    out = []

    def add(name, data):
        out.append((name, data))

    base = bytes_of(checked(model()))
    add("not_onnx.onnx", b"hello, this is not a protobuf\n")
    add("json_named_onnx.onnx",
        b'{"irVersion": "7", "graph": {"name": "g", "node": [{"opType": "Relu"}]},'
        b' "opsetImport": [{"version": "13"}]}\n')
    add("truncated.onnx", base[: len(base) // 2])
    add("empty.onnx", b"")

    fancy = helper.make_node("FancyOp", ["relu_out"], ["output"], name="fancy")
    add("unknown_op.onnx", bytes_of(model(nodes=[relu_node("input", "relu_out"), fancy],
                                          outputs=[helper.make_tensor_value_info(
                                              "output", TensorProto.FLOAT, SHAPE)],
                                          inits=[])))
    add("unknown_domain.onnx", bytes_of(model(
        nodes=[conv_node(), relu_node(domain="com.example")],
        opsets=[("", 13), ("com.example", 1)])))
    add("opset_5.onnx", bytes_of(checked(model(opsets=[("", 5)]))))
    add("opset_29.onnx", bytes_of(model(opsets=[("", 29)])))  # not checked: may be too new

    add("dangling_input.onnx", bytes_of(model(nodes=[conv_node("missing_tensor"), relu_node()])))
    add("dangling_output.onnx", bytes_of(model(outputs=[
        helper.make_tensor_value_info("nowhere", TensorProto.FLOAT, [1, 8, 8, 8])])))

    short = onnx.TensorProto()
    short.name, short.data_type = "conv0.weight", TensorProto.FLOAT
    short.dims.extend([8, 3, 3, 3])
    short.raw_data = bytes(range(100))
    add("init_size_mismatch.onnx", bytes_of(model(inits=with_weight(short))))
    few = onnx.TensorProto()
    few.name, few.data_type = "conv0.weight", TensorProto.FLOAT
    few.dims.extend([8, 3, 3, 3])
    few.float_data.extend([0.5, -0.25, 0.125, 1.0, -1.0])
    add("init_float_data_mismatch.onnx", bytes_of(model(inits=with_weight(few))))

    add("external_escape.onnx", bytes_of(model(inits=with_weight(
        external_weight("../../../etc/passwd")))))
    add("external_absolute.onnx", bytes_of(model(inits=with_weight(
        external_weight("/etc/passwd")))))
    add("external_missing.onnx", bytes_of(model(inits=with_weight(
        external_weight("nothere.bin")))))
    add("external_out_of_range.onnx", bytes_of(model(inits=with_weight(
        external_weight("external_small.bin", offset=0, length=4000)))))
    add("external_small.bin", bytes(range(64)))

    add("symbolic_no_shape.onnx", bytes_of(checked(model(inputs=[
        helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N"] + SHAPE[1:])],
        outputs=[helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 8, 8, 8])]))))
    add("two_data_inputs.onnx", bytes_of(checked(model(
        nodes=[helper.make_node("Add", ["input", "input2"], ["sum"], name="add0"),
               conv_node("sum"), relu_node()],
        inputs=[helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE),
                helper.make_tensor_value_info("input2", TensorProto.FLOAT, SHAPE)]))))
    add("int_input.onnx", bytes_of(checked(model(
        nodes=[helper.make_node("Cast", ["input"], ["input_f"], name="cast0", to=TensorProto.FLOAT),
               conv_node("input_f"), relu_node()],
        input_type=TensorProto.INT64))))

    # A round trip through INT64 truncates: hetc computes in float32 only.
    add("cast_computed_to_int.onnx", bytes_of(checked(model(
        nodes=[conv_node(), helper.make_node("Cast", ["conv0_out"], ["truncated"], name="cast0", to=TensorProto.INT64),
               helper.make_node("Cast", ["truncated"], ["output"], name="cast1", to=TensorProto.FLOAT)]))))

    add("pow_computed_exponent_5.onnx", bytes_of(checked(model(
        nodes=[conv_node(), helper.make_node("Pow", ["conv0_out", "five"], ["output"], name="pow0")],
        inits=conv_params() + [numpy_helper.from_array(np.array(5.0, dtype=np.float32), "five")]))))

    i64 = lambda name, values: numpy_helper.from_array(np.array(values, dtype=np.int64), name)
    add("expand_not_broadcast.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Expand", ["conv0_out", "shape"], ["output"], name="expand0")],
        inits=conv_params() + [i64("shape", [1, 3, 8, 8])])))
    add("tile_repeat_zero.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Tile", ["conv0_out", "repeats"], ["output"], name="tile0")],
        inits=conv_params() + [i64("repeats", [1, 0, 1, 1])])))
    add("gather_index_out_of_range.onnx", bytes_of(checked(model(
        nodes=[conv_node(), helper.make_node("Gather", ["conv0_out", "index"], ["output"], name="gather0", axis=1)],
        inits=conv_params() + [i64("index", [2, 8])],
        outputs=[helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 2, 8, 8])]))))

    def after_conv(node, out_shape, inits=()):
        """The base conv, then `node` (reading conv0_out, writing output)."""
        return bytes_of(checked(model(
            nodes=[conv_node(), node], inits=conv_params() + list(inits),
            outputs=[helper.make_tensor_value_info("output", TensorProto.FLOAT, out_shape)])))

    add("pad_reflect_too_far.onnx", after_conv(
        helper.make_node("Pad", ["conv0_out", "pads"], ["output"], name="pad0", mode="reflect"),
        [1, 8, 8, 24], [numpy_helper.from_array(np.array([0, 0, 0, 8, 0, 0, 0, 8], np.int64), "pads")]))
    # An output past the first that something reads (here the graph): an
    # unread one is dropped (corpus: dropout_mask_unread).
    mask = helper.make_node("Dropout", ["conv0_out"], ["output", "mask"], name="drop0", ratio=0.5)
    add("dropout_mask_read.onnx", bytes_of(model(
        nodes=[conv_node(), mask], opsets=[("", 9)],
        outputs=[helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8, 8, 8]),
                 helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 8, 8, 8])])))
    # A reduction evaluated at import over an axis the constant lacks.
    reduce_bad = helper.make_node("ReduceSum", ["bias_raw", "bias_axes"], ["bias"], name="reduce0")
    add_bias = helper.make_node("Add", ["conv0_out", "bias"], ["output"], name="add0")
    add("reduce_axis_out_of_range.onnx", bytes_of(model(
        nodes=[conv_node(), reduce_bad, add_bias],
        inits=conv_params() + [numpy_helper.from_array(np.ones([8, 1, 2], np.float32), "bias_raw"),
                               numpy_helper.from_array(np.array([3], np.int64), "bias_axes")])))
    # Slice and Split of computed values: what they refuse.
    add("split_sizes_mismatch.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Split", ["conv0_out", "sizes"], ["output", "rest"], name="split0", axis=1)],
        inits=conv_params() + [numpy_helper.from_array(np.array([3, 4], np.int64), "sizes")],
        outputs=[helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, 8, 8]),
                 helper.make_tensor_value_info("rest", TensorProto.FLOAT, [1, 4, 8, 8])])))
    slice_inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
                   (("starts", [0]), ("ends", [1]), ("axes", [0]), ("steps", [0]))]
    add("slice_step_zero.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Slice", ["conv0_out", "starts", "ends", "axes", "steps"], ["output"],
                                             name="slice0")],
        inits=conv_params() + slice_inits)))
    add("resize_cubic.onnx", after_conv(
        helper.make_node("Resize", ["conv0_out", "", "scales"], ["output"], name="resize0", mode="cubic"),
        [1, 8, 16, 16], [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]))
    # Instance, group and layer normalization: what they refuse.
    def norm_params(n, values=None):
        return [numpy_helper.from_array(np.ones([n], np.float32) if values is None else values, "scale"),
                numpy_helper.from_array(np.zeros([n], np.float32), "bias")]
    add("group_norm_groups_not_dividing.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("GroupNormalization", ["conv0_out", "scale", "bias"], ["output"],
                                             name="gn0", num_groups=3)],
        inits=conv_params() + norm_params(8), opsets=[("", 21)])))
    add("layer_norm_axis_out_of_range.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("LayerNormalization", ["conv0_out", "scale", "bias"], ["output"],
                                             name="ln0", axis=4)],
        inits=conv_params() + norm_params(8), opsets=[("", 17)])))
    add("layer_norm_scale_varies.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("LayerNormalization", ["conv0_out", "scale", "bias"], ["output"],
                                             name="ln0", axis=2)],
        inits=conv_params() + [numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "scale"),
                               numpy_helper.from_array(np.zeros([8, 8], np.float32), "bias")],
        opsets=[("", 17)])))
    add("instance_norm_scale_short.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("InstanceNormalization", ["conv0_out", "scale", "bias"], ["output"],
                                             name="in0")],
        inits=conv_params() + norm_params(4))))
    # -- hardening, round 2 ------------------------------------------------
    add("deep_nesting.onnx", deep_nesting(3000))

    def conv_with(inputs=None, **attrs):
        a = dict(dilations=[1, 1], group=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
        a.update(attrs)
        return helper.make_node("Conv", inputs or ["input", "conv0.weight", "conv0.bias"], ["conv0_out"],
                                name="conv0", **a)

    add("conv_bias_short.onnx", bytes_of(model(inits=[conv_params()[0], numpy_helper.from_array(
        np.array([0.5], np.float32), "conv0.bias")])))
    add("conv_zero_channels.onnx", bytes_of(model(inits=[numpy_helper.from_array(
        np.zeros([0, 3, 3, 3], np.float32), "conv0.weight")], nodes=[
        conv_with(["input", "conv0.weight"]), relu_node()])))
    add("conv_four_inputs.onnx", bytes_of(model(nodes=[
        conv_with(["input", "conv0.weight", "conv0.bias", "conv0.bias"]), relu_node()])))
    add("relu_two_inputs.onnx", bytes_of(model(nodes=[
        conv_node(), helper.make_node("Relu", ["conv0_out", "conv0_out"], ["output"], name="relu0")])))
    clip_attrs = helper.make_node("Clip", ["conv0_out"], ["output"], name="clip0", min=-1.0, max=1.0)
    add("clip_attributes_opset13.onnx", bytes_of(model(nodes=[conv_node(), clip_attrs])))
    clip_inputs = helper.make_node("Clip", ["conv0_out", "lo", "hi"], ["output"], name="clip0")
    bounds = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("lo", -1.0), ("hi", 1.0))]
    add("clip_inputs_opset9.onnx", bytes_of(model(nodes=[conv_node(), clip_inputs],
                                                  inits=conv_params() + bounds, opsets=[("", 9)])))
    deconv = helper.make_node("ConvTranspose", ["conv0_out", "deconv.weight"], ["output"], name="deconv0",
                              strides=[2, 2], output_padding=[2, 2], kernel_shape=[3, 3])
    deconv_weight = numpy_helper.from_array(np.full([8, 4, 3, 3], 0.1, np.float32), "deconv.weight")
    add("convtranspose_output_padding.onnx", bytes_of(model(
        nodes=[conv_node(), deconv], inits=conv_params() + [deconv_weight],
        outputs=[helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 19, 19])])))
    add("initializer_declared_shape.onnx", bytes_of(model(inputs=[
        helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE),
        helper.make_tensor_value_info("conv0.weight", TensorProto.FLOAT, [8, 3, 5, 5])])))
    add("input_declared_twice.onnx", bytes_of(model(inputs=[
        helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE),
        helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 4, 4])])))
    add("input_negative_dim.onnx", bytes_of(model(inputs=[
        helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, -3, 8, 8])])))
    add("input_zero_dim.onnx", bytes_of(model(inputs=[
        helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 0, 8])])))

    def folded(shapes):
        """ConstantOfShape of each shape (zeros, untouched), then the base model."""
        nodes, inits = [], conv_params()
        for k, shape in enumerate(shapes):
            inits.append(numpy_helper.from_array(np.array(shape, np.int64), "shape%d" % k))
            nodes.append(helper.make_node("ConstantOfShape", ["shape%d" % k], ["zeros%d" % k], name="zeros%d" % k))
        nodes.append(helper.make_node("Transpose", ["zeros0"], ["flipped"], name="flip", perm=[1, 0]))
        return bytes_of(model(nodes=nodes + [conv_node(), relu_node()], inits=inits))

    add("fold_huge.onnx", folded([[40000, 40000]]))
    add("fold_total.onnx", folded([[1 << 13, 1 << 14]] * 3))

    # Products of two computed values (conv0_out is [1, 8, 8, 8]) whose
    # shapes do not multiply, and Einsum equations hetc does not import.
    add("matmul_computed_k_mismatch.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Sigmoid", ["conv0_out"], ["sig"], name="sig0"),
               helper.make_node("Reshape", ["sig", "rows"], ["rows_out"], name="rows0"),
               helper.make_node("MatMul", ["conv0_out", "rows_out"], ["output"], name="matmul0")],
        inits=conv_params() + [i64("rows", [1, 8, 16, 4])])))
    add("matmul_computed_batch_mismatch.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Sigmoid", ["conv0_out"], ["sig"], name="sig0"),
               helper.make_node("Reshape", ["sig", "batch"], ["batch_out"], name="batch0"),
               helper.make_node("MatMul", ["conv0_out", "batch_out"], ["output"], name="matmul0")],
        inits=conv_params() + [i64("batch", [1, 4, 8, 16])])))
    add("matmul_computed_vectors.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Reshape", ["conv0_out", "flat"], ["flat_out"], name="flat0"),
               helper.make_node("Sigmoid", ["flat_out"], ["sig"], name="sig0"),
               helper.make_node("MatMul", ["flat_out", "sig"], ["output"], name="matmul0")],
        inits=conv_params() + [i64("flat", [512])])))
    for name, equation in [("einsum_ellipsis", "...ij,...jk->...ik"), ("einsum_diagonal", "nchh,nchw->nchw"),
                           ("einsum_one_sided_sum", "nchw,nchv->nch"), ("einsum_letter_missing", "nchw,nchv->nchz")]:
        add(name + ".onnx", bytes_of(model(nodes=[
            conv_node(), helper.make_node("Sigmoid", ["conv0_out"], ["sig"], name="sig0"),
            helper.make_node("Einsum", ["conv0_out", "sig"], ["output"], name="einsum0", equation=equation)])))
    add("einsum_extents_differ.onnx", bytes_of(model(
        nodes=[conv_node(), helper.make_node("Sigmoid", ["conv0_out"], ["sig"], name="sig0"),
               helper.make_node("Reshape", ["sig", "halves"], ["halves_out"], name="halves0"),
               helper.make_node("Einsum", ["conv0_out", "halves_out"], ["output"], name="einsum0",
                                equation="nchw,nchv->nchwv")],
        inits=conv_params() + [i64("halves", [1, 8, 4, 16])])))
    add("einsum_three_operands.onnx", bytes_of(model(nodes=[
        conv_node(), helper.make_node("Einsum", ["conv0_out", "conv0_out", "conv0_out"], ["output"], name="einsum0",
                                      equation="nchw,nchw,nchw->nchw")])))
    add("einsum_constant_operand.onnx", bytes_of(model(nodes=[
        conv_node(), helper.make_node("Einsum", ["conv0_out", "conv0.weight"], ["output"], name="einsum0",
                                      equation="nchw,oihw->nohw")])))
    scatter = helper.make_node("ScatterND", ["mask", "where", "values"], ["mask_out"], name="scatter0")
    add_mask = helper.make_node("Add", ["conv0_out", "mask_out"], ["output"], name="add0")
    for name, where, values in [("scatternd_index_out_of_range", [[1], [8]], np.ones([2, 8], np.float32)),
                                ("scatternd_updates_shape", [[1], [2]], np.ones([2, 7], np.float32))]:
        add(name + ".onnx", bytes_of(model(nodes=[conv_node(), scatter, add_mask], inits=conv_params() + [
            numpy_helper.from_array(np.zeros([8, 8], np.float32), "mask"), i64("where", where),
            numpy_helper.from_array(values, "values")])))
    add("gathernd_index_out_of_range.onnx", bytes_of(model(nodes=[
        conv_node(), helper.make_node("GatherND", ["table", "where"], ["bias"], name="gathernd0"),
        helper.make_node("Add", ["conv0_out", "bias"], ["output"], name="add0")], inits=conv_params() + [
            numpy_helper.from_array(np.zeros([8, 8], np.float32), "table"), i64("where", [[0, 1], [8, 0]])])))
    # Mod folded on constants: a scale for the conv's output.
    for name, divisor, fmod in [("mod_fmod_two", [2.0], 2), ("mod_integer_by_zero", None, 0)]:
        inits = [numpy_helper.from_array(np.array([7.5], np.float32), "a"),
                 numpy_helper.from_array(np.array([2.0], np.float32), "b")] if divisor else [i64("a", [7]), i64("b", [0])]
        cast = [helper.make_node("Cast", ["m"], ["m_float"], name="cast0", to=TensorProto.FLOAT)] if not divisor else []
        add(name + ".onnx", bytes_of(model(nodes=[
            conv_node(), helper.make_node("Mod", ["a", "b"], ["m"], name="mod0", fmod=fmod)] + cast + [
            helper.make_node("Mul", ["conv0_out", "m_float" if cast else "m"], ["output"], name="scale0")],
            inits=conv_params() + inits)))
    # Attention on the conv's output: [1, 8, 8, 8] as 4-d heads, or
    # reshaped to [1, 8, 64] as 3-d.
    flat = helper.make_node("Reshape", ["conv0_out", "flat"], ["flat_out"], name="flat0")
    for name, attrs in [("attention_3d_without_heads", {}),
                        ("attention_heads_not_multiple", dict(q_num_heads=3, kv_num_heads=3))]:
        add(name + ".onnx", bytes_of(model(nodes=[
            conv_node(), flat, helper.make_node("Attention", ["flat_out", "flat_out", "flat_out"], ["output"],
                                                name="attention0", **attrs)],
            inits=conv_params() + [i64("flat", [1, 8, 64])], opsets=[("", 23)])))
    add("attention_window_negative.onnx", bytes_of(model(nodes=[
        conv_node(), helper.make_node("Attention", ["conv0_out", "conv0_out", "conv0_out"], ["output"],
                                      name="attention0", left_window_size=-2)], opsets=[("", 25)])))
    add("attention_nonpad_with_past.onnx", bytes_of(model(nodes=[
        conv_node(), helper.make_node("Attention", ["conv0_out", "conv0_out", "conv0_out", "", "conv0_out",
                                                    "conv0_out", "valid"], ["output"], name="attention0")],
        inits=conv_params() + [i64("valid", [8])], opsets=[("", 24)])))
    add("attention_computed_mask_short.onnx", bytes_of(model(nodes=[
        conv_node(), helper.make_node("Slice", ["conv0_out", "starts", "ends", "axes"], ["half"], name="slice0"),
        helper.make_node("Attention", ["conv0_out", "conv0_out", "conv0_out", "half"], ["output"], name="attention0")],
        inits=conv_params() + [i64("starts", [0]), i64("ends", [4]), i64("axes", [3])], opsets=[("", 23)])))
    add("pad_three_dims.onnx", after_conv(
        helper.make_node("Pad", ["conv0_out", "pads"], ["output"], name="pad0", mode="constant"),
        [2, 9, 9, 8], [i64("pads", [1, 1, 1, 0, 0, 0, 0, 0])]))

    # Op types, node names and attribute strings that would print as more
    # than one line or drive the terminal (C0 controls, and U+009B, a C1
    # control some terminals read as an escape sequence's start).
    fake = helper.make_node("Fancy\nhetc: compiled OK\x1b[2J\u009b0m", ["conv0_out"], ["output"], name="evil\r\nnode")
    add("escaped_op_type.onnx", bytes_of(model(nodes=[conv_node(), fake])))
    pad = helper.make_node("Pad", ["conv0_out", "pads"], ["output"], name="pad0", mode="constant\x1b[31m")
    add("escaped_attribute.onnx", bytes_of(model(
        nodes=[conv_node(), pad], inits=conv_params() + [numpy_helper.from_array(
            np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")],
        outputs=[helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8, 10, 10])])))
    return out


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def deep_nesting(levels):
    """The base model with a node whose attribute holds a graph whose node
    holds an attribute ... `levels` deep, written on the wire directly (onnx's
    own serializer refuses to nest that far)."""
    inner = b""
    for _ in range(levels):
        node = field(4, b"If") + field(5, field(1, b"g") + varint(20 << 3) + varint(5) + field(6, inner))
        inner = field(1, node)  # GraphProto.node
    m = model()
    attribute = field(1, b"g") + varint(20 << 3) + varint(5) + field(6, inner)
    data = bytearray(bytes_of(m))
    # A ModelProto field 7 (graph) may repeat: protobuf merges the second
    # into the first, appending one more node that carries the nesting.
    extra_node = field(1, b"deep") + field(4, b"Identity") + field(5, attribute)
    return bytes(data) + field(7, field(1, extra_node))


def generate(outdir):
    os.makedirs(outdir, exist_ok=True)
    names = []
    for name, data in cases():
        assert name not in names, name
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
        names.append(name)
    return names


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if a committed file is out of date")
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory (default: tests/onnx/bad)")
    args = ap.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            names = generate(tmp)
            stale = [n for n in names
                     if not os.path.exists(os.path.join(args.out, n))
                     or not filecmp.cmp(os.path.join(args.out, n), os.path.join(tmp, n),
                                        shallow=False)]
            present = set(os.listdir(args.out)) if os.path.isdir(args.out) else set()
            extra = sorted(present - set(names))
        if stale or extra:
            print("tests/onnx/bad out of date (run python3 tests/onnx/make_bad.py): "
                  + " ".join(stale + extra), file=sys.stderr)
            return 1
        print("tests/onnx/bad up to date (%d files)" % len(names))
        return 0
    if os.path.isdir(args.out):
        for n in os.listdir(args.out):
            if n.endswith((".onnx", ".bin")):
                os.remove(os.path.join(args.out, n))
    names = generate(args.out)
    print("wrote %d files to %s" % (len(names), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
