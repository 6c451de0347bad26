"""The zoo's model definitions, each a function returning an onnx.ModelProto."""

from __future__ import annotations

import onnx

from tools.zoo.builder import OPSET, NetBuilder


def mlp(opset: int = OPSET) -> onnx.ModelProto:
    b = NetBuilder("mlp", seed=1, opset=opset)
    x = b.input("input", [1, 64])
    x = b.act(b.gemm(x, 64, 128), "relu")
    x = b.act(b.gemm(x, 128, 64), "relu")
    x = b.node("Softmax", [b.gemm(x, 64, 10)], "Softmax", axis=-1)
    return b.build({x: [1, 10]})


def small_cnn(opset: int = OPSET) -> onnx.ModelProto:
    b = NetBuilder("small_cnn", seed=2, opset=opset)
    x = b.input("input", [1, 1, 16, 16])
    x = b.maxpool(b.conv_bn(x, 1, 8, 3), 2, 2)
    x = b.maxpool(b.conv_bn(x, 8, 16, 3), 2, 2)
    x = b.gemm(b.view_flatten(x), 16 * 4 * 4, 10)
    return b.build({x: [1, 10]})


def _resnet(name: str, blocks: list[int], bottleneck: bool, seed: int,
            opset: int) -> onnx.ModelProto:
    b = NetBuilder(name, seed=seed, opset=opset)
    x = b.input("input", [1, 3, 224, 224])
    x = b.maxpool(b.conv_bn(x, 3, 64, 7, stride=2), 3, 2, pad=1)
    cin = 64
    expansion = 4 if bottleneck else 1
    for stage, count in enumerate(blocks):
        width = 64 * 2 ** stage
        for i in range(count):
            stride = 2 if stage > 0 and i == 0 else 1
            cout = width * expansion
            if bottleneck:
                y = b.conv_bn(x, cin, width, 1)
                y = b.conv_bn(y, width, width, 3, stride)
                y = b.conv_bn(y, width, cout, 1, act=None)
            else:
                y = b.conv_bn(x, cin, width, 3, stride)
                y = b.conv_bn(y, width, width, 3, act=None)
            skip = x if stride == 1 and cin == cout else b.conv_bn(x, cin, cout, 1, stride,
                                                                   act=None)
            x = b.act(b.add(y, skip), "relu")
            cin = cout
    x = b.gemm(b.flatten(b.gap(x)), cin, 1000)
    return b.build({x: [1, 1000]})


def resnet18(opset: int = OPSET) -> onnx.ModelProto:
    return _resnet("resnet18", [2, 2, 2, 2], bottleneck=False, seed=3, opset=opset)


def resnet50(opset: int = OPSET) -> onnx.ModelProto:
    return _resnet("resnet50", [3, 4, 6, 3], bottleneck=True, seed=4, opset=opset)


def mobilenetv2(opset: int = OPSET) -> onnx.ModelProto:
    b = NetBuilder("mobilenetv2", seed=5, opset=opset)
    x = b.input("input", [1, 3, 224, 224])
    x = b.conv_bn(x, 3, 32, 3, 2, act="relu6")
    cin = 32
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = b.conv_bn(x, cin, hidden, 1, act="relu6") if t != 1 else x
            y = b.conv_bn(y, hidden, hidden, 3, stride, group=hidden, act="relu6")
            y = b.conv_bn(y, hidden, c, 1, act=None)
            x = b.add(x, y) if stride == 1 and cin == c else y
            cin = c
    x = b.conv_bn(x, cin, 1280, 1, act="relu6")
    x = b.view_flatten(b.gap(x))
    x = b.node("Dropout", [x], "Dropout")
    return b.build({b.gemm(x, 1280, 1000): [1, 1000]})


