#!/usr/bin/env python3
"""Generate the malformed-model corpus of tests/model (one file per rule).

Usage:
    python3 tests/model/make_cases.py           write tests/model/bad/* and
                                                tests/model/random_init_golden.txt
    python3 tests/model/make_cases.py --check   regenerate into a temp dir, exit 1
                                                if a committed file differs
    python3 tests/model/make_cases.py --out DIR write into DIR instead

Each case is a model (`bad/NAME.json`), sometimes with a weights file
(`bad/NAME.weights`) forged with samples/gen_samples.py's encode_weights. The
exact message hetc must print for each case lives in tests/model/bad_cases.txt
(the single source of truth, read by test_bad_models.c and run_cli_bad_cases.sh);
this script only writes the inputs. Python 3 standard library only.
"""

import argparse
import copy
import filecmp
import json
import math
import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "samples"))
import gen_samples as gs  # noqa: E402

# ---------------------------------------------------------------------------
# Base models: small and valid; every case breaks exactly one rule.
# ---------------------------------------------------------------------------


def base():
    """data [1,3,8,8] -> conv (4 channels, 3x3, pad 1) -> relu; random init."""
    return {
        "format": "hetc-model",
        "version": 1,
        "name": "bad",
        "inputs": [{"name": "data", "shape": [1, 3, 8, 8], "dtype": "float32", "layout": "NCHW"}],
        "weights": {"init": "random", "seed": 1},
        "nodes": [
            {"name": "conv", "op": "conv2d", "inputs": ["data"],
             "attrs": {"channels": 4, "kernel": [3, 3], "padding": [1, 1]}},
            {"name": "relu", "op": "relu", "inputs": ["conv"]},
        ],
        "outputs": ["relu"],
    }


def base2d(shape=(1, 10)):
    """A rank-2 input (no layout) -> relu."""
    m = base()
    m["inputs"] = [{"name": "data", "shape": list(shape), "dtype": "float32"}]
    m["nodes"] = [{"name": "relu", "op": "relu", "inputs": ["data"]}]
    return m


def weights_model(weights_file):
    """data [1,3,8,8] -> conv1 (bias) -> bn1 -> relu1; weights from a file."""
    m = base()
    m["weights"] = {"file": weights_file}
    m["nodes"] = [
        {"name": "conv1", "op": "conv2d", "inputs": ["data"],
         "attrs": {"channels": 4, "kernel": [3, 3], "padding": [1, 1], "bias": True}},
        {"name": "bn1", "op": "batch_norm", "inputs": ["conv1"]},
        {"name": "relu1", "op": "relu", "inputs": ["bn1"]},
    ]
    m["outputs"] = ["relu1"]
    return m


def good_tensors():
    """The tensors weights_model needs, with simple exact values."""
    def vals(n, start):
        return [start + 0.125 * i for i in range(n)]
    return [
        ("conv1.weight", [4, 3, 3, 3], vals(108, -6.0)),
        ("conv1.bias", [4], vals(4, 0.0)),
        ("bn1.gamma", [4], vals(4, 1.0)),
        ("bn1.beta", [4], vals(4, 0.0)),
        ("bn1.mean", [4], vals(4, 0.0)),
        ("bn1.var", [4], vals(4, 1.0)),
    ]


def replace_tensor(tensors, name, new):
    return [new if t[0] == name else t for t in tensors]


def node(m, name):
    for n in m["nodes"]:
        if n["name"] == name:
            return n
    raise KeyError(name)


def text_of(m):
    """Like gen_samples.dumps_model (one line per input and node), but for any
    set of top-level keys, so that a case can drop or add one."""
    def one(v):
        return json.dumps(v, separators=(", ", ": "))
    items = []
    for key, value in m.items():
        if key in ("inputs", "nodes") and isinstance(value, list) and value:
            items.append(' "%s": [\n%s\n ]' % (key, ",\n".join("  " + one(v) for v in value)))
        else:
            items.append(' "%s": %s' % (key, one(value)))
    return "{\n" + ",\n".join(items) + "\n}\n"


