#!/usr/bin/env python3
"""hetc against onnxruntime and OpenVINO on whole models, in one run.

The models are hetc's samples (`--models resnet50,...`: samples/NAME.json,
converted to ONNX with the same weights by model_to_onnx.py) or ONNX files
(`--models a.onnx,...`, `--onnx-dir DIR`: export.sh writes torchvision's
CNNs), which hetc compiles and the peers load as they are; their input is
the graph's, a symbolic batch set to 1.

Each contender runs in a process of its own that loads its model once and
then waits on a pipe; the driver asks them in turn for a batch of timed
runs, round after round (the first contender of a round rotates), so a
burst of load on this shared machine spoils a batch of every contender
rather than all runs of one. Between batches the driver pauses (--settle)
so that the threads of the contender before, which spin for a while after
their last run, are asleep, and each batch begins with untimed runs that
wake the contender's own. Per model it prints each contender's p50 and
p90 over all timed runs, the spread of the per-round medians, the ratio of
the faster peer's p50 to hetc's (above 1: hetc is faster), the same ratio
taken round by round (the median over the rounds of the ratio of that
round's medians: other tenants slow this machine for seconds at a time, and
a round's contenders share those conditions), hetc's predicted
latency (`hetc compile --explain`), the model's GFLOP (Conv, Gemm and
MatMul, counted on the ONNX graph) and the fraction of the machine's peak
that hetc's p50 reaches (the peak from --peak-gflops, else measured by
bench_vec_resnet50 beside hetc; the column is left out, saying why, when
neither is there), and the largest difference between hetc's outputs and
onnxruntime's on the same input. A model that hetc cannot compile, or a
contender cannot run, gets its error in its row, and the run goes on.

hetc's package is compiled here (`--targets`, `--records`), or taken as it
is with `--package MODEL=PKG`. With `--records`, a second hetc package is
compiled for the same targets from an empty store (every kernel at its
template's default; so is hetc's package without `--records`) and timed in the same rounds, and a second table puts
the tuned package beside it: tuning must never make a model slower.

A peer that is not installed in this Python (run.sh installs both in a
virtual environment of the benchmark's own) is left out, and the run says
so; with neither, hetc is timed alone, its outputs compared with nothing,
and no ONNX file is made from a sample (the converter needs the onnx
package, as reading an ONNX model does). Peers
run fp32 with as many intra-op threads as hetc uses (`--threads`, default:
the online cores); OpenVINO is pinned to f32 precision, since on CPUs with
AVX512_BF16 it would otherwise pick bf16.

    peers.py --hetc build/bin/hetc [--models resnet50,model.onnx,...] [--onnx-dir DIR]
             [--targets cpu,vec] [--records STORE] [--package MODEL=PKG ...] [--rounds 20]
             [--batch 5] [--warmup 5] [--threads N] [--peak-gflops X] [--work DIR] [--csv FILE]
"""
import argparse
import collections
import csv
import ctypes
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DEFAULT_MODELS = "resnet18,resnet50,vgg19,mobilenet_v1,squeezenet"
PEERS = ("onnxruntime", "openvino")


# --------------------------------------------------------------------------
# Contender processes: `peers.py --serve KIND MODEL_FILE INPUT_FILE THREADS`
# reads "N" lines and answers with N latencies in seconds, or "out" with
# the path of a file holding the outputs of one run.
# --------------------------------------------------------------------------

class HetcRunner:
    def __init__(self, package, x, threads):
        os.environ["HETC_NUM_THREADS"] = str(threads)
        lib_dir = os.environ["HETC_LIB_DIR"]
        self.lib = ctypes.CDLL(os.path.join(lib_dir, "libhetc.so"))
        lib = self.lib
        lib.hetc_status_message.restype = ctypes.c_char_p
        lib.hetc_status_message.argtypes = [ctypes.c_void_p]
        for name in ("hetc_package_set_input", "hetc_package_get_output"):
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int32,
                                           ctypes.c_void_p, ctypes.c_int64]
            getattr(lib, name).restype = ctypes.c_void_p
        for name in ("hetc_context_create", "hetc_package_open", "hetc_package_run"):
            getattr(lib, name).restype = ctypes.c_void_p
        lib.hetc_package_output_elements.restype = ctypes.c_int64
        lib.hetc_package_output_elements.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        lib.hetc_package_output_count.argtypes = [ctypes.c_void_p]
        lib.hetc_package_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        lib.hetc_package_run.argtypes = [ctypes.c_void_p]
        self.context, self.package = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(lib.hetc_context_create(ctypes.byref(self.context)))
        self.check(lib.hetc_package_open(self.context, package.encode(), ctypes.byref(self.package)))
        self.x = np.ascontiguousarray(x)
        self.check(lib.hetc_package_set_input(self.package, 0, self.x.ctypes.data, self.x.size))

    def check(self, status):
        if status:
            sys.exit("hetc: " + self.lib.hetc_status_message(status).decode())

    def run(self):
        self.check(self.lib.hetc_package_run(self.package))

    def outputs(self):
        self.run()
        parts = []
        for i in range(self.lib.hetc_package_output_count(self.package)):
            out = np.empty(self.lib.hetc_package_output_elements(self.package, i), np.float32)
            self.check(self.lib.hetc_package_get_output(self.package, i, out.ctypes.data, out.size))
            parts.append(out)
        return np.concatenate(parts)


