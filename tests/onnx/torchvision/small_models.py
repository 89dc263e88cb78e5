"""The CI-sized torchvision corpus (make_torchvision.py --small): one reduced
instance of every distinct architecture among torchvision's classification
models and of the four segmentation models, small enough to commit
(tests/onnx/torchvision/small) and to compile in seconds.

Each is built by torchvision's own classes and builders, with their own
parameters and configurations where they have them: fewer blocks (a stage
keeps one or two, so that a stage's first block, which changes stride or
width, and a following one, with its identity shortcut, are both there
somewhere; stages that repeat a kind of block another stage has are
dropped from EfficientNet, MobileNetV3, ConvNeXt and VGG), narrower widths,
10 classes (4 for the segmentation models), and an input of 64x64 where the
architecture takes it. Where a class fixes its
widths (AlexNet, VGG's classifier, SqueezeNet, GoogLeNet, Inception v3,
ResNet's 64..512, the segmentation heads' 256 or 2048), the model is built
inside `narrowed(k)`: every Conv2d, BatchNorm2d and Linear constructed
meanwhile gets its channel counts divided by k (a depthwise convolution
keeps one group per channel), so that the graph is the full model's, op for
op, with every width k times smaller; the class's own weight initialisation
then runs on the narrowed layers.

A model is (torchvision names it stands for, input size, build function,
whether it goes through the dynamo exporter, a note for the README).
"""
import contextlib
import inspect
import os
import sys
from functools import partial

import torch
import torchvision
from torchvision.models import (convnext, densenet, efficientnet, inception, maxvit, mnasnet, mobilenetv2,
                                mobilenetv3, regnet, resnet, shufflenetv2, squeezenet, swin_transformer, vgg,
                                vision_transformer)
from torchvision.models.alexnet import AlexNet
from torchvision.models.googlenet import GoogLeNet
from torchvision.models.segmentation import deeplabv3, fcn, lraspp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "peers"))
# The 'out' head alone, as the full survey exports the segmentation models.
from export_torchvision import SegmentationOut  # noqa: E402

CLASSES = 10
SEGMENTATION_CLASSES = 4


@contextlib.contextmanager
def narrowed(factor, keep=(3,), widths=None):
    """While active, torch.nn.Conv2d, BatchNorm2d and Linear divide the
    channel counts they are built with by `factor`, except the counts in
    `keep` (the image's 3 channels, the classes) and those `widths` maps to
    a value of their own. A count that `factor` does not divide is an
    error: a concatenation or split of narrowed tensors must still add up."""
    widths = widths or {}

    def narrow(count):
        if count in keep:
            return count
        if count in widths:
            return widths[count]
        if count % factor:
            raise ValueError(f"narrowed({factor}): {count} channels are not a multiple of {factor}")
        return count // factor

    originals = {cls: cls.__init__ for cls in (torch.nn.Conv2d, torch.nn.BatchNorm2d, torch.nn.Linear)}
    signatures = {cls: inspect.signature(init) for cls, init in originals.items()}

    def conv(self, *args, **kwargs):
        bound = signatures[torch.nn.Conv2d].bind(self, *args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        groups = a["groups"]
        if groups == a["in_channels"] and groups > 1:  # depthwise: one group per channel
            a["groups"] = narrow(groups)
        a["in_channels"], a["out_channels"] = narrow(a["in_channels"]), narrow(a["out_channels"])
        originals[torch.nn.Conv2d](*bound.args, **bound.kwargs)

    def norm(self, *args, **kwargs):
        bound = signatures[torch.nn.BatchNorm2d].bind(self, *args, **kwargs)
        bound.arguments["num_features"] = narrow(bound.arguments["num_features"])
        originals[torch.nn.BatchNorm2d](*bound.args, **bound.kwargs)

    def linear(self, *args, **kwargs):
        bound = signatures[torch.nn.Linear].bind(self, *args, **kwargs)
        a = bound.arguments
        a["in_features"], a["out_features"] = narrow(a["in_features"]), narrow(a["out_features"])
        originals[torch.nn.Linear](*bound.args, **bound.kwargs)

    torch.nn.Conv2d.__init__, torch.nn.BatchNorm2d.__init__, torch.nn.Linear.__init__ = conv, norm, linear
    try:
        yield
    finally:
        for cls, init in originals.items():
            cls.__init__ = init


def built(factor, build, keep=(3, CLASSES), widths=None):
    """A build function that runs `build` inside narrowed(factor, ...)."""
    def run():
        with narrowed(factor, keep, widths):
            return build()
    return run


def cut(setting, most):
    """torchvision's stage settings (EfficientNet's MBConvConfig and
    FusedMBConvConfig) with every stage cut to at most `most` blocks."""
    for stage in setting:
        stage.num_layers = min(stage.num_layers, most)
    return setting


def chain(setting, keep):
    """torchvision's block or stage settings (MobileNetV3's
    InvertedResidualConfig, EfficientNet's MBConvConfig), only those at
    the indices `keep`, each one's input width set to the previous kept
    one's output."""
    kept = [setting[i] for i in keep]
    for previous, block in zip(kept, kept[1:]):
        block.input_channels = previous.out_channels
    return kept


def resnet_of(block, layers, **options):
    return lambda: resnet.ResNet(block, layers, num_classes=CLASSES, **options)


def segmentation_resnet(head):
    """A narrowed ResNet-50 (Bottleneck, 1-1-1-2 blocks: the dilated
    stages' blocks have dilations 1, 2 and 4) under torchvision's FCN or
    DeepLabV3 builder."""
    def build():
        backbone = resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 2], replace_stride_with_dilation=[False, True, True],
                                 num_classes=SEGMENTATION_CLASSES)  # its classifier is dropped
        return SegmentationOut(head(backbone, SEGMENTATION_CLASSES, False))
    return built(32, build, keep=(3, SEGMENTATION_CLASSES))


