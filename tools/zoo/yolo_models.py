"""YOLOv8n as Ultralytics exports it to ONNX (``model.export(format="onnx")``: batch 1,
static shape, no NMS), layer for layer, with random weights.

The architecture is Ultralytics' ``yolov8.yaml`` at scale n (depth 0.33, width 0.25):
widths 16, 32, 64, 128, 256; C2f repeats 1, 2, 2, 1 in the backbone and 1 in the neck.
The export fuses every BatchNormalization into its Conv (a Conv with a bias), writes
SiLU as Sigmoid then Mul, C2f's ``chunk(2, 1)`` as a Split, ``nn.Upsample`` as a nearest
Resize with constant scales, and the Detect head's decode (DFL, anchors, strides) as
constant arithmetic. The output ``output0`` is [1, 84, A]: per anchor its box (centre x,
centre y, width, height, in input pixels) and the sigmoid scores of the 80 classes; A is
(H/8 * W/8) + (H/16 * W/16) + (H/32 * W/32) anchors. docs/models.md says how to read it.
"""

from __future__ import annotations

import numpy as np
import onnx

from tools.zoo.builder import OPSET, NetBuilder

CLASSES = 80
REG_MAX = 16  # DFL bins per box side
STRIDES = (8, 16, 32)


def _conv(b: NetBuilder, x: str, cin: int, cout: int, k: int = 1, stride: int = 1) -> str:
    """Ultralytics' Conv (Conv2d, BatchNorm, SiLU) with the BN folded in, as exported."""
    return b.act(b.conv(x, cin, cout, k, stride, bias=True), "silu")


def _split(b: NetBuilder, x: str, sizes: list[int], axis: int = 1) -> list[str]:
    """torch.split / chunk: a Split whose sizes are an input from opset 13, an attribute
    before."""
    outs = [b._fresh("Split") + f"_output_{i}" for i in range(len(sizes))]
    if b.opset >= 13:
        inputs, attrs = [x, b.const(np.array(sizes, np.int64), "split")], {}
    else:
        inputs, attrs = [x], {"split": sizes}
    b.nodes.append(onnx.helper.make_node("Split", inputs, outs, name=outs[0][:-9], axis=axis,
                                         **attrs))
    return outs


def _slice(b: NetBuilder, x: str, start: int, end: int, axis: int) -> str:
    """x[..., start:end, ...] on ``axis``, with constant starts/ends/axes/steps inputs."""
    bounds = [b.const(np.array([v], np.int64), "slice") for v in (start, end, axis, 1)]
    return b.node("Slice", [x, *bounds], "Slice")


def _reshape(b: NetBuilder, x: str, shape: list[int]) -> str:
    return b.node("Reshape", [x, b.const(np.array(shape, np.int64), "shape")], "Reshape")


def _c2f(b: NetBuilder, x: str, cin: int, cout: int, n: int, shortcut: bool) -> str:
    """C2f: a 1x1 Conv to 2c, Split in halves, n Bottlenecks (two 3x3 Convs, a residual Add
    when ``shortcut``) each on the previous output, Concat of all, a 1x1 Conv."""
    c = cout // 2
    ys = _split(b, _conv(b, x, cin, 2 * c), [c, c])
    for _ in range(n):
        y = _conv(b, _conv(b, ys[-1], c, c, 3), c, c, 3)
        ys.append(b.add(ys[-1], y) if shortcut else y)
    return _conv(b, b.concat(ys), (2 + n) * c, cout)