# ---------------------------------------------------------------------------
# Cases: name -> model (dict, or raw str/bytes) [, weights bytes]
# ---------------------------------------------------------------------------

CASES = []


def case(name, model, weights=None):
    CASES.append((name, model, weights))


def mutate(fn, start=base):
    m = start()
    fn(m)
    return m


def build_cases():
    del CASES[:]
    good = text_of(base())

    # -- JSON syntax ---------------------------------------------------------
    case("syntax_missing_comma", good.replace('"version": 1,', '"version": 1', 1))
    case("syntax_truncated", good[: len(good) // 2])
    case("syntax_empty", "")
    case("syntax_trailing_text", good + "{}\n")
    case("syntax_nul_byte", good.replace('"name": "bad"', '"name": "b\0ad"', 1).encode())
    case("syntax_escaped_nul", good.replace('"name": "conv"', '"name": "conv\\u0000x"', 1))
    # cJSON refuses a 1001st level of arrays and objects like a syntax
    # error; the message says it is the nesting. The brackets inside the
    # string before it do not count.
    case("syntax_too_deep", good.replace('"name": "bad"', '"name": "[[{", "x": ' + "[" * 1000 + "]" * 1000, 1))
    # Strings that are not UTF-8 would be copied into manifest.json; each
    # message names the string (or the object whose member name is bad).
    case("utf8_name_invalid_byte", good.replace('"name": "bad"', '"name": "b\xffad"', 1).encode("latin-1"))
    case("utf8_name_overlong", good.encode().replace(b'"name": "bad"', b'"name": "ba\xc0\xafd"', 1))
    case("utf8_name_surrogate", good.encode().replace(b'"name": "bad"', b'"name": "bad\xed\xa0\x80"', 1))
    case("utf8_name_truncated", good.encode().replace(b'"name": "bad"', b'"name": "bad\xe2\x82"', 1))
    case("utf8_node_op", good.encode().replace(b'"op": "relu"', b'"op": "rel\xf8u"', 1))
    case("utf8_member_name", good.encode().replace(b'"channels": 4', b'"chan\x80nels": 4', 1))

    # -- top level -------------------------------------------------------------
    case("top_not_object", "[" + good + "]\n")
    for key in ("format", "version", "name", "inputs", "weights", "nodes", "outputs"):
        case("top_missing_" + key, mutate(lambda m, k=key: m.pop(k)))
    case("top_unknown_key", mutate(lambda m: m.update(comment="hello")))
    case("top_duplicate_key", good.replace('"name": "bad",', '"name": "bad",\n "name": "worse",', 1))
    case("format_wrong", mutate(lambda m: m.update(format="onnx")))
    case("version_2", mutate(lambda m: m.update(version=2)))
    case("name_empty", mutate(lambda m: m.update(name="")))
    case("name_too_long", mutate(lambda m: m.update(name="n" * 256)))

    # -- graph inputs ----------------------------------------------------------
    case("inputs_not_array", mutate(lambda m: m.update(inputs=m["inputs"][0])))
    case("inputs_empty", mutate(lambda m: m.update(inputs=[])))

    def many_inputs(m):
        m["inputs"] += [{"name": "x%d" % i, "shape": [1], "dtype": "float32"} for i in range(16)]
    case("inputs_too_many", mutate(many_inputs))
    case("input_not_object", mutate(lambda m: m.update(inputs=["data"])))
    case("input_unknown_key", mutate(lambda m: m["inputs"][0].update(type="image")))
    case("input_missing_shape", mutate(lambda m: m["inputs"][0].pop("shape")))
    case("input_bad_name", mutate(lambda m: m["inputs"][0].update(name="my data")))
    case("input_shape_zero", mutate(lambda m: m["inputs"][0].update(shape=[1, 0, 8, 8])))
    case("input_shape_negative", mutate(lambda m: m["inputs"][0].update(shape=[1, -3, 8, 8])))
    case("input_shape_float", mutate(lambda m: m["inputs"][0].update(shape=[1, 3.5, 8, 8])))
    case("input_shape_rank7", mutate(lambda m: m["inputs"][0].update(shape=[1, 1, 1, 3, 8, 8, 1])))
    case("input_shape_empty", mutate(lambda m: m["inputs"][0].update(shape=[])))
    case("input_dtype", mutate(lambda m: m["inputs"][0].update(dtype="float16")))
    case("input_layout_nhwc", mutate(lambda m: m["inputs"][0].update(layout="NHWC")))
    case("input_layout_not_4d", mutate(lambda m: m["inputs"][0].update(layout="NCHW"), lambda: base2d()))
    case("overflow_input", mutate(lambda m: m["inputs"][0].update(shape=[65536, 65536]), base2d))

    # -- names -------------------------------------------------------------------
    case("name_dup_input_node", mutate(lambda m: node(m, "relu").update(name="data")
                                       or m.update(outputs=["data"])))

    def dup_nodes(m):
        m["nodes"].insert(1, {"name": "conv", "op": "relu", "inputs": ["data"]})
    case("name_dup_node_node", mutate(dup_nodes))
    case("node_bad_name", mutate(lambda m: node(m, "relu").update(name="relu#1") or m.update(outputs=["relu#1"])))

    # -- nodes -------------------------------------------------------------------
    case("nodes_not_array", mutate(lambda m: m.update(nodes={"conv": m["nodes"][0]})))
    case("nodes_empty", mutate(lambda m: m.update(nodes=[], outputs=["data"])))
    case("node_not_object", mutate(lambda m: m["nodes"].append("relu2")))
    case("node_unknown_key", mutate(lambda m: node(m, "relu").update(input=["conv"])))
    case("node_missing_op", mutate(lambda m: node(m, "relu").pop("op")))
    case("op_unknown", mutate(lambda m: node(m, "conv").update(op="convolution")))
    case("op_not_string", mutate(lambda m: node(m, "relu").update(op=7)))
    case("op_input_count_relu", mutate(lambda m: node(m, "relu").update(inputs=["conv", "data"])))
    case("op_input_count_add", mutate(lambda m: node(m, "relu").update(op="add")))
    case("op_input_not_string", mutate(lambda m: node(m, "relu").update(inputs=[0])))
    case("attrs_not_object", mutate(lambda m: node(m, "conv").update(attrs=[4, 3])))

    # -- attributes --------------------------------------------------------------
    def conv_attrs(**kv):
        def f(m):
            a = node(m, "conv")["attrs"]
            for k, v in kv.items():
                if v is None:
                    a.pop(k)
                else:
                    a[k] = v
        return mutate(f)
    case("attr_unknown", conv_attrs(stride=[2, 2]))
    case("attr_missing_channels", conv_attrs(channels=None))
    case("attr_missing_kernel", conv_attrs(kernel=None))
    case("attr_channels_zero", conv_attrs(channels=0))
    case("attr_channels_too_many", conv_attrs(channels=(1 << 20) + 1))
    case("attr_kernel_one_entry", conv_attrs(kernel=[3]))
    case("attr_strides_zero", conv_attrs(strides=[0, 1]))
    case("attr_padding_three", conv_attrs(padding=[1, 1, 1]))
    case("attr_padding_negative", conv_attrs(padding=[-1, 1]))
    case("attr_dilation_zero", conv_attrs(dilation=[0, 1]))
    case("attr_groups_zero", conv_attrs(groups=0))
    case("attr_groups_input", conv_attrs(groups=2))
    case("attr_groups_output", conv_attrs(groups=3))
    case("attr_bias_not_bool", conv_attrs(bias=1))
    case("attr_kernel_too_large", conv_attrs(kernel=[11, 11]))
    case("attr_dilation_too_large", conv_attrs(dilation=[5, 1]))

    def dense(attrs, start=base2d):
        def f(m):
            m["nodes"].insert(0, {"name": "fc", "op": "dense", "inputs": ["data"], "attrs": attrs})
            node(m, "relu")["inputs"] = ["fc"]
        return mutate(f, start)
    case("attr_missing_units", dense({"bias": True}))
    case("attr_units_float", dense({"units": 2.5}))

    def pool(attrs, op="max_pool2d"):
        return mutate(lambda m: node(m, "relu").update(op=op, attrs=attrs))
    case("pool_missing_kernel", pool({"strides": [2, 2]}))
    case("pool_padding_ge_kernel", pool({"kernel": [2, 2], "padding": [2, 2]}))
    case("pool_ceil_mode_not_bool", pool({"kernel": [2, 2], "ceil_mode": "yes"}))
    case("pool_count_include_pad_on_max", pool({"kernel": [2, 2], "count_include_pad": True}))
    case("pool_kernel_too_large", pool({"kernel": [9, 2]}, "avg_pool2d"))
    case("batch_norm_epsilon_zero",
         mutate(lambda m: node(m, "relu").update(op="batch_norm", attrs={"epsilon": 0})))
    case("relu_with_attrs", mutate(lambda m: node(m, "relu").update(attrs={"max": 6})))

    def reshape(shape, start=base):
        def f(m):
            m["nodes"].append({"name": "reshape", "op": "reshape", "inputs": ["relu"]})
            if shape is not None:
                m["nodes"][-1]["attrs"] = {"shape": shape}
            m["outputs"] = ["reshape"]
        return mutate(f, start)
    case("reshape_missing_shape", reshape(None))
    case("reshape_count", reshape([1, 100]))
    case("reshape_two_wildcards", reshape([-1, 4, -1]))
    case("reshape_zero", reshape([0, 256]))
    case("reshape_not_multiple", reshape([3, -1]))
    case("overflow_reshape", reshape([2147483648, 2147483648, 2147483648, -1]))

    def softmax(axis, start=base):
        def f(m):
            m["nodes"].append({"name": "prob", "op": "softmax", "inputs": ["relu"], "attrs": {"axis": axis}})
            m["outputs"] = ["prob"]
        return mutate(f, start)
    case("softmax_axis_out_of_range", softmax(4))
    case("softmax_axis_too_negative", softmax(-7))

    def transpose(perm, start=base):
        def f(m):
            m["nodes"].append({"name": "moved", "op": "transpose", "inputs": ["relu"]})
            if perm is not None:
                m["nodes"][-1]["attrs"] = {"perm": perm}
            m["outputs"] = ["moved"]
        return mutate(f, start)
    case("transpose_missing_perm", transpose(None))
    case("transpose_perm_repeats", transpose([0, 1, 1, 3]))
    case("transpose_perm_short", transpose([0, 2, 1]))
    case("transpose_perm_out_of_range", transpose([0, 1, 2, 7]))

    def resize(attrs, start=base):
        def f(m):
            m["nodes"].append({"name": "big", "op": "resize", "inputs": ["relu"]})
            if attrs is not None:
                m["nodes"][-1]["attrs"] = attrs
            m["outputs"] = ["big"]
        return mutate(f, start)
    case("resize_missing_size", resize({"mode": "linear"}))
    case("resize_size_zero", resize({"size": [0, 8]}))
    case("resize_size_too_big", resize({"size": [8, 16385]}))
    case("resize_mode_cubic", resize({"size": [8, 8], "mode": "cubic"}))
    case("resize_coordinates_unknown", resize({"size": [8, 8], "coordinates": "tf_crop_and_resize"}))
    case("resize_rounding_not_string", resize({"size": [8, 8], "rounding": 1}))
    case("resize_scales_negative", resize({"size": [8, 8], "scales": [2, -1]}))
    case("resize_unknown_attr", resize({"size": [8, 8], "antialias": True}))
    case("resize_input_2d", resize({"size": [8, 8]}, base2d))

    def normalize(attrs, start=base):
        def f(m):
            m["nodes"].append({"name": "norm", "op": "normalize", "inputs": ["relu"], "attrs": attrs})
            m["outputs"] = ["norm"]
        return mutate(f, start)
    case("normalize_groups_not_dividing", normalize({"groups": 3}))
    case("normalize_axis_out_of_range", normalize({"axis": 4}))
    case("normalize_axes_past_rank", normalize({"axis": 2, "num_axes": 3}))
    case("normalize_epsilon_zero", normalize({"epsilon": 0}))
    case("normalize_affine_not_bool", normalize({"affine": 1}))

    def matmul(shape, inputs=("relu", "other")):
        """relu ([1, 4, 8, 8]) reshaped to `shape` as "other", then a matmul."""
        def f(m):
            if shape:
                m["nodes"].append({"name": "other", "op": "reshape", "inputs": ["relu"], "attrs": {"shape": shape}})
            m["nodes"].append({"name": "mm", "op": "matmul", "inputs": list(inputs)})
            m["outputs"] = ["mm"]
        return mutate(f)
    case("matmul_ranks_differ", matmul([1, 256]))
    case("matmul_k_mismatch", matmul([1, 4, 4, 16]))
    case("matmul_batch_differs", matmul([1, 2, 8, 16]))
    case("matmul_one_input", matmul(None, ("relu",)))

    # -- wiring ------------------------------------------------------------------
    case("wiring_dangling_input", mutate(lambda m: node(m, "relu").update(inputs=["conv2"])))
    case("wiring_self_input", mutate(lambda m: node(m, "relu").update(inputs=["relu"])))

    def cycle(m):
        m["nodes"] = [
            {"name": "a", "op": "relu", "inputs": ["b"]},
            {"name": "b", "op": "relu", "inputs": ["a"]},
            {"name": "relu", "op": "add", "inputs": ["data", "a"]},
        ]
    case("wiring_cycle", mutate(cycle))

    def cycle_downstream(m):
        # "after" only reads from the cycle; the cycle is b <-> c.
        m["nodes"] = [
            {"name": "after", "op": "relu", "inputs": ["c"]},
            {"name": "b", "op": "add", "inputs": ["data", "c"]},
            {"name": "c", "op": "relu", "inputs": ["b"]},
            {"name": "relu", "op": "relu", "inputs": ["after"]},
        ]
    case("wiring_cycle_downstream", mutate(cycle_downstream))
    case("wiring_dead_node", mutate(lambda m: m["nodes"].insert(1, {"name": "unused", "op": "sigmoid", "inputs": ["conv"]})))
    case("wiring_unused_input", mutate(lambda m: m["inputs"].append({"name": "extra", "shape": [1, 5], "dtype": "float32"})))
    case("outputs_not_array", mutate(lambda m: m.update(outputs="relu")))
    case("outputs_empty", mutate(lambda m: m.update(outputs=[])))
    case("output_unknown", mutate(lambda m: m.update(outputs=["softmax"])))
    case("output_duplicate", mutate(lambda m: m.update(outputs=["relu", "relu"])))
    case("output_not_string", mutate(lambda m: m.update(outputs=[1])))

    # -- shape inference -----------------------------------------------------------
    case("rank_dense_on_4d", mutate(lambda m: node(m, "relu").update(op="dense", attrs={"units": 10})))
    case("rank_conv_on_2d", mutate(lambda m: m.update(nodes=[
        {"name": "relu", "op": "conv2d", "inputs": ["data"], "attrs": {"channels": 4, "kernel": [1, 1]}}]), base2d))
    case("rank_bias_add_3d", mutate(lambda m: node(m, "relu").update(op="bias_add"), lambda: base2d((1, 2, 3))))
    case("rank_pool_on_2d", mutate(lambda m: node(m, "relu").update(op="global_avg_pool2d"), base2d))
    case("shape_add_mismatch", mutate(lambda m: node(m, "relu").update(op="add", inputs=["conv", "data"])))

    def concat_mismatch(m):
        m["nodes"].insert(0, {"name": "pool", "op": "max_pool2d", "inputs": ["data"],
                              "attrs": {"kernel": [2, 2], "strides": [2, 2]}})
        node(m, "relu").update(op="concat", inputs=["conv", "pool"])
    case("shape_concat_mismatch", mutate(concat_mismatch))
    case("shape_concat_rank_mismatch", mutate(lambda m: m.update(nodes=[
        {"name": "r", "op": "reshape", "inputs": ["data"], "attrs": {"shape": [1, 2, 5]}},
        {"name": "relu", "op": "concat", "inputs": ["data", "r"]}]), base2d))
    case("concat_axis_out_of_range", mutate(lambda m: node(m, "relu").update(
        op="concat", inputs=["conv", "conv"], attrs={"axis": 4})))
    case("overflow_conv_output", mutate(lambda m: (m["inputs"][0].update(shape=[1, 1, 32768, 32768]),
                                                   node(m, "conv")["attrs"].update(kernel=[1, 1], padding=[0, 0]))))
    case("overflow_concat", mutate(lambda m: node(m, "relu").update(op="concat", inputs=["data"] * 3),
                                   lambda: base2d((1, 1073741824))))
    case("overflow_weight", mutate(lambda m: (m["inputs"][0].update(shape=[1, 65536, 1, 1]),
                                              node(m, "conv")["attrs"].update(channels=65536, kernel=[1, 1],
                                                                              padding=[0, 0]))))
    case("overflow_dense_weight", dense({"units": 65536}, lambda: base2d((1, 65536))))

    # -- weights source ------------------------------------------------------------
    def weights(w):
        return mutate(lambda m: m.update(weights=w))
    case("weights_not_object", weights("random"))
    case("weights_empty", weights({}))
    case("weights_both", weights({"file": "x.weights", "init": "random", "seed": 1}))
    case("weights_unknown_key", weights({"init": "random", "sead": 1}))
    case("weights_init_zeros", weights({"init": "zeros", "seed": 1}))
    case("weights_missing_seed", weights({"init": "random"}))
    case("weights_seed_negative", weights({"init": "random", "seed": -1}))
    case("weights_seed_too_big", weights({"init": "random", "seed": 2 ** 53}))
    case("weights_seed_float", weights({"init": "random", "seed": 1.5}))
    case("weights_seed_huge", good.replace('"seed": 1}', '"seed": 1e400}', 1))
    case("weights_file_empty_name", weights({"file": ""}))
    case("weights_file_not_string", weights({"file": 3}))
    case("weights_file_missing", weights({"file": "missing.weights"}))
    case("weights_file_directory", weights({"file": "."}))

    # -- weights files ---------------------------------------------------------------
    def wcase(name, tensors=None, blob=None, **kw):
        if blob is None:
            blob = gs.encode_weights(good_tensors() if tensors is None else tensors, **kw)
        case(name, weights_model(name + ".weights"), blob)

    good_blob = gs.encode_weights(good_tensors())
    header_end = 16 + sum(4 + len(n) + 8 + 8 * len(s) + 16 for n, s, _ in good_tensors())
    wcase("wfile_empty", blob=b"")
    wcase("wfile_bad_magic", magic=b"HETCWTS2")
    wcase("wfile_version_2", version=2)
    wcase("wfile_short_header", blob=good_blob[:12])
    wcase("wfile_count_too_big", count=100000)
    wcase("wfile_truncated_entry", blob=good_blob[:header_end - 10])
    wcase("wfile_truncated_data", blob=good_blob[:-8])
    t = good_tensors()
    wcase("wfile_name_len_zero", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"name": b"", "name_len": 0})))
    wcase("wfile_name_nul", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"name": b"conv1.b\0as"})))
    wcase("wfile_dtype_2", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"dtype": 2})))
    wcase("wfile_rank_0", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"rank": 0, "dims": []})))
    wcase("wfile_rank_7", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"rank": 7, "dims": [1, 1, 1, 4, 1, 1, 1]})))
    wcase("wfile_dim_zero", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"dims": [0]})))
    wcase("wfile_dim_negative", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"dims": [-4]})))
    wcase("wfile_too_many_elements", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"rank": 2, "dims": [65536, 65536]})))
    wcase("wfile_nbytes_wrong", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"nbytes": 20})))
    wcase("wfile_offset_in_header", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"offset": header_end - 8})))
    wcase("wfile_offset_past_end", replace_tensor(t, "conv1.bias", ("conv1.bias", [4], t[1][2], {"offset": 1 << 63})))
    wcase("wfile_shape_mismatch", replace_tensor(t, "conv1.weight", ("conv1.weight", [4, 3, 9, 1], t[0][2])))
    wcase("wfile_rank_mismatch", replace_tensor(t, "conv1.weight", ("conv1.weight", [4, 27], t[0][2])))
    wcase("wfile_missing_tensor", [x for x in t if x[0] != "bn1.var"])
    # Two faults in different nodes: the first one (in file order of the
    # graph's nodes) is reported, and only once.
    wcase("wfile_two_faults", [x for x in replace_tensor(t, "conv1.weight", ("conv1.weight", [4, 3, 9, 1], t[0][2]))
                               if x[0] != "bn1.var"])
    wcase("wfile_extra_tensor", t + [("conv2.weight", [1], [0.0])])
    wcase("wfile_duplicate_tensor", t + [t[1]])
    wcase("wfile_nan", replace_tensor(t, "conv1.weight", ("conv1.weight", [4, 3, 3, 3], t[0][2][:50] + [math.nan] + t[0][2][51:])))
    wcase("wfile_infinity", replace_tensor(t, "bn1.beta", ("bn1.beta", [4], [0.0, math.inf, 0.0, 0.0])))
    wcase("wfile_negative_variance", replace_tensor(t, "bn1.var", ("bn1.var", [4], [1.0, 1.0, -0.5, 1.0])))