# MobileNetV3-Large with one block of each kind: the stride-1 identity
# block, the stride-2 stage starts C1..C4 (which the segmentation models
# find their features by) with ReLU, ReLU and SE, hard-swish, hard-swish
# and SE, a hard-swish residual block and the last stage's residual SE one.
LARGE_BLOCKS = (0, 1, 3, 6, 7, 12, 13)
# MobileNetV3-Small's stride-2 stage starts (with SE and ReLU, ReLU,
# hard-swish and SE, hard-swish and SE) and a residual block after three.
SMALL_BLOCKS = (0, 1, 2, 3, 4, 8, 9)


def segmentation_mobilenet(head):
    def build():
        setting, last_channel = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_large", dilated=True)
        backbone = mobilenetv3.MobileNetV3(chain(setting, LARGE_BLOCKS), last_channel,
                                           num_classes=SEGMENTATION_CLASSES)  # its classifier is dropped
        return SegmentationOut(head(backbone, SEGMENTATION_CLASSES))
    # DeepLabV3's ASPP head (256 wide, 1280 where its 5 branches meet) 32x
    # narrower: its atrous 3x3 convolutions would be most of the file.
    return built(8, build, keep=(3, SEGMENTATION_CLASSES), widths={256: 8, 1280: 40})


def deeplabv3_mobilenet(backbone, classes):
    return deeplabv3._deeplabv3_mobilenetv3(backbone, classes, False)


def mobilenet_v3(arch, blocks):
    def build():
        setting, last_channel = mobilenetv3._mobilenet_v3_conf(arch, width_mult=0.125)
        return mobilenetv3._mobilenet_v3(chain(setting, blocks), last_channel, None, False, num_classes=CLASSES)
    return build


def efficientnet_v1():
    # B0's stages 1 (no expansion), 2 and 3 (3x3 and 5x5, each with its
    # residual block) and 7.
    setting, last_channel = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.125, depth_mult=1.0)
    return efficientnet._efficientnet(chain(cut(setting, 2), (0, 1, 2, 6)), 0.2, last_channel, None, False,
                                      num_classes=CLASSES)


def efficientnet_v2():
    # V2-S's stages 1 and 2 (FusedMBConv without and with expansion) and 4
    # (MBConv), two blocks each: the second with its residual.
    setting, last_channel = efficientnet._efficientnet_conf("efficientnet_v2_s")
    return efficientnet._efficientnet(chain(cut(setting, 2), (0, 1, 3)), 0.2, last_channel, None, False,
                                      norm_layer=partial(torch.nn.BatchNorm2d, eps=1e-03), num_classes=CLASSES)


def regnet_of(se_ratio):
    def build():
        params = regnet.BlockParams.from_init_params(depth=6, w_0=8, w_a=8.0, w_m=2.0, group_width=4,
                                                     se_ratio=se_ratio)
        return regnet._regnet(params, None, False, stem_width=16, num_classes=CLASSES)
    return build


