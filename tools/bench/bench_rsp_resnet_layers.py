"""ResNet-18's Conv shapes one at a time, int8 on the RSP, in CPU cycles measured in cen64.

    python -m tools.bench.bench_rsp_resnet_layers [--layers stage1,stage2,...]
        [--kernels auto] [--timeout 900]

A whole ResNet-18 224 takes a long time in cen64 on a shared machine; these single-layer
models (a Conv + BatchNorm + ReLU, the shapes ResNet-18 224 runs, zoo's NetBuilder, seeded)
profile each stage's Conv in a minute or so. Each is built and run as bench_rsp does
(``dnn64build run --platform cen64``, every output checked against the integer reference
executor); the table gives CPU cycles per layer, per MAC, and the layer's count in
ResNet-18, so that ``count x cycles`` estimates the model's Conv time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.bench.bench_emulator import macs  # noqa: E402
from tools.bench.bench_rsp import CPU_HZ, measure, workspace  # noqa: E402
from tools.zoo.builder import NetBuilder  # noqa: E402

# name -> (c_in, c_out, kernel, stride, input side, times in ResNet-18 224)
LAYERS = {
    "stem": (3, 64, 7, 2, 224, 1),
    "stage1": (64, 64, 3, 1, 56, 4),
    "stage2_s2": (64, 128, 3, 2, 56, 1),
    "stage2": (128, 128, 3, 1, 28, 3),
    "stage3_s2": (128, 256, 3, 2, 28, 1),
    "stage3": (256, 256, 3, 1, 14, 3),
    "stage4_s2": (256, 512, 3, 2, 14, 1),
    "stage4": (512, 512, 3, 1, 7, 3),
    "down2": (64, 128, 1, 2, 56, 1),
}


def layer_model(name: str) -> onnx.ModelProto:
    cin, cout, k, stride, side, _ = LAYERS[name]
    b = NetBuilder(f"r18_{name}", seed=11, opset=17)
    x = b.input("input", [1, cin, side, side])
    y = b.conv_bn(x, cin, cout, k, stride)
    out = side // stride
    return b.build({y: [1, cout, out, out]})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default=",".join(LAYERS))
    parser.add_argument("--kernels", default="auto")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--staging", type=int, default=None,
                        help="planner staging_bytes (weight tiles of half of it); default: the "
                             "planner's")
    args = parser.parse_args(argv)
    names, kernels = args.layers.split(","), args.kernels.split(",")
    print("| layer | shape | kernels | M MACs | CPU cycles | cycles/MAC | ms at 93.75 MHz "
          "| in ResNet-18 | M cycles there | vs the integer reference |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench_rsp_layers") as tmp:
        root = Path(tmp)
        workspace(root, names, args.staging, ws_name="bench_rsp_layers", model=layer_model,
                  kernels_list=kernels, calib_samples=4)
        for name in names:
            cin, cout, k, stride, side, times = LAYERS[name]
            count = macs(onnx.load(root / "models" / f"{name}.onnx"))
            for kern in kernels:
                r = measure(root, name, kern, args.timeout)
                cycles = r["cycles"]
                cells = (name, f"{cin}->{cout} {k}x{k} s{stride} @{side}", kern,
                         f"{count / 1e6:.1f}", f"{cycles:,}" if cycles else "-",
                         f"{cycles / count:.2f}" if cycles else "-",
                         f"{cycles / CPU_HZ * 1e3:.1f}" if cycles else "-", str(times),
                         f"{cycles * times / 1e6:.0f}" if cycles else "-", r["verdict"])
                print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
