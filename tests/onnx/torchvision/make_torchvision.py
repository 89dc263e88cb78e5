#!/usr/bin/env python3
"""Issue 33's torchvision survey: exports every torchvision classification
model and four segmentation models to ONNX, each with a seeded input and
onnxruntime's output on it, for check_torchvision.sh to hold hetc to.

    make_torchvision.py [OUTDIR] [--models a,b,...] [--exporter auto|torchscript|dynamo] [--list]
    make_torchvision.py --small [OUTDIR] [--models a,b,...] [--list]

OUTDIR (default build/tv-corpus) gets, per model NAME:
  NAME.onnx           the model (NAME.onnx.data beside it when its weights
                      pass protobuf's 2 GB: hetc reads external data)
  NAME.input.bin      its input, 1x3xHxW float32 little-endian, row-major
  NAME.expected.bin   onnxruntime's output on it (CPUExecutionProvider,
                      graph optimizations off, one thread), the same format
  NAME.noise          torch's output against onnxruntime's (the largest
                      difference over the largest |onnxruntime|), one
                      number: the comparison's noise floor, from which
                      check_torchvision.sh sets the model's tolerance
A model whose three files exist is skipped; one that fails is reported and
the others go on (exit status 1 at the end).

The models: torchvision.models.list_models(module=torchvision.models), the
classification networks, and fcn_resnet50, deeplabv3_resnet50,
deeplabv3_mobilenet_v3_large and lraspp_mobilenet_v3_large, whose 'out'
head only is exported. Each is built with weights=None (nothing is
downloaded) after torch.manual_seed(0), its BatchNorm statistics set from a
random batch as tests/bench/peers/export_torchvision.py sets them (a
trained network's activations, not torchvision's drifting initialisation),
in eval mode, batch 1, fp32. A Linear or Conv2d layer whose weights
torchvision initialises to zeros (ViT's classifier: every output would be
0) gets PyTorch's default initialisation instead. Input 224x224, except inception_v3 (299x299);
the segmentation models at 224x224 too, to keep the survey short.

The TorchScript exporter (dynamo=False) at opset 17 writes every model but
the ViT family (vit_*, swin_*, maxvit_*), which it cannot trace as ONNX
wants and which torch.onnx.export(dynamo=True) writes at opset 18 (the
dynamo exporter's own opset: asking it for 17 runs a version converter
over its graph); a model the TorchScript exporter fails on is retried with
dynamo=True, and its line says so. (Only ViT fails with it: Swin and MaxViT
export through TorchScript too, as a graph of other ops; --exporter
torchscript writes them that way, --exporter dynamo every model through
dynamo, each best into an OUTDIR of its own.) Models are exported smallest first
(parameters counted on the meta device, nothing allocated), so that the
largest come last.

With --small, the models are instead the CI-sized corpus of
small_models.py: one reduced instance of every distinct architecture
(default OUTDIR tests/onnx/torchvision/small, where they are committed),
exported the same way, and OUTDIR/small.tsv, the manifest
test_torchvision_small reads: the generator writes each model's input
shape, the torchvision models it stands for and torch's error against
onnxruntime, and keeps the columns TARGETS, RTOL and EXPECT of the lines
already there (which are edited by hand). Every model torchvision lists
must be stood for by one small model, else the generator stops.

torch, torchvision, onnx, onnxruntime and onnxscript come from the torch
exporter's virtual environment (make_torchvision.sh), never hetc's.
"""
import argparse
import contextlib
import os
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "bench", "peers"))
# The benchmark's exporter: the same BatchNorm calibration and 'out' head.
from export_torchvision import SegmentationOut, calibrate_batchnorm  # noqa: E402

OPSET = 17
DYNAMO_OPSET = 18
SEED = 0
INPUT_SEED = 1
DYNAMO_PREFIXES = ("vit_", "swin_", "maxvit_")
SEGMENTATION = ("fcn_resnet50", "deeplabv3_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large")
# Without weights torchvision asks for init_weights to be said (its default
# is to change); the auxiliary heads only train.
OPTIONS = {
    "googlenet": dict(aux_logits=False, init_weights=True),
    "inception_v3": dict(aux_logits=False, init_weights=True),
}
SIZES = {"inception_v3": 299}
# Past this many bytes of exported files, weights go to NAME.onnx.data
# (protobuf cannot serialise a message of 2 GiB).
SINGLE_FILE_LIMIT = 1_900_000_000