def _sppf(b: NetBuilder, x: str, cin: int, cout: int) -> str:
    """SPPF: a 1x1 Conv to cin/2, three chained 5x5 stride-1 MaxPools, Concat, 1x1 Conv."""
    ys = [_conv(b, x, cin, cin // 2)]
    for _ in range(3):
        ys.append(b.maxpool(ys[-1], 5, 1, pad=2))
    return _conv(b, b.concat(ys), cin // 2 * 4, cout)


def _upsample(b: NetBuilder, x: str) -> str:
    """nn.Upsample(scale_factor=2, mode="nearest"): Resize with constant scales (roi an
    empty tensor before opset 13, an empty name from 13)."""
    roi = b.const(np.zeros(0, np.float32), "roi") if b.opset < 13 else ""
    scales = b.const(np.array([1, 1, 2, 2], np.float32), "scales")
    return b.node("Resize", [x, roi, scales], "Resize", mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def _softmax_axis1(b: NetBuilder, x: str) -> str:
    """softmax(dim=1) of a 4-D tensor: one Softmax from opset 13; before, PyTorch moves the
    axis last around a Softmax on the last axis (the old Softmax flattened to 2-D)."""
    if b.opset >= 13:
        return b.node("Softmax", [x], "Softmax", axis=1)
    y = b.node("Transpose", [x], "Transpose", perm=[0, 3, 2, 1])
    y = b.node("Softmax", [y], "Softmax", axis=3)
    return b.node("Transpose", [y], "Transpose", perm=[0, 3, 2, 1])


def anchors_and_strides(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Ultralytics' make_anchors(offset=0.5), as the export bakes it: anchor centres in grid
    cells [1, 2, A] (x then y, level by level, row-major) and each anchor's stride [1, A]."""
    points, strides = [], []
    for s in STRIDES:
        h, w = height // s, width // s
        sy, sx = np.meshgrid(np.arange(h) + 0.5, np.arange(w) + 0.5, indexing="ij")
        points.append(np.stack([sx.ravel(), sy.ravel()]))
        strides.append(np.full(h * w, s))
    return (np.concatenate(points, 1)[None].astype(np.float32),
            np.concatenate(strides)[None].astype(np.float32))


def _unsqueeze(b: NetBuilder, x: str, axis: int) -> str:
    if b.opset < 13:  # axes became an input in opset 13
        return b.node("Unsqueeze", [x], "Unsqueeze", axes=[axis])
    return b.node("Unsqueeze", [x, b.const(np.array([axis], np.int64), "axes")], "Unsqueeze")


def _traced_anchors(b: NetBuilder, height: int, width: int) -> tuple[str, str]:
    """make_anchors as a trace without constant folding writes it (the form behind issue
    22's refusal at /model.22/Expand): per level arange + 0.5 (Range, Add), meshgrid
    (Reshape, Expand), stack and view (Unsqueeze, Concat, Reshape), torch.full of the
    stride (Expand); the levels concatenated and transposed. Every input is constant."""
    points, strides = [], []
    for s in STRIDES:
        h, w = height // s, width // s
        axes = []
        for n, grid_shape in ((w, [1, -1]), (h, [-1, 1])):  # sx, then sy
            cells = b.node("Range", [b.constant_node(np.float32(0)),
                                     b.constant_node(np.float32(n)),
                                     b.constant_node(np.float32(1))], "Range")
            cells = b.add(cells, b.constant_node(np.float32(0.5)))
            grid = b.node("Expand", [_reshape(b, cells, grid_shape),
                                     b.const(np.array([h, w], np.int64), "shape")], "Expand")
            axes.append(_unsqueeze(b, grid, -1))
        points.append(_reshape(b, b.concat(axes, axis=-1), [-1, 2]))
        strides.append(b.node("Expand", [b.constant_node(np.float32(s)),
                                         b.const(np.array([h * w, 1], np.int64), "shape")],
                              "Expand"))
    anchors = b.node("Transpose", [b.concat(points, axis=0)], "Transpose", perm=[1, 0])
    stride = b.node("Transpose", [b.concat(strides, axis=0)], "Transpose", perm=[1, 0])
    return _unsqueeze(b, anchors, 0), stride


def _detect(b: NetBuilder, feats: list[tuple[str, int]], height: int, width: int,
            traced_anchors: bool) -> str:
    """The Detect head: per level a box branch (64 = 4 x 16 DFL bins) and a class branch
    (80), concatenated and flattened; then the decode that the export keeps in the graph."""
    box_c, cls_c = max(16, feats[0][1] // 4, 4 * REG_MAX), max(feats[0][1], min(CLASSES, 100))
    levels = []
    for x, c in feats:
        box = _conv(b, _conv(b, x, c, box_c, 3), box_c, box_c, 3)
        box = b.conv(box, box_c, 4 * REG_MAX, 1, bias=True)
        cls = _conv(b, _conv(b, x, c, cls_c, 3), cls_c, cls_c, 3)
        cls = b.conv(cls, cls_c, CLASSES, 1, bias=True)
        levels.append(_reshape(b, b.concat([box, cls]), [1, 4 * REG_MAX + CLASSES, -1]))
    box, cls = _split(b, b.concat(levels, axis=2), [4 * REG_MAX, CLASSES])
    count = sum((height // s) * (width // s) for s in STRIDES)
    # DFL: the expected bin of a softmax over 16 bins, as a 1x1 Conv with weights 0..15.
    dist = b.node("Transpose", [_reshape(b, box, [1, 4, REG_MAX, count])], "Transpose",
                  perm=[0, 2, 1, 3])
    bins = b.const(np.arange(REG_MAX, dtype=np.float32).reshape(1, REG_MAX, 1, 1), "dfl")
    dist = b.node("Conv", [_softmax_axis1(b, dist), bins], "Conv", kernel_shape=[1, 1])
    dist = _reshape(b, dist, [1, 4, count])
    # dist2bbox(xywh=True): distances left/top and right/bottom of the anchor to a box.
    if traced_anchors:
        anchor_points, strides = _traced_anchors(b, height, width)
    else:
        anchors, stride_row = anchors_and_strides(height, width)
        anchor_points, strides = b.const(anchors, "anchors"), b.const(stride_row, "strides")
    x1y1 = b.node("Sub", [anchor_points, _slice(b, dist, 0, 2, 1)], "Sub")
    x2y2 = b.add(anchor_points, _slice(b, dist, 2, 4, 1))
    centre = b.node("Div", [b.add(x1y1, x2y2), b.constant_node(np.float32(2))], "Div")
    size = b.node("Sub", [x2y2, x1y1], "Sub")
    dbox = b.mul(b.concat([centre, size]), strides)
    return b.concat([dbox, b.act(cls, "sigmoid")])


def yolov8n(size: int = 640, opset: int = OPSET, traced_anchors: bool = False
            ) -> onnx.ModelProto:
    """YOLOv8n for a ``size`` x ``size`` image (a multiple of 32), input ``images``
    [1, 3, size, size], output ``output0`` [1, 84, A]. The anchors and strides are
    constants, as the exporter's constant folding leaves them, or with ``traced_anchors``
    the sub-graph that computes them."""
    if size % 32:
        raise ValueError(f"YOLOv8 needs a multiple of 32, not {size}")
    b = NetBuilder(f"yolov8n_{size}", seed=80, opset=opset)
    x = _conv(b, b.input("images", [1, 3, size, size]), 3, 16, 3, 2)  # P1/2
    x = _conv(b, x, 16, 32, 3, 2)  # P2/4
    x = _c2f(b, x, 32, 32, 1, True)
    p3 = _c2f(b, _conv(b, x, 32, 64, 3, 2), 64, 64, 2, True)  # P3/8
    p4 = _c2f(b, _conv(b, p3, 64, 128, 3, 2), 128, 128, 2, True)  # P4/16
    x = _c2f(b, _conv(b, p4, 128, 256, 3, 2), 256, 256, 1, True)  # P5/32
    p5 = _sppf(b, x, 256, 256)
    # The neck (PAN): top-down with nearest upsampling, then bottom-up with stride-2 Convs.
    n4 = _c2f(b, b.concat([_upsample(b, p5), p4]), 384, 128, 1, False)
    n3 = _c2f(b, b.concat([_upsample(b, n4), p3]), 192, 64, 1, False)
    m4 = _c2f(b, b.concat([_conv(b, n3, 64, 64, 3, 2), n4]), 192, 128, 1, False)
    m5 = _c2f(b, b.concat([_conv(b, m4, 128, 128, 3, 2), p5]), 384, 256, 1, False)
    out = _detect(b, [(n3, 64), (m4, 128), (m5, 256)], size, size, traced_anchors)
    count = sum((size // s) ** 2 for s in STRIDES)
    model = b.build({out: [1, 4 + CLASSES, count]})
    model.graph.output[0].name = "output0"
    model.graph.node[-1].output[0] = "output0"
    onnx.checker.check_model(model)
    return model


def yolov8n_320(opset: int = OPSET) -> onnx.ModelProto:
    return yolov8n(320, opset)


def yolov8n_640(opset: int = OPSET) -> onnx.ModelProto:
    return yolov8n(640, opset)


BUILDERS = {"yolov8n_320": yolov8n_320, "yolov8n_640": yolov8n_640}
