#!/usr/bin/env python3
"""The onnx package's own backend tests, run through hetc.

    run_backend_sets.py HETC WORK_DIR [--sets node,pytorch-converted,pytorch-operator,light]
                        [--node-match REGEX] [--targets cpu] [--expect FILE] [--timeout S]

Each case's model goes through `hetc compile` and `hetc run`, and its
outputs are held to the case's own: within the case's rtol and atol as
numpy.testing.assert_allclose reads them (the onnx backend runner's rule).

- node: the cases onnx.backend.test.case.node writes (PyPI's onnx ships the
  generators, not the data), each with its data sets;
- pytorch-converted, pytorch-operator: the model folders under the
  package's backend/test/data, each with test_data_set_0;
- light: the light_*.onnx zoo graphs with onnx's dummy inputs (arange / n,
  as its runner makes them) and the outputs stored beside them.

hetc computes on float32 and takes constant weights, so a case's graph
inputs are fed as the test gives them, except that an input of another type
(indices, shapes, axes) becomes an initializer holding the test's value; and
when hetc refuses the case because an input must be a constant (a scale, a
weight), every input after the first becomes one too and the case is tried
again ("passes with weights bound"). A case whose outputs are not float32 is
counted as such, never run.

Each case's line goes to WORK_DIR/results.tsv (set, case, result, detail),
and a summary per set to stdout. Results: pass, pass-bound, differs,
refused (hetc's message: an op or form it does not import), error (any
other failure: the message), not-float (outputs of another type).

--node-match keeps the node cases whose names it matches (the other sets
are small). With --expect FILE (lines "set<TAB>case"), every case listed
that this run ran must pass (pass or pass-bound): exit status 1 names those
that do not. Exit 0 otherwise.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

FLOAT = TensorProto.FLOAT


def data_dir():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def node_cases(match):
    from onnx.backend.test.case import node

    for case in node.collect_testcases(None):
        if match and not match.search(case.name):
            continue
        yield "node", case.name, case.model, case.data_sets, case.rtol, case.atol


def folder_cases(kind):
    root = os.path.join(data_dir(), kind)
    if not os.path.isdir(root):
        return
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        model_path = os.path.join(folder, "model.onnx")
        sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
        if not os.path.exists(model_path) or not sets:
            continue
        model = onnx.load(model_path)
        data_sets = []
        for d in sets:
            def read(prefix):
                files = sorted((f for f in os.listdir(os.path.join(folder, d)) if f.startswith(prefix)),
                               key=lambda f: int(re.sub(r"\D", "", f)))
                out = []
                for f in files:
                    tensor = TensorProto()
                    with open(os.path.join(folder, d, f), "rb") as handle:
                        tensor.ParseFromString(handle.read())
                    out.append(numpy_helper.to_array(tensor))
                return out
            data_sets.append((read("input_"), read("output_")))
        yield kind, name, model, data_sets, 1e-3, 1e-7


def light_cases():
    root = os.path.join(data_dir(), "light")
    if not os.path.isdir(root):
        return
    for file_name in sorted(os.listdir(root)):
        if not file_name.endswith(".onnx"):
            continue
        name = file_name[:-5]
        model = onnx.load(os.path.join(root, file_name))
        initializers = {i.name for i in model.graph.initializer}
        inputs = []
        for x in model.graph.input:
            if x.name in initializers:
                continue
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            inputs.append((np.arange(n).reshape(shape) / n).astype(np.float32))
        outputs = []
        for k in range(len(model.graph.output)):
            tensor = TensorProto()
            with open(os.path.join(root, f"{name}_output_{k}.pb"), "rb") as handle:
                tensor.ParseFromString(handle.read())
            outputs.append(numpy_helper.to_array(tensor))
        # The onnx runner's tolerance for these zoo graphs.
        yield "light", name, model, [(inputs, outputs)], 1e-3, 1e-3


def bind(model, data, names):
    """The model with the graph inputs `names` made initializers of the
    test's values."""
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    keep = [x for x in bound.graph.input if x.name not in names]
    for x in bound.graph.input:
        if x.name in names:
            value = data[x.name]
            if not isinstance(value, np.ndarray):
                value = np.asarray(value)
            bound.graph.initializer.append(numpy_helper.from_array(value, x.name))
    del bound.graph.input[:]
    bound.graph.input.extend(keep)
    return bound


def run(command, timeout):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout} s"
    except OSError as error:
        return 126, f"{command[0]}: {error.strerror}"
    text = (done.stderr or done.stdout).strip().splitlines()
    return done.returncode, text[-1] if text else ""