def builder(name):
    if name in SEGMENTATION:
        # weights_backbone defaults to ImageNet weights, which would download.
        build = getattr(torchvision.models.segmentation, name)
        return lambda: SegmentationOut(build(weights=None, weights_backbone=None, aux_loss=False))
    return lambda: torchvision.models.get_model(name, weights=None, **OPTIONS.get(name, {}))


def parameter_count(name):
    """Parameters of the model built on the meta device (no memory, no
    initialisation), or, for a model that cannot be built there (RegNet
    computes its widths with tensors), on the CPU; None when it cannot be
    built at all (its export will say why)."""
    for device in ("meta", "cpu"):
        try:
            with torch.device(device):
                model = builder(name)()
            return sum(p.numel() for p in model.parameters())
        except Exception:
            continue
    return None


def write_onnx(scratch, exported, path, name, strip):
    """Re-saves the exporter's file(s) `exported` (in the folder `scratch`)
    as `path`: one file, or, when they come near protobuf's 2 GB limit,
    `path` and its weights in NAME.onnx.data. With `strip`, without the
    nodes' metadata (the dynamo exporter's stack traces: most of a small
    model's file)."""
    written = sum(os.path.getsize(os.path.join(scratch, f)) for f in os.listdir(scratch))
    model = onnx.load(exported)  # external data beside it is read in
    if strip:
        for node in model.graph.node:
            del node.metadata_props[:]
    data = os.path.join(os.path.dirname(path), name + ".onnx.data")
    if os.path.exists(data):
        os.remove(data)
    if written < SINGLE_FILE_LIMIT:
        onnx.save_model(model, path)
    else:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(data), size_threshold=1024)