def convnext_small():
    setting = [convnext.CNBlockConfig(16, 32, 2), convnext.CNBlockConfig(32, None, 1)]
    # layer_scale 1 rather than torchvision's 1e-6: with 1e-6 every block's
    # branch is all but skipped, and an error in it would hide under 1e-4.
    return convnext._convnext(setting, 0.0, None, False, layer_scale=1.0, num_classes=CLASSES)


def vgg_of(batch_norm):
    # VGG-11's first four stages (VGG's classifier wants a 7x7 map: 112 / 16).
    cfg = [64, "M", 128, "M", 256, 256, "M", 512, 512, "M"]
    return built(16, lambda: vgg.VGG(vgg.make_layers(cfg, batch_norm), num_classes=CLASSES),
                 widths={4096: 16})


MODELS = {
    "alexnet": (["alexnet"], 224,
                built(16, lambda: AlexNet(num_classes=CLASSES), widths={4096: 32}), False,
                "narrowed 16x (classifier 32 wide); 224x224, which its 6x6 average pool needs"),
    "vgg": (["vgg11", "vgg13", "vgg16", "vgg19"], 112, vgg_of(False), False,
            "VGG-11's first four stages narrowed 16x (classifier 16 wide)"),
    "vgg_bn": (["vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn"], 112, vgg_of(True), False,
               "the same with BatchNorm"),
    "squeezenet1_0": (["squeezenet1_0"], 64, built(8, lambda: squeezenet.SqueezeNet("1_0", CLASSES)), False,
                      "narrowed 8x"),
    "squeezenet1_1": (["squeezenet1_1"], 64, built(8, lambda: squeezenet.SqueezeNet("1_1", CLASSES)), False,
                      "narrowed 8x"),
    "googlenet": (["googlenet"], 64,
                  built(16, lambda: GoogLeNet(CLASSES, aux_logits=False, init_weights=True), widths={24: 2}), False,
                  "narrowed 16x (its 24-wide reductions to 2), without the auxiliary heads"),
    "inception_v3": (["inception_v3"], 75,
                     built(16, lambda: inception.Inception3(CLASSES, aux_logits=False, init_weights=True)), False,
                     "narrowed 16x, without the auxiliary head; 75x75, its smallest input"),
    "resnet_basic": (["resnet18", "resnet34"], 64, built(16, resnet_of(resnet.BasicBlock, [2, 1, 1, 1])), False,
                     "BasicBlock, 2-1-1-1 blocks, narrowed 16x"),
    "resnet_bottleneck": (["resnet50", "resnet101", "resnet152"], 64,
                          built(16, resnet_of(resnet.Bottleneck, [2, 1, 1, 1])), False,
                          "Bottleneck, 2-1-1-1 blocks, narrowed 16x"),
    "resnext": (["resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d"], 64,
                built(16, resnet_of(resnet.Bottleneck, [2, 1, 1, 1], groups=4, width_per_group=32)), False,
                "Bottleneck with 4 groups (of 2 to 16 channels), 2-1-1-1 blocks, narrowed 16x"),
    "wide_resnet": (["wide_resnet50_2", "wide_resnet101_2"], 64,
                    built(32, resnet_of(resnet.Bottleneck, [2, 1, 1, 1], width_per_group=128)), False,
                    "Bottleneck twice as wide inside, 2-1-1-1 blocks, narrowed 32x"),
    "densenet": (["densenet121", "densenet161", "densenet169", "densenet201"], 64,
                 lambda: densenet.DenseNet(growth_rate=8, block_config=(2, 1, 1, 1), num_init_features=16,
                                           num_classes=CLASSES), False,
                 "growth rate 8, dense blocks of 2-1-1-1 layers, 16 initial features"),
    "efficientnet": ([f"efficientnet_b{i}" for i in range(8)], 64, efficientnet_v1, False,
                     "B0's stages 1, 2, 3 and 7 at width 0.125, two blocks at most (MBConv, SE, SiLU)"),
    "efficientnet_v2": (["efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"], 64,
                        built(4, efficientnet_v2), False,
                        "V2-S's stages 1, 2 and 4, two blocks each, narrowed 4x (FusedMBConv, MBConv)"),
    "mobilenet_v2": (["mobilenet_v2"], 64,
                     built(8, lambda: mobilenetv2.MobileNetV2(CLASSES, inverted_residual_setting=[
                         [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 1, 2], [6, 64, 1, 2], [6, 96, 2, 1],
                         [6, 160, 1, 2], [6, 320, 1, 1]])), False,
                     "one or two blocks a stage, narrowed 8x"),
    "mobilenet_v3_large": (["mobilenet_v3_large"], 64, mobilenet_v3("mobilenet_v3_large", LARGE_BLOCKS), False,
                           "7 of its 15 blocks, one of each kind, at width 0.125"),
    "mobilenet_v3_small": (["mobilenet_v3_small"], 64, mobilenet_v3("mobilenet_v3_small", SMALL_BLOCKS), False,
                           "7 of its 11 blocks at width 0.125"),
    "mnasnet": (["mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3"], 64,
                built(8, lambda: mnasnet.MNASNet(0.5, CLASSES)), False, "alpha 0.5, narrowed 8x"),
    "regnet_x": ([n for n in torchvision.models.list_models(module=torchvision.models) if n.startswith("regnet_x")],
                 64, regnet_of(None), False, "four stages of 1-1-3-1 blocks, widths 8 to 64 (groups of 4 channels)"),
    "regnet_y": ([n for n in torchvision.models.list_models(module=torchvision.models) if n.startswith("regnet_y")],
                 64, regnet_of(0.25), False, "the same with squeeze-and-excitation"),
    "shufflenet_v2": (["shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"], 64,
                      lambda: shufflenetv2.ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], CLASSES), False,
                      "two blocks a stage, widths 8 to 128"),
    "convnext": (["convnext_tiny", "convnext_small", "convnext_base", "convnext_large"], 64, convnext_small, False,
                 "two stages (widths 16 and 32; 2 and 1 blocks), layer scale 1"),
    "vit": (["vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14"], 32,
            lambda: vision_transformer._vision_transformer(8, 2, 2, 16, 32, None, False, image_size=32,
                                                           num_classes=CLASSES), True,
            "patch 8, 2 layers, 2 heads, width 16"),
    "swin": (["swin_t", "swin_s", "swin_b"], 64,
             lambda: swin_transformer._swin_transformer([4, 4], 4, [2, 2, 1, 1], [1, 1, 2, 2], [4, 4], 0.0, None,
                                                        False, num_classes=CLASSES), True,
             "width 4 to 32, 2-2-1-1 blocks (the second of two shifted), window 4"),
    "swin_v2": (["swin_v2_t", "swin_v2_s", "swin_v2_b"], 64,
                # The position-bias MLP 16 wide, not 512: the exporter folds
                # its first layer into a (2 x window - 1)^2 x 512 constant.
                built(1, lambda: swin_transformer._swin_transformer(
                    [4, 4], 4, [2, 2, 1, 1], [1, 1, 2, 2], [4, 4], 0.0, None, False, num_classes=CLASSES,
                    block=swin_transformer.SwinTransformerBlockV2,
                    downsample_layer=swin_transformer.PatchMergingV2), widths={512: 16}), True,
                "the same with V2's blocks and patch merging, its position-bias MLP 16 wide"),
    "maxvit": (["maxvit_t"], 64,
               lambda: maxvit._maxvit(stem_channels=8, block_channels=[8, 8, 16, 16], block_layers=[1, 1, 1, 1],
                                      stochastic_depth_prob=0.0, partition_size=2, head_dim=8, input_size=(64, 64),
                                      num_classes=CLASSES), True,
               "widths 8 to 16, one block a stage, partition 2"),
    "fcn_resnet": (["fcn_resnet50"], 64, segmentation_resnet(fcn._fcn_resnet), False,
                   "dilated ResNet-50 (1-1-1-2 blocks) and FCN head, narrowed 32x, 4 classes"),
    "deeplabv3_resnet": (["deeplabv3_resnet50"], 64, segmentation_resnet(deeplabv3._deeplabv3_resnet), False,
                         "dilated ResNet-50 (1-1-1-2 blocks) and ASPP head, narrowed 32x, 4 classes"),
    "deeplabv3_mobilenet_v3": (["deeplabv3_mobilenet_v3_large"], 64, segmentation_mobilenet(deeplabv3_mobilenet),
                               False, "dilated MobileNetV3-Large (7 blocks) narrowed 8x and ASPP head 32x, 4 classes"),
    "lraspp_mobilenet_v3": (["lraspp_mobilenet_v3_large"], 64, segmentation_mobilenet(lraspp._lraspp_mobilenetv3),
                            False, "dilated MobileNetV3-Large (7 blocks) and LR-ASPP head, narrowed 8x, 4 classes"),
}
