#!/usr/bin/env python3
"""hetc against onnxruntime and OpenVINO on whole models, in one run.

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
latency (`hetc compile --explain`) and the largest difference between
hetc's outputs and onnxruntime's on the same input.

hetc's package is compiled here (`--targets`, `--records`), or taken as it
is with `--package MODEL=PKG`. With `--records`, a second hetc package is
compiled for the same targets from an empty store (every kernel at its
template's default; so is hetc's package without `--records`) and timed in the same rounds, and a second table puts
the tuned package beside it: tuning must never make a model slower.

A peer that is not installed in this Python (run.sh installs both in a
virtual environment of the benchmark's own) is left out, and the run says
so; with neither, hetc is timed alone, its outputs compared with nothing,
and no ONNX file is made (the converter needs the onnx package). Peers
run fp32 with as many intra-op threads as hetc uses (`--threads`, default:
the online cores); OpenVINO is pinned to f32 precision, since on CPUs with
AVX512_BF16 it would otherwise pick bf16.

    peers.py --hetc build/bin/hetc [--models resnet50,...] [--targets cpu,vec]
             [--records STORE] [--package MODEL=PKG ...] [--rounds 20] [--batch 5]
             [--warmup 5] [--threads N] [--work DIR] [--csv FILE]
"""
import argparse
import csv
import ctypes
import importlib.util
import json
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


class Contender:
    def __init__(self, kind, model_file, input_file, threads):
        self.kind = kind
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve", kind, model_file, input_file,
             str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{kind}: the contender process did not start")
        self.times, self.round_medians = [], []

    def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"{self.kind}: the contender process died")
        return answer.strip()

    def batch(self, runs, keep=True, warm=0):
        if warm:
            self.ask(str(warm))
        times = [float(t) for t in self.ask(str(runs)).split()]
        if keep:
            self.times += times
            self.round_medians.append(float(np.median(times)))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


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


def compile_hetc(args, model, model_json, out, records):
    """Compiles with `records` (a store path), returns the predicted latency
    compile printed (None when it placed nothing)."""
    command = [args.hetc, "compile", model_json, "--targets", args.targets, "-o", out, "--records", records]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"hetc compile {model} failed:\n{done.stdout}{done.stderr}")
    predicted = re.search(r"expected latency ([0-9.]+) ms", done.stdout)
    return float(predicted.group(1)) if predicted else None


def bench_model(args, model, work, rng):
    model_json = os.path.join(REPO, "samples", model + ".json")
    onnx_file = os.path.join(work, model + ".onnx")
    if args.peers:
        subprocess.run([sys.executable, os.path.join(HERE, "model_to_onnx.py"), model_json, onnx_file],
                       check=True)
    with open(model_json) as f:
        shape = json.load(f)["inputs"][0]["shape"]
    input_file = os.path.join(work, model + ".input.npy")
    np.save(input_file, rng.uniform(-1, 1, shape).astype(np.float32))
    predicted = None
    package = args.packages.get(model)
    if not package:
        package = os.path.join(work, model + ".hetc")
        predicted = compile_hetc(args, model, model_json, package, args.records or empty_store(args, work))
    contenders = [Contender("hetc", package, input_file, args.threads)]
    contenders += [Contender(peer, onnx_file, input_file, args.threads) for peer in args.peers]
    if args.records:
        default_package = os.path.join(work, model + ".default.hetc")
        compile_hetc(args, model, model_json, default_package, empty_store(args, work))
        contenders.append(Contender("hetc_default", default_package, input_file, args.threads))
    try:
        outputs = {c.kind: np.load(c.ask("out")) for c in contenders}
        for c in contenders:
            c.batch(args.warmup, keep=False)
        for r in range(args.rounds):
            shift = r % len(contenders)
            for c in contenders[shift:] + contenders[:shift]:
                time.sleep(args.settle)
                c.batch(args.batch, warm=2)
    finally:
        for c in contenders:
            c.close()
    row = {"model": model, "predicted_ms": predicted}
    for c in contenders:
        row[c.kind + "_p50_ms"] = percentile(c.times, 50) * 1e3
        row[c.kind + "_p90_ms"] = percentile(c.times, 90) * 1e3
        medians = np.array(c.round_medians) * 1e3
        row[c.kind + "_spread_ms"] = float(medians.max() - medians.min())
    by_kind = {c.kind: np.array(c.round_medians) for c in contenders}
    # The reference outputs: onnxruntime's, else OpenVINO's, else none.
    reference = outputs[args.peers[0]] if args.peers else None
    row["max_abs_diff"] = float(np.abs(outputs["hetc"] - reference).max()) if args.peers else None
    if args.peers:
        row["ratio"] = min(row[p + "_p50_ms"] for p in args.peers) / row["hetc_p50_ms"]
        # The same ratio round by round, each contender's median of that round:
        # other tenants of the machine slow it for seconds at a time, and a
        # round's contenders share those conditions where all runs pooled do not.
        per_round = np.min([by_kind[p] for p in args.peers], axis=0) / by_kind["hetc"]
        row["round_ratio"] = float(np.median(per_round))
        row["round_ratio_min"], row["round_ratio_max"] = float(per_round.min()), float(per_round.max())
    if args.records:
        row["tuned_over_default"] = row["hetc_default_p50_ms"] / row["hetc_p50_ms"]
        per_round = by_kind["hetc_default"] / by_kind["hetc"]
        row["round_tuned_over_default"] = float(np.median(per_round))
        row["round_tuned_over_default_min"] = float(per_round.min())
        row["round_tuned_over_default_max"] = float(per_round.max())
    if len(args.peers) == 2:
        row["max_abs_diff_openvino"] = float(np.abs(outputs["openvino"] - reference).max())
    row["max_abs_output"] = float(np.abs(reference if args.peers else outputs["hetc"]).max())
    return row