# ---------------------------------------------------------------------------
# Golden values of the random init, from gen_samples.random_init_values
# ---------------------------------------------------------------------------

GOLDEN = [
    # (model, tensor, shape, kind, seed)
    ("tiny_conv.json", "conv1.weight", [5, 3, 3, 3], "weight", 101),
    ("tiny_conv.json", "bn1.var", [5], "var", 101),
    ("tiny_conv.json", "fc.bias", [13], "bias", 101),
    ("tiny_depthwise.json", "dw1.weight", [9, 1, 3, 3], "weight", 103),
]


def golden_text():
    lines = ["# tensor values of {\"init\": \"random\"} as float32 bits, from",
             "# samples/gen_samples.py random_init_values (tests/model/make_cases.py)",
             "# model tensor seed count bits..."]
    for model, name, shape, kind, seed in GOLDEN:
        vals = gs.random_init_values(name, shape, kind, seed)
        bits = [struct.unpack("<I", struct.pack("<f", v))[0] for v in vals]
        lines.append("%s %s %d %d %s" % (model, name, seed, len(bits), " ".join("%08x" % b for b in bits)))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def generate(outdir):
    """Write bad/* and the golden file under outdir; returns relative paths."""
    build_cases()
    bad = os.path.join(outdir, "bad")
    os.makedirs(bad, exist_ok=True)
    written = []
    names = set()
    for name, model, weights in CASES:
        assert name not in names, name
        names.add(name)
        if isinstance(model, dict):
            model = text_of(model)
        if isinstance(model, str):
            model = model.encode("utf-8")
        with open(os.path.join(bad, name + ".json"), "wb") as f:
            f.write(model)
        written.append("bad/%s.json" % name)
        if weights is not None:
            with open(os.path.join(bad, name + ".weights"), "wb") as f:
                f.write(weights)
            written.append("bad/%s.weights" % name)
    with open(os.path.join(outdir, "random_init_golden.txt"), "w", newline="\n") as f:
        f.write(golden_text())
    written.append("random_init_golden.txt")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if a committed file is out of date")
    ap.add_argument("--out", default=HERE, help="output directory (default: tests/model)")
    args = ap.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            names = generate(tmp)
            stale = [n for n in names
                     if not os.path.exists(os.path.join(HERE, n))
                     or not filecmp.cmp(os.path.join(HERE, n), os.path.join(tmp, n), shallow=False)]
            extra = sorted(set("bad/" + n for n in os.listdir(os.path.join(HERE, "bad"))) - set(names))
        if stale or extra:
            print("tests/model out of date (run python3 tests/model/make_cases.py): "
                  + " ".join(stale + extra), file=sys.stderr)
            return 1
        print("tests/model cases up to date (%d files)" % len(names))
        return 0
    names = generate(args.out)
    print("wrote %d files (%d cases)" % (len(names), len(CASES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
