#!/usr/bin/env python3
"""Issue 33's torchvision survey: exports every torchvision classification
model and four segmentation models to ONNX, each with a seeded input and
onnxruntime's output on it, for check_torchvision.sh to hold hetc to.

    make_torchvision.py [OUTDIR] [--models a,b,...] [--exporter auto|torchscript|dynamo] [--list]

OUTDIR (default build/tv-corpus) gets, per model NAME:
  NAME.onnx           the model (NAME.onnx.data beside it when its weights
                      pass protobuf's 2 GB: hetc reads external data)
  NAME.input.bin      its input, 1x3xHxW float32 little-endian, row-major
  NAME.expected.bin   onnxruntime's output on it (CPUExecutionProvider,
                      graph optimizations off, one thread), the same format
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


def write_onnx(scratch, exported, path, name):
    """Re-saves the exporter's file(s) `exported` (in the folder `scratch`)
    as `path`: one file, or, when they come near protobuf's 2 GB limit,
    `path` and its weights in NAME.onnx.data."""
    written = sum(os.path.getsize(os.path.join(scratch, f)) for f in os.listdir(scratch))
    model = onnx.load(exported)  # external data beside it is read in
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


def export_file(model, x, path, name, dynamo):
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
        write_onnx(scratch, exported, path, name)
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


def build_model(name):
    """The model as the survey exports it and its input: (model, x, how
    many zeroed layers were reinitialised, how many BatchNorm layers were
    calibrated)."""
    size = SIZES.get(name, 224)
    torch.manual_seed(SEED)
    model = builder(name)().eval()
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


def export(name, outdir, exporter):
    """Writes the model's three files (the .bin files last, through
    temporary names, so that an interrupted export is redone next time) and
    returns a line describing it."""
    model, x, zeroed, norms = build_model(name)
    size = x.shape[-1]
    path = os.path.join(outdir, name + ".onnx")
    dynamo = exporter == "dynamo" or (exporter == "auto" and name.startswith(DYNAMO_PREFIXES))
    how = export_file(model, x, path, name, dynamo)
    dynamo = how.startswith("dynamo")
    with torch.no_grad():
        reference = model(x).numpy()
    x = x.numpy()
    expected = onnxruntime_output(path, x)
    # The exporter's fidelity, for the record: torch against onnxruntime.
    scale = float(np.abs(expected).max()) or 1.0
    torch_vs_ort = float(np.abs(reference - expected).max()) / scale
    for suffix, array in (("input", x), ("expected", expected)):
        partial = os.path.join(outdir, f"{name}.{suffix}.bin.partial")
        np.ascontiguousarray(array, dtype="<f4").tofile(partial)
        os.replace(partial, os.path.join(outdir, f"{name}.{suffix}.bin"))
    params = sum(p.numel() for p in model.parameters())
    on_disk = sum(os.path.getsize(os.path.join(outdir, f)) for f in (name + ".onnx", name + ".onnx.data")
                  if os.path.exists(os.path.join(outdir, f)))
    return (f"{how}, opset {DYNAMO_OPSET if dynamo else OPSET}, 1x3x{size}x{size} -> "
            f"{'x'.join(map(str, expected.shape))}, {params / 1e6:.1f}M parameters, {on_disk / 1e6:.0f} MB, "
            f"{norms} BatchNorm calibrated, {zeroed} zeroed layers reinitialised, outputs up to {scale:.3g}, "
            f"torch vs onnxruntime {torch_vs_ort:.1e}")


def all_models():
    return list(torchvision.models.list_models(module=torchvision.models)) + list(SEGMENTATION)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", nargs="?", default=os.path.join(REPO, "build", "tv-corpus"),
                        help="where the files go (made if missing; default build/tv-corpus)")
    parser.add_argument("--models", help="comma-separated names (default: every model, smallest first)")
    parser.add_argument("--exporter", choices=("auto", "torchscript", "dynamo"), default="auto",
                        help="auto (default): dynamo for the ViT family, TorchScript for the rest; torchscript: "
                        "TorchScript for every model (dynamo where it fails); dynamo: dynamo for every model")
    parser.add_argument("--list", action="store_true", help="print the models, smallest first, and exit")
    args = parser.parse_args()
    known = all_models()
    if args.models:
        names = [n for n in args.models.split(",") if n]
        unknown = [n for n in names if n not in known]
        if unknown:
            parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(known)}")
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
    for name in names:
        files = [os.path.join(args.outdir, name + suffix) for suffix in (".onnx", ".input.bin", ".expected.bin")]
        if all(os.path.exists(f) for f in files):
            print(f"{name}: exists, skipped", flush=True)
            continue
        started = time.monotonic()
        try:
            described = export(name, args.outdir, args.exporter)
        except Exception as error:  # one model's failure must not stop the others
            first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
            print(f"{name}: FAILED: {type(error).__name__}: {first_line}", flush=True)
            for f in files[:1] + [files[0] + ".data"]:
                if os.path.exists(f):
                    os.remove(f)
            failed.append(name)
            continue
        print(f"{name}: {described} ({time.monotonic() - started:.0f} s)", flush=True)
    if failed:
        sys.exit(f"{len(failed)} of {len(names)} failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