def cell(row, key, width, form="{:.2f}"):
    """A value of the row, right-aligned, or "-" where the row has none (a
    peer left out)."""
    value = row.get(key)
    return ("-" if value is None else form.format(value)).rjust(width)


def print_table(rows, args):
    print(f"\nwhole-model latency, batch 1, {args.threads} threads each, "
          f"{args.rounds} rounds of {args.batch} runs (ms; spread: max - min of the round medians)")
    if len(args.peers) < len(PEERS):
        print(f"peers timed: {', '.join(args.peers) or 'none'} (the others are not installed; '-' in their columns)")
    header = ("model", "hetc p50", "p90", "spread", "predicted", "ORT p50", "p90", "spread",
              "OV p50", "p90", "spread", "peer/hetc", "by round (min-max)", "max|diff|")
    print("  {:<13} {:>9} {:>8} {:>7} {:>9}  {:>8} {:>8} {:>7}  {:>8} {:>8} {:>7}  {:>9} {:>19} {:>9}".format(
        *header))
    for r in rows:
        by_round = "-"
        if r.get("round_ratio") is not None:
            by_round = f"{r['round_ratio']:.2f}x ({r['round_ratio_min']:.2f}-{r['round_ratio_max']:.2f})"
        peers = "  ".join(" ".join(cell(r, f"{p}_{k}_ms", w) for k, w in (("p50", 8), ("p90", 8), ("spread", 7)))
                          for p in PEERS)
        print(f"  {r['model']:<13} {cell(r, 'hetc_p50_ms', 9)} {cell(r, 'hetc_p90_ms', 8)} "
              f"{cell(r, 'hetc_spread_ms', 7)} {cell(r, 'predicted_ms', 9)}  {peers}  "
              f"{cell(r, 'ratio', 8)}{'x' if r.get('ratio') is not None else ' '} {by_round:>19} "
              f"{cell(r, 'max_abs_diff', 9, '{:.1e}')}")
    print("peer/hetc: the faster peer's p50 over hetc's (above 1: hetc is faster); by round: the same ratio of "
          "each round's medians, its median over the rounds (min-max), which a machine slowed by other tenants "
          "for part of the run disturbs less; max|diff|: hetc's outputs against onnxruntime's (OpenVINO's "
          "where onnxruntime is left out)")
    if not args.records:
        return
    print(f"\nhetc from the records ({args.records}) against hetc at the templates' defaults, same rounds (ms)")
    print("  {:<13} {:>9} {:>8} {:>7}  {:>9} {:>8} {:>7}  {:>14} {:>19}".format(
        "model", "tuned p50", "p90", "spread", "dflt p50", "p90", "spread", "default/tuned", "by round (min-max)"))
    for r in rows:
        # Tuning must not make a model slower beyond the run-to-run spread.
        slower_by = r["hetc_p50_ms"] - r["hetc_default_p50_ms"]
        spread = max(r["hetc_spread_ms"], r["hetc_default_spread_ms"])
        verdict = "" if slower_by <= 0 else " (slower, within the spread)" if slower_by <= spread else " (SLOWER)"
        by_round = (f"{r['round_tuned_over_default']:.2f}x ({r['round_tuned_over_default_min']:.2f}-"
                    f"{r['round_tuned_over_default_max']:.2f})")
        print("  {:<13} {:>9.2f} {:>8.2f} {:>7.2f}  {:>9.2f} {:>8.2f} {:>7.2f}  {:>13.2f}x {:>19}{}".format(
            r["model"], r["hetc_p50_ms"], r["hetc_p90_ms"], r["hetc_spread_ms"], r["hetc_default_p50_ms"],
            r["hetc_default_p90_ms"], r["hetc_default_spread_ms"], r["tuned_over_default"], by_round, verdict))
    print("default/tuned: the default package's p50 over the tuned one's (above 1: tuning made it faster); "
          "by round: as above")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hetc", default=os.path.join(REPO, "build", "bin", "hetc"),
                        help="the hetc to benchmark (default: build/bin/hetc)")
    parser.add_argument("--models", default=DEFAULT_MODELS,
                        help="comma-separated sample names (default: %(default)s)")
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
    parser.add_argument("--work", help="where ONNX files and packages go (default: a temporary directory)")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    args.hetc = os.path.abspath(args.hetc)
    args.packages = dict(p.split("=", 1) for p in args.package)
    args.peers, left_out = installed_peers()
    if left_out:
        print(left_out, file=sys.stderr, flush=True)
    os.environ["HETC_LIB_DIR"] = os.path.join(os.path.dirname(os.path.dirname(args.hetc)), "lib")
    work = args.work or tempfile.mkdtemp(prefix="hetc-peers-")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(1)
    rows = []
    for model in args.models.split(","):
        print(f"{model}: converting, compiling and timing ...", file=sys.stderr, flush=True)
        rows.append(bench_model(args, model, work, rng))
    print_table(rows, args)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