def _squeeze_excite(b: NetBuilder, x: str, c: int) -> str:
    s = b.gap(x)
    s = b.act(b.conv(s, c, max(8, c // 4), 1, bias=True), "relu")
    s = b.act(b.conv(s, max(8, c // 4), c, 1, bias=True), "hardsigmoid")
    return b.mul(x, s)


def mobilenetv3(opset: int = OPSET) -> onnx.ModelProto:
    """MobileNetV3-small-style: HardSwish, squeeze-excite, an EfficientNet-style SiLU head."""
    b = NetBuilder("mobilenetv3", seed=6, opset=opset)
    x = b.input("input", [1, 3, 128, 128])
    x = b.conv_bn(x, 3, 16, 3, 2, act="hardswish")
    cin = 16
    # kernel, expansion, out, squeeze-excite, activation, stride
    blocks = [(3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2),
              (3, 88, 24, False, "relu", 1), (5, 96, 40, True, "hardswish", 2),
              (5, 240, 40, True, "hardswish", 1), (5, 288, 96, True, "hardswish", 2)]
    for k, hidden, cout, se, act, stride in blocks:
        y = b.conv_bn(x, cin, hidden, 1, act=act) if hidden != cin else x
        y = b.conv_bn(y, hidden, hidden, k, stride, group=hidden, act=act)
        if se:
            y = _squeeze_excite(b, y, hidden)
        y = b.conv_bn(y, hidden, cout, 1, act=None)
        x = b.add(x, y) if stride == 1 and cin == cout else y
        cin = cout
    x = b.conv_bn(x, cin, 576, 1, act="silu")
    x = b.flatten(b.gap(x))
    x = b.act(b.gemm(x, 576, 256), "hardswish")
    return b.build({b.gemm(x, 256, 100): [1, 100]})


def squeezenet(opset: int = OPSET) -> onnx.ModelProto:
    """SqueezeNet 1.1 (its max pools use ceil_mode, as torchvision's do)."""
    b = NetBuilder("squeezenet", seed=7, opset=opset)
    x = b.input("input", [1, 3, 224, 224])
    x = b.maxpool(b.act(b.conv(x, 3, 64, 3, 2, pad=0, bias=True), "relu"), 3, 2, ceil=1)
    cin = 64

    def fire(x: str, cin: int, squeeze: int, expand: int) -> str:
        s = b.act(b.conv(x, cin, squeeze, 1, bias=True), "relu")
        e1 = b.act(b.conv(s, squeeze, expand, 1, bias=True), "relu")
        e3 = b.act(b.conv(s, squeeze, expand, 3, bias=True), "relu")
        return b.concat([e1, e3])

    for i, (squeeze, expand) in enumerate([(16, 64), (16, 64), (32, 128), (32, 128), (48, 192),
                                           (48, 192), (64, 256), (64, 256)]):
        x = fire(x, cin, squeeze, expand)
        cin = 2 * expand
        if i in (1, 3):
            x = b.maxpool(x, 3, 2, ceil=1)
    x = b.node("Dropout", [x], "Dropout")
    x = b.act(b.conv(x, cin, 1000, 1, bias=True), "relu")
    return b.build({b.flatten(b.gap(x)): [1, 1000]})


def densenet(opset: int = OPSET) -> onnx.ModelProto:
    """DenseNet-style: pre-activation BN-ReLU-Conv layers, every layer concatenated."""
    b = NetBuilder("densenet", seed=8, opset=opset)
    x = b.input("input", [1, 3, 64, 64])
    x = b.maxpool(b.conv_bn(x, 3, 32, 3, 2), 3, 2, pad=1)
    c, growth = 32, 12
    for block in range(3):
        for _ in range(4):
            y = b.conv(b.act(b.bn(x, c), "relu"), c, 4 * growth, 1)
            y = b.conv(b.act(b.bn(y, 4 * growth), "relu"), 4 * growth, growth, 3)
            x = b.concat([x, y])
            c += growth
        if block < 2:
            x = b.conv(b.act(b.bn(x, c), "relu"), c, c // 2, 1)
            x = b.avgpool(x, 2, 2)
            c //= 2
    x = b.flatten(b.gap(b.act(b.bn(x, c), "relu")))
    return b.build({b.gemm(x, c, 10): [1, 10]})


def shufflenet(opset: int = OPSET) -> onnx.ModelProto:
    """ShuffleNet(v1)-style units: grouped 1x1 convs with a channel shuffle between."""
    b = NetBuilder("shufflenet", seed=9, opset=opset)
    g = 4
    x = b.input("input", [1, 3, 112, 112])
    x = b.maxpool(b.conv_bn(x, 3, 24, 3, 2), 3, 2, pad=1)
    cin = 24
    for cout, repeats in [(136, 2), (272, 2)]:
        for i in range(repeats):
            stride = 2 if i == 0 else 1
            branch = cout - cin if stride == 2 else cout
            mid = branch // 4 // g * g  # divisible by the groups
            first_group = 1 if cin == 24 else g
            y = b.conv_bn(x, cin, mid, 1, group=first_group)
            y = b.channel_shuffle(y, first_group if first_group > 1 else 2)
            y = b.conv_bn(y, mid, mid, 3, stride, group=mid, act=None)
            y = b.conv_bn(y, mid, branch, 1, group=g, act=None)
            if stride == 2:
                x = b.act(b.concat([b.avgpool(x, 3, 2, pad=1), y]), "relu")
            else:
                x = b.act(b.add(x, y), "relu")
            cin = cout
    x = b.view_flatten(b.gap(x))
    return b.build({b.gemm(x, cin, 10): [1, 10]})


def unet(opset: int = OPSET) -> onnx.ModelProto:
    """U-Net: ConvTranspose and Resize upsampling, long skip connections."""
    b = NetBuilder("unet", seed=10, opset=opset)
    x = b.input("input", [1, 3, 64, 64])

    def double(x: str, cin: int, cout: int, act: str = "relu") -> str:
        return b.conv_bn(b.conv_bn(x, cin, cout, 3, act=act), cout, cout, 3, act=act)

    x, cin, skips = b.unet_down(x, 3, (16, 32, 64), double)
    x = double(x, cin, 128)
    cin = 128
    for level, (skip, c) in enumerate(reversed(skips)):
        if level == 1:
            up = b.conv_bn(b.upsample2x(x, "linear"), cin, c, 1, act=None)
        else:
            up = b.conv_transpose(x, cin, c, 2, 2)
        x = double(b.concat([up, skip]), 2 * c, c, act="leaky_relu")
        cin = c
    x = b.act(b.conv(x, cin, 2, 1, bias=True), None)
    return b.build({b.node("Sigmoid", [x], "Sigmoid"): [1, 2, 64, 64]})


BUILDERS = {
    "mlp": mlp,
    "small_cnn": small_cnn,
    "resnet18": resnet18,
    "resnet50": resnet50,
    "mobilenetv2": mobilenetv2,
    "mobilenetv3": mobilenetv3,
    "squeezenet": squeezenet,
    "densenet": densenet,
    "shufflenet": shufflenet,
    "unet": unet,
}