@contextlib.contextmanager
def output_to(path):
    """Sends file descriptors 1 and 2 to `path` meanwhile: the TorchScript
    exporter prints the whole graph (hundreds of lines) when it fails."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(path, "wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip((1, 2), saved):
                os.dup2(copy, fd)
                os.close(copy)


def export_file(model, x, path, name, dynamo, strip):
    """Runs the exporter into a folder of its own (the TorchScript exporter
    writes a large model's weights as one file per tensor), then saves the
    result as `path`. Returns how the model was exported: a model the
    TorchScript exporter fails on is retried with dynamo=True."""
    how = "dynamo" if dynamo else "torchscript"
    with tempfile.TemporaryDirectory(dir=os.path.dirname(path), prefix=name + ".export.") as scratch:
        exported = os.path.join(scratch, name + ".onnx")
        with torch.no_grad():
            if not dynamo:
                try:
                    with output_to(os.path.join(scratch, "output")):
                        torch.onnx.export(model, (x,), exported, dynamo=False, opset_version=OPSET,
                                          input_names=["input"], output_names=["output"])
                except Exception as error:
                    first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
                    how = f"dynamo (the TorchScript exporter failed: {type(error).__name__}: {first_line[:200]})"
                    dynamo = True
                    for f in os.listdir(scratch):
                        if f != "output":
                            os.remove(os.path.join(scratch, f))
            if dynamo:
                torch.onnx.export(model, (x,), exported, dynamo=True, opset_version=DYNAMO_OPSET,
                                  input_names=["input"], output_names=["output"], external_data=True,
                                  verbose=False)
        write_onnx(scratch, exported, path, name, strip)
    return how


def onnxruntime_output(path, x):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    inputs = session.get_inputs()
    if len(inputs) != 1 or len(session.get_outputs()) != 1:
        raise RuntimeError(f"{len(inputs)} inputs and {len(session.get_outputs())} outputs; the survey wants one each")
    return session.run(None, {inputs[0].name: x})[0]


def build_model(build, size):
    """The model `build` returns, as the survey exports it, and its input:
    (model, x, how many zeroed layers were reinitialised, how many
    BatchNorm layers were calibrated)."""
    torch.manual_seed(SEED)
    model = build().eval()
    # ViT zeroes its classifier (a fine-tuning convention): left so, every
    # output is 0 and any result would match it. Such layers get PyTorch's
    # default initialisation instead.
    zeroed = [m for m in model.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))
              and not m.weight.detach().any()]
    for m in zeroed:
        m.reset_parameters()
    has_norms = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())
    norms = calibrate_batchnorm(model, size) if has_norms else 0
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(INPUT_SEED))
    return model, x, len(zeroed), norms


def export(name, build, size, dynamo, outdir, exporter, small=False):
    """Writes the model's three files (the .bin files last, through
    temporary names, so that an interrupted export is redone next time) and
    returns a line describing it and torch's error against onnxruntime.
    `dynamo`: whether exporter "auto" takes the dynamo exporter for it;
    `small`: a model of the CI-sized corpus (its file stripped, its size
    in kB)."""
    model, x, zeroed, norms = build_model(build, size)
    path = os.path.join(outdir, name + ".onnx")
    dynamo = exporter == "dynamo" or (exporter == "auto" and dynamo)
    how = export_file(model, x, path, name, dynamo, small)
    dynamo = how.startswith("dynamo")
    with torch.no_grad():
        reference = model(x).numpy()
    x = x.numpy()
    expected = onnxruntime_output(path, x)
    # The exporter's fidelity, for the record: torch against onnxruntime.
    scale = float(np.abs(expected).max()) or 1.0
    torch_vs_ort = float(np.abs(reference - expected).max()) / scale
    if not small:
        with open(os.path.join(outdir, name + ".noise"), "w") as f:
            f.write(f"{torch_vs_ort:.3e}\n")
    for suffix, array in (("input", x), ("expected", expected)):
        partial = os.path.join(outdir, f"{name}.{suffix}.bin.partial")
        np.ascontiguousarray(array, dtype="<f4").tofile(partial)
        os.replace(partial, os.path.join(outdir, f"{name}.{suffix}.bin"))
    params = sum(p.numel() for p in model.parameters())
    on_disk = sum(os.path.getsize(os.path.join(outdir, f)) for f in (name + ".onnx", name + ".onnx.data")
                  if os.path.exists(os.path.join(outdir, f)))
    amounts = (f"{params / 1e3:.0f}k parameters, {on_disk / 1e3:.0f} kB" if small else
               f"{params / 1e6:.1f}M parameters, {on_disk / 1e6:.0f} MB")
    return (f"{how}, opset {DYNAMO_OPSET if dynamo else OPSET}, 1x3x{size}x{size} -> "
            f"{'x'.join(map(str, expected.shape))}, {amounts}, "
            f"{norms} BatchNorm calibrated, {zeroed} zeroed layers reinitialised, outputs up to {scale:.3g}, "
            f"torch vs onnxruntime {torch_vs_ort:.1e}"), torch_vs_ort


def all_models():
    return list(torchvision.models.list_models(module=torchvision.models)) + list(SEGMENTATION)


MANIFEST_HEADER = """\
# The CI-sized torchvision corpus (issue 33): one reduced instance of each distinct architecture.
# Written by tests/onnx/torchvision/make_torchvision.py --small, which keeps the columns TARGETS,
# RTOL and EXPECT of the lines already here: edit those by hand, the others are the generator's.
# One model a line, tab-separated:
#   NAME        the files NAME.onnx, NAME.input.bin and NAME.expected.bin (onnxruntime's output)
#   INPUT       the shape of NAME.input.bin (float32, little-endian, row-major), the input "input"
#   TARGETS     the targets test_torchvision_small holds the model to onnxruntime on
#   RTOL        the largest |hetc - onnxruntime| allowed, over the largest |onnxruntime|
#   TORCH       torch against onnxruntime in the same measure when exported: the noise floor
#   STANDS_FOR  the torchvision models it stands for (tests/onnx/torchvision/README.md says how)
#   EXPECT      match; match: WHY (why RTOL is above 1e-4); refused: MESSAGE (hetc's exact
#               message, the import must fail with it); fails: NOTE (a known failure: it must
#               import and must not match, so that the day it matches the test says so)
"""
MANIFEST_DEFAULTS = ("cpu,vec", "1e-4", "match")


def small_models():
    """small_models.MODELS, after checking that every model the survey
    knows is stood for by exactly one of them."""
    import small_models as small
    stood_for = [n for entry in small.MODELS.values() for n in entry[0]]
    missing = sorted(set(all_models()) - set(stood_for))
    unknown = sorted(set(stood_for) - set(all_models()))
    twice = sorted({n for n in stood_for if stood_for.count(n) > 1})
    if missing or unknown or twice:
        sys.exit(f"small_models.py: not stood for: {', '.join(missing) or 'none'}; not torchvision's: "
                 f"{', '.join(unknown) or 'none'}; stood for twice: {', '.join(twice) or 'none'}")
    return small.MODELS


def write_manifest(outdir, models, noise):
    """OUTDIR/small.tsv for `models` (small_models.MODELS), keeping the
    hand-edited columns of the lines already there; `noise`: torch against
    onnxruntime of the models exported now (the others keep theirs)."""
    path = os.path.join(outdir, "small.tsv")
    kept = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                fields = line.rstrip("\n").split("\t")
                kept[fields[0]] = fields
    lines = [MANIFEST_HEADER.rstrip("\n"), "#NAME\tINPUT\tTARGETS\tRTOL\tTORCH\tSTANDS_FOR\tEXPECT"]
    for name, (stands_for, size, _, _, _) in models.items():
        old = kept.get(name)
        targets, rtol, expect = (old[2], old[3], old[6]) if old else MANIFEST_DEFAULTS
        torch_error = f"{noise[name]:.1e}" if name in noise else (old[4] if old else "-")
        lines.append("\t".join([name, f"1x3x{size}x{size}", targets, rtol, torch_error, ",".join(stands_for), expect]))
    partial = path + ".partial"
    with open(partial, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(partial, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", nargs="?",
                        help="where the files go (made if missing; default build/tv-corpus, with --small "
                        "tests/onnx/torchvision/small)")
    parser.add_argument("--small", action="store_true",
                        help="the CI-sized corpus of small_models.py and its manifest small.tsv")
    parser.add_argument("--models", help="comma-separated names (default: every model, smallest first)")
    parser.add_argument("--exporter", choices=("auto", "torchscript", "dynamo"), default="auto",
                        help="auto (default): dynamo for the ViT family, TorchScript for the rest; torchscript: "
                        "TorchScript for every model (dynamo where it fails); dynamo: dynamo for every model")
    parser.add_argument("--list", action="store_true", help="print the models, smallest first, and exit")
    args = parser.parse_args()
    if args.small:
        small = small_models()
        known = list(small)
        args.outdir = args.outdir or os.path.join(HERE, "small")
    else:
        known = all_models()
        args.outdir = args.outdir or os.path.join(REPO, "build", "tv-corpus")
    if args.models:
        names = [n for n in args.models.split(",") if n]
        unknown = [n for n in names if n not in known]
        if unknown:
            parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(known)}")
    elif args.small:
        names = known
    else:
        counts = {n: parameter_count(n) for n in known}
        names = sorted(known, key=lambda n: (counts[n] is None, counts[n] or 0, n))
    if args.list:
        for n in names:
            print(n)
        return
    os.makedirs(args.outdir, exist_ok=True)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, onnx {onnx.__version__}, "
          f"onnxruntime {ort.__version__}, {len(names)} models, seed {SEED}", flush=True)
    failed = []
    noise = {}
    for name in names:
        files = [os.path.join(args.outdir, name + suffix) for suffix in (".onnx", ".input.bin", ".expected.bin")]
        if all(os.path.exists(f) for f in files):
            print(f"{name}: exists, skipped", flush=True)
            continue
        started = time.monotonic()
        if args.small:
            _, size, build, dynamo, _ = small[name]
        else:
            build, size, dynamo = builder(name), SIZES.get(name, 224), name.startswith(DYNAMO_PREFIXES)
        try:
            described, noise[name] = export(name, build, size, dynamo, args.outdir, args.exporter,
                                              args.small)
        except Exception as error:  # one model's failure must not stop the others
            first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
            print(f"{name}: FAILED: {type(error).__name__}: {first_line}", flush=True)
            for f in files[:1] + [files[0] + ".data"]:
                if os.path.exists(f):
                    os.remove(f)
            failed.append(name)
            continue
        print(f"{name}: {described} ({time.monotonic() - started:.0f} s)", flush=True)
    if args.small:
        write_manifest(args.outdir, small, noise)
    if failed:
        sys.exit(f"{len(failed)} of {len(names)} failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
