"""torchvision-style architectures at their usual resolutions, for the memory benchmark.

Layer for layer as torchvision builds them (eval mode: dropout and stochastic depth are
identities, no auxiliary heads), random weights; the shapes, not the accuracy, are what
matter here. Each function returns an onnx.ModelProto. The segmentation models put the
LR-ASPP and DeepLabV3 heads on a MobileNetV3-Large backbone (dilated last stage, output
stride 16) with 21 classes, as torchvision's ``*_mobilenet_v3_large`` do.
"""

from __future__ import annotations

import onnx

from tools.zoo.builder import OPSET, NetBuilder


def _divisible(v: float, divisor: int = 8) -> int:
    """torchvision's _make_divisible: round to a multiple of 8, never 10% below ``v``."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def _se(b: NetBuilder, x: str, c: int, squeeze: int, act: str, gate: str) -> str:
    s = b.gap(x)
    s = b.act(b.conv(s, c, squeeze, 1, bias=True), act)
    s = b.act(b.conv(s, squeeze, c, 1, bias=True), gate)
    return b.mul(x, s)


def _classifier(b: NetBuilder, x: str, cin: int, classes: int = 1000) -> dict[str, list[int]]:
    return {b.gemm(x, cin, classes): [1, classes]}


# --- MobileNetV3 ---------------------------------------------------------------------

# kernel, expanded, out, squeeze-excite, activation, stride, dilation
V3_SMALL = [(3, 16, 16, True, "relu", 2, 1), (3, 72, 24, False, "relu", 2, 1),
            (3, 88, 24, False, "relu", 1, 1), (5, 96, 40, True, "hardswish", 2, 1),
            (5, 240, 40, True, "hardswish", 1, 1), (5, 240, 40, True, "hardswish", 1, 1),
            (5, 120, 48, True, "hardswish", 1, 1), (5, 144, 48, True, "hardswish", 1, 1),
            (5, 288, 96, True, "hardswish", 2, 1), (5, 576, 96, True, "hardswish", 1, 1),
            (5, 576, 96, True, "hardswish", 1, 1)]
V3_LARGE_DILATED = [
    (3, 16, 16, False, "relu", 1, 1), (3, 64, 24, False, "relu", 2, 1),
    (3, 72, 24, False, "relu", 1, 1), (5, 72, 40, True, "relu", 2, 1),
    (5, 120, 40, True, "relu", 1, 1), (5, 120, 40, True, "relu", 1, 1),
    (3, 240, 80, False, "hardswish", 2, 1), (3, 200, 80, False, "hardswish", 1, 1),
    (3, 184, 80, False, "hardswish", 1, 1), (3, 184, 80, False, "hardswish", 1, 1),
    (3, 480, 112, True, "hardswish", 1, 1), (3, 672, 112, True, "hardswish", 1, 1),
    (5, 672, 160, True, "hardswish", 1, 2), (5, 960, 160, True, "hardswish", 1, 2),
    (5, 960, 160, True, "hardswish", 1, 2)]


def _mobilenet_v3(b: NetBuilder, x: str, blocks: list) -> tuple[list[tuple[str, int]], int]:
    """The feature extractor: every block's (output, channels), and the last conv's width."""
    x = b.conv_bn(x, 3, 16, 3, 2, act="hardswish")
    cin, features = 16, []
    for k, hidden, cout, se, act, stride, dilation in blocks:
        y = b.conv_bn(x, cin, hidden, 1, act=act) if hidden != cin else x
        y = b.conv_bn(y, hidden, hidden, k, stride, group=hidden, act=act,
                     dilation=dilation)
        if se:
            y = _se(b, y, hidden, _divisible(hidden // 4), "relu", "hardsigmoid")
        y = b.conv_bn(y, hidden, cout, 1, act=None)
        x = b.add(y, x) if stride == 1 and cin == cout else y
        features.append((x, cout))
        cin = cout
    last = 6 * cin
    features.append((b.conv_bn(x, cin, last, 1, act="hardswish"), last))
    return features, last


def mobilenet_v3_small(opset: int = OPSET) -> onnx.ModelProto:
    b = NetBuilder("mobilenet_v3_small", seed=21, opset=opset)
    features, c = _mobilenet_v3(b, b.input("input", [1, 3, 224, 224]), V3_SMALL)
    x = b.flatten(b.gap(features[-1][0]))
    x = b.act(b.gemm(x, c, 1024), "hardswish")
    return b.build(_classifier(b, x, 1024))


def lraspp(opset: int = OPSET) -> onnx.ModelProto:
    """LR-ASPP: the stride-16 features gated by their global average, upsampled onto the
    stride-8 features, two 1x1 classifiers summed, upsampled to the input."""
    b = NetBuilder("lraspp", seed=22, opset=opset)
    features, c = _mobilenet_v3(b, b.input("input", [1, 3, 224, 224]), V3_LARGE_DILATED)
    low, low_c = features[5]  # stride 8, 40 channels
    high = features[-1][0]
    x = b.conv_bn(high, c, 128, 1)
    s = b.act(b.conv(b.gap(high), c, 128, 1), "sigmoid")
    x = b.upsample(b.mul(x, s), 2, "linear")
    x = b.add(b.conv(low, low_c, 21, 1, bias=True), b.conv(x, 128, 21, 1, bias=True))
    return b.build({b.upsample(x, 8, "linear"): [1, 21, 224, 224]})


def deeplabv3(opset: int = OPSET) -> onnx.ModelProto:
    """DeepLabV3: ASPP (1x1, three dilated 3x3, image pooling) over the stride-16
    features, projection, a 3x3 conv, the classifier, upsampled to the input."""
    b = NetBuilder("deeplabv3", seed=23, opset=opset)
    features, c = _mobilenet_v3(b, b.input("input", [1, 3, 224, 224]), V3_LARGE_DILATED)
    x = features[-1][0]
    branches = [b.conv_bn(x, c, 256, 1)]
    branches += [b.conv_bn(x, c, 256, 3, dilation=d) for d in (12, 24, 36)]
    pooled = b.conv_bn(b.gap(x), c, 256, 1)
    branches.append(b.upsample(pooled, 14, "linear"))
    x = b.conv_bn(b.concat(branches), 5 * 256, 256, 1)
    x = b.conv_bn(x, 256, 256, 3)
    x = b.conv(x, 256, 21, 1, bias=True)
    return b.build({b.upsample(x, 16, "linear"): [1, 21, 224, 224]})


# --- inverted-residual classifiers ---------------------------------------------------

def _mnasnet_depth(depth: int, alpha: float) -> int:
    """torchvision's channel scaling: depth * alpha to a multiple of 8, rounded up when
    rounding down would lose more than 10%."""
    scaled = depth * alpha
    rounded = max(8, int(scaled + 4) // 8 * 8)
    return rounded if rounded >= 0.9 * scaled else rounded + 8


def _mnasnet(name: str, alpha: float, seed: int, opset: int) -> onnx.ModelProto:
    b = NetBuilder(name, seed=seed, opset=opset)
    stem, first, *depths = (_mnasnet_depth(d, alpha) for d in (32, 16, 24, 40, 80, 96, 192, 320))
    x = b.conv_bn(b.input("input", [1, 3, 224, 224]), 3, stem, 3, 2)
    x = b.conv_bn(x, stem, stem, 3, group=stem)
    x = b.conv_bn(x, stem, first, 1, act=None)
    cin = first
    for cout, (k, stride, expand, repeats) in zip(depths, [(3, 2, 3, 3), (5, 2, 3, 3),
                                                          (5, 2, 6, 3), (3, 1, 6, 2),
                                                          (5, 2, 6, 4), (3, 1, 6, 1)],
                                                  strict=True):
        for i in range(repeats):
            s = stride if i == 0 else 1
            hidden = cin * expand
            y = b.conv_bn(x, cin, hidden, 1)
            y = b.conv_bn(y, hidden, hidden, k, s, group=hidden)
            y = b.conv_bn(y, hidden, cout, 1, act=None)
            x = b.add(y, x) if s == 1 and cin == cout else y
            cin = cout
    x = b.mean_hw(b.conv_bn(x, cin, 1280, 1))
    return b.build(_classifier(b, x, 1280))


def mnasnet(opset: int = OPSET) -> onnx.ModelProto:
    """MNASNet 1.0."""
    return _mnasnet("mnasnet", 1.0, 24, opset)


def mnasnet0_5(opset: int = OPSET) -> onnx.ModelProto:
    """MNASNet 0.5 (torchvision's mnasnet0_5: every depth halved, then rounded)."""
    return _mnasnet("mnasnet0_5", 0.5, 33, opset)


def efficientnet_b0(opset: int = OPSET) -> onnx.ModelProto:
    b = NetBuilder("efficientnet_b0", seed=25, opset=opset)
    x = b.conv_bn(b.input("input", [1, 3, 224, 224]), 3, 32, 3, 2, act="silu")
    cin = 32
    for expand, k, stride, cout, layers in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2),
                                            (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                                            (6, 5, 1, 112, 3), (6, 5, 2, 192, 4),
                                            (6, 3, 1, 320, 1)]:
        for i in range(layers):
            s = stride if i == 0 else 1
            hidden = cin * expand
            y = b.conv_bn(x, cin, hidden, 1, act="silu") if expand != 1 else x
            y = b.conv_bn(y, hidden, hidden, k, s, group=hidden, act="silu")
            y = _se(b, y, hidden, max(1, cin // 4), "silu", "sigmoid")
            y = b.conv_bn(y, hidden, cout, 1, act=None)
            x = b.add(y, x) if s == 1 and cin == cout else y
            cin = cout
    x = b.flatten(b.gap(b.conv_bn(x, cin, 1280, 1, act="silu")))
    return b.build(_classifier(b, x, 1280))


def regnet_y_400mf(opset: int = OPSET) -> onnx.ModelProto:
    """RegNetY-400MF: grouped bottlenecks (group width 8) with squeeze-excite."""
    b = NetBuilder("regnet_y_400mf", seed=26, opset=opset)
    x = b.conv_bn(b.input("input", [1, 3, 224, 224]), 3, 32, 3, 2)
    cin = 32
    for width, depth in [(48, 1), (104, 3), (208, 6), (440, 6)]:
        for i in range(depth):
            stride = 2 if i == 0 else 1
            y = b.conv_bn(x, cin, width, 1)
            y = b.conv_bn(y, width, width, 3, stride, group=width // 8)
            y = _se(b, y, width, int(round(0.25 * cin)), "relu", "sigmoid")
            y = b.conv_bn(y, width, width, 1, act=None)
            skip = (b.conv_bn(x, cin, width, 1, stride, act=None)
                    if stride != 1 or cin != width else x)
            x = b.act(b.add(skip, y), "relu")
            cin = width
    return b.build(_classifier(b, b.flatten(b.gap(x)), cin))


def shufflenet_v2(opset: int = OPSET) -> onnx.ModelProto:
    """ShuffleNetV2 x1.0: split (x.chunk), branch, concat, channel shuffle."""
    b = NetBuilder("shufflenet_v2", seed=27, opset=opset)
    x = b.conv_bn(b.input("input", [1, 3, 224, 224]), 3, 24, 3, 2)
    x = b.maxpool(x, 3, 2, pad=1)
    cin = 24
    for cout, repeats in [(116, 4), (232, 8), (464, 4)]:
        half = cout // 2
        for i in range(repeats):
            if i == 0:
                left = b.conv_bn(x, cin, cin, 3, 2, group=cin, act=None)
                left = b.conv_bn(left, cin, half, 1)
                right = x
            else:
                left, right = b.channels(x, 0, half), b.channels(x, half, cout)
            stride = 2 if i == 0 else 1
            y = b.conv_bn(right, cin if i == 0 else half, half, 1)
            y = b.conv_bn(y, half, half, 3, stride, group=half, act=None)
            y = b.conv_bn(y, half, half, 1)
            x = b.channel_shuffle(b.concat([left, y]), 2)
            cin = cout
    x = b.mean_hw(b.conv_bn(x, cin, 1024, 1))
    return b.build(_classifier(b, x, 1024))


# --- concatenating classifiers -------------------------------------------------------

def densenet121(opset: int = OPSET) -> onnx.ModelProto:
    """DenseNet-121 as torchvision exports it: each layer concatenates all the features
    before it (torch.cat(inputs, 1)), so a block holds many growing Concats."""
    b = NetBuilder("densenet121", seed=28, opset=opset)
    x = b.conv_bn(b.input("input", [1, 3, 224, 224]), 3, 64, 7, 2)
    x = b.maxpool(x, 3, 2, pad=1)
    c, growth = 64, 32
    for index, layers in enumerate([6, 12, 24, 16]):
        features = [x]
        for _ in range(layers):
            cat = b.concat(features) if len(features) > 1 else features[0]
            width = c + growth * (len(features) - 1)
            y = b.conv(b.act(b.bn(cat, width), "relu"), width, 4 * growth, 1)
            y = b.conv(b.act(b.bn(y, 4 * growth), "relu"), 4 * growth, growth, 3)
            features.append(y)
        x = b.concat(features)
        c += growth * layers
        if index < 3:
            x = b.avgpool(b.conv(b.act(b.bn(x, c), "relu"), c, c // 2, 1), 2, 2)
            c //= 2
    x = b.flatten(b.gap(b.act(b.bn(x, c), "relu")))
    return b.build(_classifier(b, x, c))


def googlenet(opset: int = OPSET) -> onnx.ModelProto:
    """GoogLeNet (Inception v1) without the auxiliary heads."""
    b = NetBuilder("googlenet", seed=29, opset=opset)
    x = b.conv_bn(b.input("input", [1, 3, 224, 224]), 3, 64, 7, 2)
    x = b.maxpool(x, 3, 2, ceil=1)
    x = b.conv_bn(b.conv_bn(x, 64, 64, 1), 64, 192, 3)
    x = b.maxpool(x, 3, 2, ceil=1)

    def inception(x: str, cin: int, c1: int, r3: int, c3: int, r5: int, c5: int,
                  pool: int) -> str:
        b1 = b.conv_bn(x, cin, c1, 1)
        b2 = b.conv_bn(b.conv_bn(x, cin, r3, 1), r3, c3, 3)
        b3 = b.conv_bn(b.conv_bn(x, cin, r5, 1), r5, c5, 3)
        b4 = b.conv_bn(b.maxpool(x, 3, 1, pad=1, ceil=1), cin, pool, 1)
        return b.concat([b1, b2, b3, b4])

    x = inception(x, 192, 64, 96, 128, 16, 32, 32)
    x = inception(x, 256, 128, 128, 192, 32, 96, 64)
    x = b.maxpool(x, 3, 2, ceil=1)
    for cin, *widths in [(480, 192, 96, 208, 16, 48, 64), (512, 160, 112, 224, 24, 64, 64),
                         (512, 128, 128, 256, 24, 64, 64), (512, 112, 144, 288, 32, 64, 64),
                         (528, 256, 160, 320, 32, 128, 128)]:
        x = inception(x, cin, *widths)
    x = b.maxpool(x, 2, 2, ceil=1)
    x = inception(x, 832, 256, 160, 320, 32, 128, 128)
    x = inception(x, 832, 384, 192, 384, 48, 128, 128)
    return b.build(_classifier(b, b.flatten(b.gap(x)), 1024))


def alexnet(opset: int = OPSET) -> onnx.ModelProto:
    b = NetBuilder("alexnet", seed=30, opset=opset)
    x = b.input("input", [1, 3, 224, 224])
    x = b.maxpool(b.act(b.conv(x, 3, 64, 11, 4, pad=2, bias=True), "relu"), 3, 2)
    x = b.maxpool(b.act(b.conv(x, 64, 192, 5, pad=2, bias=True), "relu"), 3, 2)
    for cin, cout in [(192, 384), (384, 256), (256, 256)]:
        x = b.act(b.conv(x, cin, cout, 3, bias=True), "relu")
    x = b.flatten(b.maxpool(x, 3, 2))
    x = b.act(b.gemm(x, 256 * 6 * 6, 4096), "relu")
    x = b.act(b.gemm(x, 4096, 4096), "relu")
    return b.build(_classifier(b, x, 4096))


# --- others --------------------------------------------------------------------------

def mlp_mnist(opset: int = OPSET) -> onnx.ModelProto:
    """A 784-512-512-10 MLP on flattened 28x28 images."""
    b = NetBuilder("mlp_mnist", seed=31, opset=opset)
    x = b.flatten(b.input("input", [1, 1, 28, 28]))
    x = b.act(b.gemm(x, 784, 512), "relu")
    x = b.act(b.gemm(x, 512, 512), "relu")
    return b.build(_classifier(b, x, 512, classes=10))


def unet4(opset: int = OPSET) -> onnx.ModelProto:
    """A 4-level U-Net (widths 32..512, transposed-conv upsampling) at 128x128, 2 classes."""
    b = NetBuilder("unet4", seed=32, opset=opset)
    x = b.input("input", [1, 3, 128, 128])

    def double(x: str, cin: int, cout: int) -> str:
        return b.conv_bn(b.conv_bn(x, cin, cout, 3), cout, cout, 3)

    x, cin, skips = b.unet_down(x, 3, (32, 64, 128, 256), double)
    x = double(x, cin, 512)
    cin = 512
    for skip, c in reversed(skips):
        up = b.conv_transpose(x, cin, c, 2, 2)
        x = double(b.concat([skip, up]), 2 * c, c)
        cin = c
    return b.build({b.conv(x, cin, 2, 1, bias=True): [1, 2, 128, 128]})


BUILDERS = {
    "mobilenet_v3_small": mobilenet_v3_small,
    "mnasnet": mnasnet,
    "mnasnet0_5": mnasnet0_5,
    "efficientnet_b0": efficientnet_b0,
    "regnet_y_400mf": regnet_y_400mf,
    "shufflenet_v2": shufflenet_v2,
    "densenet121": densenet121,
    "googlenet": googlenet,
    "alexnet": alexnet,
    "mlp_mnist": mlp_mnist,
    "unet4": unet4,
    "lraspp": lraspp,
    "deeplabv3": deeplabv3,
}
