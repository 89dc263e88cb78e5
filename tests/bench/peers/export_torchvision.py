#!/usr/bin/env python3
"""Exports torchvision's CNNs to ONNX with seeded random weights, for
peers.py (`--onnx-dir OUTDIR`): the models users run, not hetc's samples.

Each model is built with `weights=None` (nothing is downloaded: the weights
are torchvision's own random initialisation after torch.manual_seed(0), so
a file is the same whichever models are exported with it), in eval mode,
batch 1, fp32, and written by the TorchScript exporter at opset 17 as
OUTDIR/NAME.onnx with one input "input" and one output "output". Input
224x224, except inception_v3 (299x299, as it requires); the segmentation
model deeplabv3_mobilenet_v3_large takes 224x224 too (its reference size
is 520x520; 224 keeps a benchmark round short) and only its 'out' head is
exported. A file that exists is skipped; a model that fails to export is
reported and the others go on (exit status 1 at the end).

torchvision's initialisation leaves every BatchNorm at mean 0, variance 1,
so activations drift layer after layer: untouched, efficientnet_b0's
outputs are about 1e-14 and inception_v3's about 1e12, where peers.py's
max|diff| says nothing and tiny values may fall to denormals, which some
runtimes flush and others compute slowly. So each BatchNorm's running
statistics are first set from one forward pass over a seeded random batch
of 4 (BatchNorm layers in training mode, the rest in eval: no dropout), as
a trained network's would be; the weights stay torchvision's random ones.
--plain-init skips that and exports torchvision's initialisation as is.

    export_torchvision.py OUTDIR [--models resnet50,mobilenet_v2,...] [--plain-init]

torch and torchvision come from the benchmark's own virtual environment
(export.sh makes it from requirements-torch.txt), never hetc's.
"""
import argparse
import os
import sys
import time

import torch
import torchvision

OPSET = 17
SEED = 0


class SegmentationOut(torch.nn.Module):
    """torchvision's segmentation models return a dict ('out', and 'aux'
    with aux_loss); the exporter and the benchmark want one tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def classification(name, **options):
    return lambda: getattr(torchvision.models, name)(weights=None, **options)


def deeplabv3_mobilenet_v3_large():
    # weights_backbone defaults to ImageNet weights, which would download.
    model = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False)
    return SegmentationOut(model)


# name -> (builder, input height and width)
MODELS = {
    "resnet50": (classification("resnet50"), 224),
    "mobilenet_v2": (classification("mobilenet_v2"), 224),
    "mobilenet_v3_large": (classification("mobilenet_v3_large"), 224),
    "efficientnet_b0": (classification("efficientnet_b0"), 224),
    "densenet121": (classification("densenet121"), 224),
    # Without weights torchvision asks for init_weights to be said (its
    # default is to change); the auxiliary heads only train.
    "googlenet": (classification("googlenet", aux_logits=False, init_weights=True), 224),
    "inception_v3": (classification("inception_v3", aux_logits=False, init_weights=True), 299),
    "shufflenet_v2_x1_0": (classification("shufflenet_v2_x1_0"), 224),
    "squeezenet1_1": (classification("squeezenet1_1"), 224),
    "mnasnet1_0": (classification("mnasnet1_0"), 224),
    "regnet_y_400mf": (classification("regnet_y_400mf"), 224),
    "resnext50_32x4d": (classification("resnext50_32x4d"), 224),
    "vgg16_bn": (classification("vgg16_bn"), 224),
    "deeplabv3_mobilenet_v3_large": (deeplabv3_mobilenet_v3_large, 224),
}


def calibrate_batchnorm(model, size):
    """Sets every BatchNorm's running mean and variance to those of its
    input over a random batch (see the module's doc); returns how many
    BatchNorm layers there are."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a plain average over the batches seen: here one
        norm.train()
    with torch.no_grad():
        model(torch.randn(4, 3, size, size))
    model.eval()
    return len(norms)


def export(name, path, plain_init):
    """Writes the model to `path` (through a temporary file, so that an
    interrupted export is not taken for a finished one next time) and
    returns a line describing it."""
    build, size = MODELS[name]
    torch.manual_seed(SEED)
    model = build().eval()
    norms = 0 if plain_init else calibrate_batchnorm(model, size)
    x = torch.randn(1, 3, size, size)
    partial = path + ".partial"
    with torch.no_grad():
        torch.onnx.export(model, (x,), partial, dynamo=False, opset_version=OPSET,
                          input_names=["input"], output_names=["output"])
    os.replace(partial, path)
    params = sum(p.numel() for p in model.parameters())
    with torch.no_grad():
        largest = float(model(x).abs().max())
    return (f"1x3x{size}x{size}, {params / 1e6:.1f}M parameters, {os.path.getsize(path) / 1e6:.0f} MB, "
            f"{norms} BatchNorm calibrated, outputs up to {largest:.2g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", help="where NAME.onnx files go (made if missing)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated torchvision model names (default: all %d)" % len(MODELS))
    parser.add_argument("--plain-init", action="store_true",
                        help="export torchvision's initialisation as is (BatchNorm statistics not calibrated)")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    os.makedirs(args.outdir, exist_ok=True)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, opset {OPSET}, seed {SEED}, "
          f"{'plain initialisation' if args.plain_init else 'BatchNorm calibrated'}", flush=True)
    failed = []
    for name in names:
        path = os.path.join(args.outdir, name + ".onnx")
        if os.path.exists(path):
            print(f"{name}: {path} exists, skipped", flush=True)
            continue
        started = time.monotonic()
        try:
            described = export(name, path, args.plain_init)
        except Exception as error:  # one model's failure must not stop the others
            first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
            print(f"{name}: export FAILED: {type(error).__name__}: {first_line}", flush=True)
            failed.append(name)
            continue
        print(f"{name}: wrote {path} ({described}, {time.monotonic() - started:.1f} s)", flush=True)
    if failed:
        sys.exit(f"{len(failed)} of {len(names)} failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