def try_case(hetc, work, model, inputs, expected, rtol, atol, timeout):
    """(result, detail) for one data set of one model whose runtime inputs
    are `inputs` (name -> float32 array)."""
    model_path = os.path.join(work, "model.onnx")
    package = os.path.join(work, "model.hetc")
    output = os.path.join(work, "out.bin")
    onnx.save(model, model_path)
    files = []
    for k, (name, value) in enumerate(inputs.items()):
        path = os.path.join(work, f"input{k}.bin")
        np.ascontiguousarray(value, dtype="<f4").tofile(path)
        files.append(f"{name}={path}")
    # Symbolic dims take the test data's extents.
    shape_options = []
    for x in model.graph.input:
        dims = x.type.tensor_type.shape.dim
        if x.name in inputs and any(not d.HasField("dim_value") for d in dims):
            shape_options += ["--input-shape", f"{x.name}={'x'.join(str(d) for d in inputs[x.name].shape)}"]
    code, message = run([hetc, "compile", model_path, "--targets", TARGETS, "-o", package, *shape_options], timeout)
    if code != 0:
        # Exit status 2 is hetc's refusal of its input; these models are
        # valid ONNX, so it refuses what it does not import.
        return "refused" if code == 2 else "error", message
    command = [hetc, "run", package, "--output", output, "--repeat", "1"]
    if len(files) == 1:
        command += ["--input", files[0].split("=", 1)[1]]
    elif files:
        command += ["--input", ",".join(files)]
    code, message = run(command, timeout)
    if code != 0:
        return "error", message
    got = np.fromfile(output, dtype="<f4")
    want = np.concatenate([np.asarray(e, dtype=np.float64).ravel() for e in expected]) if expected else np.zeros(0)
    if got.size != want.size:
        return "differs", f"{got.size} values, expected {want.size}"
    close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
        worst = np.argmax(np.abs(got - want) - atol - rtol * np.abs(want))
        return "differs", f"{(~close).sum()} of {want.size} values; at {worst}: {got[worst]:.7g}, expected {want[worst]:.7g}"
    return "pass", ""


def check(hetc, work, case_set, name, model, data_sets, rtol, atol, timeout):
    graph_inputs = [x for x in model.graph.input if x.name not in {i.name for i in model.graph.initializer}]
    outputs_float = all(o.type.tensor_type.elem_type == FLOAT for o in model.graph.output)
    if not outputs_float:
        return "not-float", "an output is not float32"
    result, detail = "error", "no data set"
    for inputs, expected in data_sets:
        # The node cases give arrays, or TensorProtos (bfloat16, float8).
        inputs = [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in inputs]
        expected = [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in expected]
        if not all(isinstance(v, np.ndarray) for v in list(inputs) + list(expected)):
            return "not-float", "a sequence, map or optional"
        data = {x.name: inputs[k] for k, x in enumerate(graph_inputs) if k < len(inputs)}
        if len(data) != len(graph_inputs):
            return "error", f"the test gives {len(inputs)} inputs, the graph has {len(graph_inputs)}"
        not_float = {x.name for x in graph_inputs if x.type.tensor_type.elem_type != FLOAT}
        runtime = [x.name for x in graph_inputs if x.name not in not_float]
        model_now = bind(model, data, not_float) if not_float else model
        result, detail = try_case(hetc, work, model_now, {n: data[n] for n in runtime}, expected, rtol, atol,
                                  timeout)
        if result in ("refused", "error") and len(runtime) > 1:
            bound = bind(model, data, not_float | set(runtime[1:]))
            second, second_detail = try_case(hetc, work, bound, {runtime[0]: data[runtime[0]]}, expected, rtol,
                                             atol, timeout)
            if second == "pass":
                result, detail = "pass-bound", ""
            elif second == "differs":
                result, detail = second, second_detail
        if result not in ("pass", "pass-bound"):
            return result, detail
    return result, detail


TARGETS = "cpu"


def main():
    global TARGETS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hetc")
    parser.add_argument("work")
    parser.add_argument("--sets", default="node,pytorch-converted,pytorch-operator,light")
    parser.add_argument("--node-match", default="")
    parser.add_argument("--targets", default="cpu")
    parser.add_argument("--expect", default="")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    TARGETS = args.targets
    match = re.compile(args.node_match) if args.node_match else None
    os.makedirs(args.work, exist_ok=True)
    sources = {"node": lambda: node_cases(match), "light": light_cases}
    results = []
    scratch = tempfile.mkdtemp(dir=args.work)
    try:
        for case_set in args.sets.split(","):
            cases = sources[case_set]() if case_set in sources else folder_cases(case_set)
            for case in cases:
                result, detail = check(args.hetc, scratch, *case, args.timeout)
                results.append((case[0], case[1], result, detail.replace("\t", " ")))
                print(f"{case[0]}\t{case[1]}\t{result}\t{detail}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with open(os.path.join(args.work, "results.tsv"), "w") as out:
        for line in results:
            out.write("\t".join(line) + "\n")
    print()
    print(f"{'set':20} {'cases':>6} {'pass':>6} {'bound':>6} {'differs':>8} {'refused':>8} {'error':>6} "
          f"{'not-float':>9}")
    for case_set in args.sets.split(","):
        mine = [r[2] for r in results if r[0] == case_set]
        print(f"{case_set:20} {len(mine):6} {mine.count('pass'):6} {mine.count('pass-bound'):6} "
              f"{mine.count('differs'):8} {mine.count('refused'):8} {mine.count('error'):6} "
              f"{mine.count('not-float'):9}")
    if args.expect:
        by_case = {(r[0], r[1]): r for r in results}
        lost = []
        checked = 0
        with open(args.expect) as expect:
            for line in expect:
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                key = tuple(line.split("\t")[:2])
                r = by_case.get(key)
                if r is None:
                    continue
                checked += 1
                if r[2] not in ("pass", "pass-bound"):
                    lost.append(f"{key[0]} {key[1]}: {r[2]}: {r[3]}")
        for line in lost:
            print(f"FAIL: expected to pass: {line}")
        if lost:
            return 1
        print(f"the {checked} cases of {os.path.basename(args.expect)} that ran pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