class OrtRunner:
    def __init__(self, onnx_file, x, threads):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(onnx_file, options, providers=["CPUExecutionProvider"])
        self.feed = {self.session.get_inputs()[0].name: x}

    def run(self):
        self.result = self.session.run(None, self.feed)

    def outputs(self):
        self.run()
        return np.concatenate([np.asarray(r, np.float32).ravel() for r in self.result])


class OpenVinoRunner:
    def __init__(self, onnx_file, x, threads):
        import openvino as ov
        core = ov.Core()
        config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads,
                  "INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": 1}
        self.compiled = core.compile_model(core.read_model(onnx_file), "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.x = x

    def run(self):
        self.result = self.request.infer([self.x])

    def outputs(self):
        self.run()
        return np.concatenate([np.asarray(v, np.float32).ravel() for v in self.result.values()])


# hetc_default: hetc's package at the templates' defaults, beside the tuned one.
RUNNERS = {"hetc": HetcRunner, "hetc_default": HetcRunner, "onnxruntime": OrtRunner, "openvino": OpenVinoRunner}


def serve(kind, model_file, input_file, threads):
    x = np.load(input_file)
    runner = RUNNERS[kind](model_file, x, threads)
    print("ready", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "out":
            path = input_file + "." + kind + ".out.npy"
            np.save(path, runner.outputs())
            print(path, flush=True)
            continue
        times = []
        for _ in range(int(command)):
            t0 = time.perf_counter()
            runner.run()
            times.append(time.perf_counter() - t0)
        print(" ".join(f"{t:.9f}" for t in times), flush=True)


class ContenderFailed(Exception):
    """A contender process that did not start or died; the message is the
    last line it wrote to its standard error."""


class Contender:
    def __init__(self, kind, model_file, input_file, threads):
        self.kind = kind
        # Its standard error goes to a file, read back when it fails (a
        # traceback's last line names the error) and relayed when it closes.
        self.stderr_path = input_file + "." + kind + ".stderr"
        self.stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve", kind, model_file, input_file,
             str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            self.fail("did not start")
        self.times, self.round_medians = [], []

    def fail(self, what):
        self.close()
        with open(self.stderr_path) as f:
            lines = [line.strip() for line in f if line.strip()]
        # hetc's runner says "hetc: ..." itself.
        said = lines[-1].removeprefix(self.kind + ": ") if lines else "no message"
        raise ContenderFailed(f"{self.kind} {what}: {said}")

    def ask(self, command):
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            self.fail("died")
        return answer.strip()

    def batch(self, runs, keep=True, warm=0):
        if warm:
            self.ask(str(warm))
        times = [float(t) for t in self.ask(str(runs)).split()]
        if keep:
            self.times += times
            self.round_medians.append(float(np.median(times)))

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:  # it died with a line unread
            pass
        self.proc.wait()
        if not self.stderr.closed:
            self.stderr.close()
            with open(self.stderr_path) as f:
                said = f.read()
            if said.strip():
                sys.stderr.write("".join(f"  {self.kind}: {line}\n" for line in said.splitlines()))


# --------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------

def percentile(values, q):
    """Nearest rank, as `hetc bench` reports."""
    ordered = sorted(values)
    rank = max(1, int(np.ceil(q / 100.0 * len(ordered))))
    return ordered[rank - 1]


def installed_peers():
    """The peers this Python can import, and a line on those it cannot."""
    present = [p for p in PEERS if importlib.util.find_spec(p) is not None]
    missing = [p for p in PEERS if p not in present]
    if not missing:
        return present, None
    return present, (f"peers: {' and '.join(missing)} not installed in {sys.executable}: "
                     f"{'hetc is timed alone' if not present else 'left out'} "
                     "(tests/bench/peers/run.sh installs both in a virtual environment of its own)")


def empty_store(args, work):
    """A records store with no records, made once in `work` (compile refuses
    a store that does not exist, and without --records it would read the
    per-user store): every kernel of a package compiled from it is at its
    template's default."""
    store = os.path.join(work, "no-records.sqlite")
    if not os.path.exists(store):
        nothing = os.path.join(work, "no-records.jsonl")
        open(nothing, "w").close()
        done = subprocess.run([args.hetc, "records", "import", nothing, "--records", store],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"hetc records import (an empty store) failed:\n{done.stdout}{done.stderr}")
    return store


class ModelFailed(Exception):
    """A model this run cannot time (hetc cannot compile it, its contender
    fails, its ONNX file cannot be read): its row says why, and the run goes
    on with the next model."""


def first_line(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "no message"


Model = collections.namedtuple("Model", "name path onnx")
Model.__doc__ = """One model of the run: a sample (path: samples/NAME.json,
converted to ONNX for the peers; onnx False) or an ONNX file that hetc and
the peers load as it is (onnx True)."""


def models_to_run(args):
    """The models named by --models (sample names and .onnx files) and
    --onnx-dir (every *.onnx in it, by name); the sample models by default,
    but only the directory's when --onnx-dir is given alone."""
    names = args.models if args.models is not None else ("" if args.onnx_dir else DEFAULT_MODELS)
    models = []
    for entry in filter(None, names.split(",")):
        if entry.endswith(".onnx"):
            if not os.path.isfile(entry):
                sys.exit(f"--models: {entry}: no such ONNX file")
            models.append(Model(os.path.basename(entry)[:-len(".onnx")], os.path.abspath(entry), True))
        else:
            path = os.path.join(REPO, "samples", entry + ".json")
            if not os.path.isfile(path):
                sys.exit(f"--models: {entry}: neither a sample model (no {path}) nor a file ending in .onnx")
            models.append(Model(entry, path, False))
    if args.onnx_dir:
        if not os.path.isdir(args.onnx_dir):
            sys.exit(f"--onnx-dir: {args.onnx_dir}: no such directory")
        found = sorted(f for f in os.listdir(args.onnx_dir) if f.endswith(".onnx"))
        if not found:
            sys.exit(f"--onnx-dir: no *.onnx file in {args.onnx_dir}")
        models += [Model(f[:-len(".onnx")], os.path.abspath(os.path.join(args.onnx_dir, f)), True) for f in found]
    # Files in work/ and --package are keyed by the model's name.
    seen = set()
    for model in models:
        if model.name in seen:
            sys.exit(f"two models named {model.name}: rename one of the files")
        seen.add(model.name)
    if not models:
        sys.exit("no models to time (--models and --onnx-dir name none)")
    return models


def read_onnx(onnx_file):
    """The graph's input: its name, its shape (a symbolic batch dimension
    taken as 1) and whether that was symbolic; and the model's GFLOP
    (count_gflop), over shapes inferred for that input."""
    try:
        import onnx
    except ImportError:
        raise ModelFailed("reading an ONNX file needs the onnx package, which this Python lacks "
                          "(run.sh's virtual environment has it)") from None
    try:
        model = onnx.load(onnx_file)
    except Exception as error:
        raise ModelFailed(f"onnx cannot read the file: {first_line(str(error))}") from None
    graph = model.graph
    # Older exporters also list the weights among the inputs.
    weights = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in weights]
    if len(inputs) != 1:
        raise ModelFailed(f"the graph has {len(inputs)} inputs; the benchmark feeds one")
    tensor = inputs[0].type.tensor_type
    if tensor.elem_type != onnx.TensorProto.FLOAT:
        raise ModelFailed(f"input '{inputs[0].name}' is {onnx.TensorProto.DataType.Name(tensor.elem_type)}; "
                          "the benchmark feeds float32")
    shape, symbolic = [], False
    for axis, dim in enumerate(tensor.shape.dim):
        if dim.HasField("dim_value") and dim.dim_value > 0:
            shape.append(dim.dim_value)
        elif axis == 0:
            # The benchmark is batch 1; set it in the graph too, so that
            # shape inference below gives every layer a size.
            dim.Clear()
            dim.dim_value = 1
            shape.append(1)
            symbolic = True
        else:
            raise ModelFailed(f"input '{inputs[0].name}' has a symbolic dimension {axis} "
                              f"({dim.dim_param or '?'}); the benchmark fixes only the batch (to 1)")
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph
    except Exception as error:
        print(f"  onnx shape inference failed, GFLOP unknown: {first_line(str(error))}", file=sys.stderr)
        inferred = None
    return inputs[0].name, shape, symbolic, count_gflop(inferred) if inferred else None


def count_gflop(graph):
    """2 x the multiply-adds of the graph's Conv, Gemm and MatMul nodes, in
    GFLOP: the work a peak FMA rate is measured in, as in the usual published
    counts (elementwise ops, pooling and normalisation are left out). None
    where shape inference left a shape of one of those nodes unknown."""
    shapes = {t.name: list(t.dims) for t in graph.initializer}
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        tensor = value.type.tensor_type
        if tensor.HasField("shape") and all(d.HasField("dim_value") for d in tensor.shape.dim):
            shapes[value.name] = [d.dim_value for d in tensor.shape.dim]
    flops = 0
    for node in graph.node:
        if node.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        # Only the shapes the count needs: a Conv's input may stay unknown
        # where its output is not (a Concat after a Resize to a computed size).
        out = shapes.get(node.output[0])
        if node.op_type == "Conv":
            # Weights [M, C/group, kH, kW]: each output element is C/group*kH*kW multiply-adds.
            weights = shapes.get(node.input[1])
            macs_per_output = weights and math.prod(weights[1:])
        else:
            a = shapes.get(node.input[0])
            trans_a = any(attribute.name == "transA" and attribute.i for attribute in node.attribute)
            macs_per_output = a and (a[0] if node.op_type == "Gemm" and trans_a else a[-1])
        if out is None or macs_per_output is None:
            return None
        flops += 2 * math.prod(out) * macs_per_output
    return flops / 1e9


def compile_hetc(args, model, compile_options, out, records):
    """Compiles the model (its model.json or ONNX file) with `records` (a
    store path), returns the predicted latency compile printed (None when it
    printed none; --explain: for one target it prints one only then)."""
    command = [args.hetc, "compile", model.path, "--targets", args.targets, "-o", out, "--records", records,
               "--explain"] + compile_options
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        # hetc names the file first ("hetc: PATH: ..."); the row names the model.
        message = first_line(done.stderr or done.stdout).removeprefix("hetc: ").removeprefix(model.path + ": ")
        raise ModelFailed(f"hetc compile failed: {message}")
    predicted = re.search(r"expected latency:? ([0-9.]+) ms", done.stdout)
    return float(predicted.group(1)) if predicted else None


def bench_model(args, model, work, rng):
    row = {"model": model.name}
    compile_options, notes = [], []
    if model.onnx:
        onnx_file = model.path
        input_name, shape, symbolic, row["gflop"] = read_onnx(onnx_file)
        if symbolic:
            compile_options = ["--input-shape", input_name + "=" + "x".join(map(str, shape))]
    else:
        onnx_file = os.path.join(work, model.name + ".onnx")
        if args.peers:
            done = subprocess.run([sys.executable, os.path.join(HERE, "model_to_onnx.py"), model.path, onnx_file],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise ModelFailed(f"model_to_onnx.py failed: {(done.stderr or done.stdout).strip()}")
            row["gflop"] = read_onnx(onnx_file)[3]
        with open(model.path) as f:
            shape = json.load(f)["inputs"][0]["shape"]
    input_file = os.path.join(work, model.name + ".input.npy")
    np.save(input_file, rng.uniform(-1, 1, shape).astype(np.float32))
    package = args.packages.get(model.name)
    if not package:
        package = os.path.join(work, model.name + ".hetc")
        row["predicted_ms"] = compile_hetc(args, model, compile_options, package,
                                           args.records or empty_store(args, work))
    contenders, peers = [], []
    try:
        contenders.append(Contender("hetc", package, input_file, args.threads))
        for peer in args.peers:
            # A peer that cannot load this model is left out of its row only.
            try:
                contenders.append(Contender(peer, onnx_file, input_file, args.threads))
                peers.append(peer)
            except ContenderFailed as error:
                notes.append(f"left out: {error}")
        if args.records:
            default_package = os.path.join(work, model.name + ".default.hetc")
            compile_hetc(args, model, compile_options, default_package, empty_store(args, work))
            contenders.append(Contender("hetc_default", default_package, input_file, args.threads))
        outputs = {c.kind: np.load(c.ask("out")) for c in contenders}
        for c in contenders:
            c.batch(args.warmup, keep=False)
        for r in range(args.rounds):
            shift = r % len(contenders)
            for c in contenders[shift:] + contenders[:shift]:
                time.sleep(args.settle)
                c.batch(args.batch, warm=2)
    except ContenderFailed as error:
        raise ModelFailed(str(error)) from None
    finally:
        for c in contenders:
            c.close()
    for c in contenders:
        row[c.kind + "_p50_ms"] = percentile(c.times, 50) * 1e3
        row[c.kind + "_p90_ms"] = percentile(c.times, 90) * 1e3
        medians = np.array(c.round_medians) * 1e3
        row[c.kind + "_spread_ms"] = float(medians.max() - medians.min())
    by_kind = {c.kind: np.array(c.round_medians) for c in contenders}
    # The reference outputs: onnxruntime's, else OpenVINO's, else none.
    reference = outputs[peers[0]] if peers else None
    row["max_abs_diff"] = float(np.abs(outputs["hetc"] - reference).max()) if peers else None
    if peers:
        row["ratio"] = min(row[p + "_p50_ms"] for p in peers) / row["hetc_p50_ms"]
        # The same ratio round by round, each contender's median of that round:
        # other tenants of the machine slow it for seconds at a time, and a
        # round's contenders share those conditions where all runs pooled do not.
        per_round = np.min([by_kind[p] for p in peers], axis=0) / by_kind["hetc"]
        row["round_ratio"] = float(np.median(per_round))
        row["round_ratio_min"], row["round_ratio_max"] = float(per_round.min()), float(per_round.max())
    if args.records:
        row["tuned_over_default"] = row["hetc_default_p50_ms"] / row["hetc_p50_ms"]
        per_round = by_kind["hetc_default"] / by_kind["hetc"]
        row["round_tuned_over_default"] = float(np.median(per_round))
        row["round_tuned_over_default_min"] = float(per_round.min())
        row["round_tuned_over_default_max"] = float(per_round.max())
    if len(peers) == 2:
        row["max_abs_diff_openvino"] = float(np.abs(outputs["openvino"] - reference).max())
    row["max_abs_output"] = float(np.abs(reference if peers else outputs["hetc"]).max())
    if notes:
        row["notes"] = "; ".join(notes)
    return row


class MachinePeak:
    """The machine's fp32 peak in GFLOPS: --peak-gflops, else the highest
    of the measurements bench_vec_resnet50 (built beside hetc with the
    benchmarks) prints first, over as many threads as the contenders use,
    taken after each model: another tenant's load lowers a measurement (to
    half, seen here), never raises it, so the highest is the least spoilt."""

    def __init__(self, args):
        self.args = args
        self.given = args.peak_gflops
        self.bench = os.path.join(os.path.dirname(args.hetc), "bench_vec_resnet50")
        self.measured, self.isa, self.why_none = [], None, None

    def measure(self):
        if self.given or self.why_none:
            return
        if not os.access(self.bench, os.X_OK):
            self.why_none = f"no {self.bench} to measure it (a build with HETC_BUILD_BENCH makes one)"
            return
        # The tiny model: the peak is printed before the model's layers are timed.
        done = subprocess.run([self.bench, "--threads", str(self.args.threads), "--repeat", "1",
                               "--model", os.path.join(REPO, "samples", "tiny_conv.json")],
                              capture_output=True, text=True)
        found = re.search(r"^machine peak \((.*)\): ([0-9.]+) GFLOPS", done.stdout, re.MULTILINE)
        if done.returncode != 0 or not found:
            self.why_none = f"{self.bench} printed no machine peak: {first_line(done.stderr or done.stdout)}"
            return
        self.isa = found.group(1)
        self.measured.append(float(found.group(2)))

    def result(self):
        """The peak and a line saying where it comes from, or None and why not."""
        if self.given:
            return self.given, f"machine peak {self.given:.1f} GFLOPS fp32 (--peak-gflops)"
        if not self.measured:
            return None, f"no %peak: the machine's peak is unknown ({self.why_none}); give --peak-gflops"
        peak = max(self.measured)
        return peak, (f"machine peak {peak:.1f} GFLOPS fp32 (bench_vec_resnet50: {self.isa}; the highest of "
                      f"{len(self.measured)} measurement{'s' if len(self.measured) > 1 else ''}, lowest "
                      f"{min(self.measured):.1f})")


def add_peak_fraction(rows, machine_peak):
    """Adds hetc's GFLOPS and its fraction of the machine's peak to the rows
    whose GFLOP is known; returns the peak and a line saying what it is, or
    None and why there is none (the %peak column is left out then)."""
    if not any(r.get("gflop") and r.get("hetc_p50_ms") for r in rows):
        return None, ("no %peak: no model's GFLOP is known (it is counted on an ONNX file: an .onnx model's, "
                      "or a sample's made for the peers)")
    machine_peak.measure()
    peak, line = machine_peak.result()
    if peak is None:
        return None, line
    for r in rows:
        if r.get("gflop") and r.get("hetc_p50_ms"):
            r["hetc_gflops"] = r["gflop"] / (r["hetc_p50_ms"] / 1e3)
            r["hetc_peak_percent"] = 100 * r["hetc_gflops"] / peak
    return peak, line


def cell(row, key, width, form="{:.2f}"):
    """A value of the row, right-aligned, or "-" where the row has none (a
    peer left out)."""
    value = row.get(key)
    return ("-" if value is None else form.format(value)).rjust(width)


def print_table(rows, args, peak, peak_line):
    print(f"\nwhole-model latency, batch 1, {args.threads} threads each, "
          f"{args.rounds} rounds of {args.batch} runs (ms; spread: max - min of the round medians)")
    if len(args.peers) < len(PEERS):
        print(f"peers timed: {', '.join(args.peers) or 'none'} (the others are not installed; '-' in their columns)")
    print(peak_line)
    name_width = max([13] + [len(r["model"]) for r in rows])
    peak_header = f" {'%peak':>6}" if peak else ""
    print(f"  {'model':<{name_width}} {'hetc p50':>9} {'p90':>8} {'spread':>7} {'predicted':>9} {'GFLOP':>7}"
          f"{peak_header}  {'ORT p50':>8} {'p90':>8} {'spread':>7}  {'OV p50':>8} {'p90':>8} {'spread':>7}  "
          f"{'peer/hetc':>9} {'by round (min-max)':>19} {'max|diff|':>9}")
    for r in rows:
        if "error" in r:
            print(f"  {r['model']:<{name_width}} {r['error']}")
            continue
        by_round = "-"
        if r.get("round_ratio") is not None:
            by_round = f"{r['round_ratio']:.2f}x ({r['round_ratio_min']:.2f}-{r['round_ratio_max']:.2f})"
        peers = "  ".join(" ".join(cell(r, f"{p}_{k}_ms", w) for k, w in (("p50", 8), ("p90", 8), ("spread", 7)))
                          for p in PEERS)
        peak_cell = " " + cell(r, "hetc_peak_percent", 5, "{:.1f}") + "%" if peak else ""
        print(f"  {r['model']:<{name_width}} {cell(r, 'hetc_p50_ms', 9)} {cell(r, 'hetc_p90_ms', 8)} "
              f"{cell(r, 'hetc_spread_ms', 7)} {cell(r, 'predicted_ms', 9)} {cell(r, 'gflop', 7)}{peak_cell}  "
              f"{peers}  {cell(r, 'ratio', 8)}{'x' if r.get('ratio') is not None else ' '} {by_round:>19} "
              f"{cell(r, 'max_abs_diff', 9, '{:.1e}')}")
    print("GFLOP: 2 x the multiply-adds of the model's Conv, Gemm and MatMul nodes (ONNX shape inference)"
          + ("; %peak: GFLOP over hetc's p50, as a fraction of the machine's peak" if peak else ""))
    print("peer/hetc: the faster peer's p50 over hetc's (above 1: hetc is faster); by round: the same ratio of "
          "each round's medians, its median over the rounds (min-max), which a machine slowed by other tenants "
          "for part of the run disturbs less; max|diff|: hetc's outputs against onnxruntime's (OpenVINO's "
          "where onnxruntime is left out)")
    for r in rows:
        if r.get("notes"):
            print(f"{r['model']}: {r['notes']}")
    timed = [r for r in rows if "error" not in r]
    if not args.records or not timed:
        return
    print(f"\nhetc from the records ({args.records}) against hetc at the templates' defaults, same rounds (ms)")
    print(f"  {'model':<{name_width}} {'tuned p50':>9} {'p90':>8} {'spread':>7}  {'dflt p50':>9} {'p90':>8} "
          f"{'spread':>7}  {'default/tuned':>14} {'by round (min-max)':>19}")
    for r in timed:
        # Tuning must not make a model slower beyond the run-to-run spread.
        slower_by = r["hetc_p50_ms"] - r["hetc_default_p50_ms"]
        spread = max(r["hetc_spread_ms"], r["hetc_default_spread_ms"])
        verdict = "" if slower_by <= 0 else " (slower, within the spread)" if slower_by <= spread else " (SLOWER)"
        by_round = (f"{r['round_tuned_over_default']:.2f}x ({r['round_tuned_over_default_min']:.2f}-"
                    f"{r['round_tuned_over_default_max']:.2f})")
        print(f"  {r['model']:<{name_width}} {r['hetc_p50_ms']:>9.2f} {r['hetc_p90_ms']:>8.2f} "
              f"{r['hetc_spread_ms']:>7.2f}  {r['hetc_default_p50_ms']:>9.2f} {r['hetc_default_p90_ms']:>8.2f} "
              f"{r['hetc_default_spread_ms']:>7.2f}  {r['tuned_over_default']:>13.2f}x {by_round:>19}{verdict}")
    print("default/tuned: the default package's p50 over the tuned one's (above 1: tuning made it faster); "
          "by round: as above")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hetc", default=os.path.join(REPO, "build", "bin", "hetc"),
                        help="the hetc to benchmark (default: build/bin/hetc)")
    parser.add_argument("--models",
                        help="comma-separated sample names and .onnx files (default: "
                             f"{DEFAULT_MODELS}, or none with --onnx-dir)")
    parser.add_argument("--onnx-dir", help="also time every *.onnx file in this directory (export.sh writes some)")
    parser.add_argument("--targets", default="cpu", help="hetc compile --targets (default: cpu)")
    parser.add_argument("--records", help="a records store: compile from it, and time a default package beside")
    parser.add_argument("--package", action="append", default=[], metavar="MODEL=PKG",
                        help="time this package for MODEL instead of compiling one (repeatable)")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of alternating batches (default: 20)")
    parser.add_argument("--batch", type=int, default=5, help="timed runs per contender and round (default: 5)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs before each batch (default: 5)")
    parser.add_argument("--settle", type=float, default=0.1,
                        help="seconds of pause between batches, for spinning threads to sleep (default: 0.1)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads for every contender (default: the online cores)")
    parser.add_argument("--peak-gflops", type=float,
                        help="the machine's fp32 peak for the %%peak column (default: bench_vec_resnet50 "
                             "beside hetc measures it)")
    parser.add_argument("--work", help="where ONNX files and packages go (default: a temporary directory)")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    args.hetc = os.path.abspath(args.hetc)
    if not os.access(args.hetc, os.X_OK):
        sys.exit(f"no hetc at {args.hetc} (build it, or name one with --hetc)")
    args.packages = dict(p.split("=", 1) for p in args.package)
    models = models_to_run(args)
    args.peers, left_out = installed_peers()
    if left_out:
        print(left_out, file=sys.stderr, flush=True)
    os.environ["HETC_LIB_DIR"] = os.path.join(os.path.dirname(os.path.dirname(args.hetc)), "lib")
    work = args.work or tempfile.mkdtemp(prefix="hetc-peers-")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(1)
    rows = []
    machine_peak = MachinePeak(args)
    for model in models:
        print(f"{model.name}: {'compiling' if model.onnx else 'converting, compiling'} and timing ...",
              file=sys.stderr, flush=True)
        try:
            rows.append(bench_model(args, model, work, rng))
            if rows[-1].get("gflop"):
                machine_peak.measure()
        except ModelFailed as error:
            print(f"{model.name}: {error}", file=sys.stderr, flush=True)
            rows.append({"model": model.name, "error": str(error)})
    peak, peak_line = add_peak_fraction(rows, machine_peak)
    print_table(rows, args, peak, peak_line)
    if args.csv:
        # Failed rows and rows with a peer left out have fewer columns.
        fields = list(dict.fromkeys(key for r in rows for key in r))
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
    # Every model failing is a failed run (the smoke test's, too).
    if all("error" in r for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
