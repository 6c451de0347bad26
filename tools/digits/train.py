"""Train the digits classifier and write models/digits.onnx plus its data files.

The model: an MLP 64 -> 64 (ReLU) -> 32 (ReLU) -> 10 on scikit-learn's 8x8 digits
(no download), trained with hand-written Adam in numpy, seeded, in a few seconds.
Input "input": float32 [1, 64], the 8x8 image row-major with pixels scaled to [0, 1]
(the dataset's 0..16 divided by 16). Output "logits": float32 [1, 10].

Writes (default: the repository's models/):
  digits.onnx         the model (opset 17, IR version 10)
  digits_test.npz     the held-out test split: "input" [N, 64] float32, "labels" [N] int64
  digits_calib.npz    calibration samples drawn from the TRAINING split: "input" [M, 64]

Run: python tools/digits/train.py [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0
LAYERS = (64, 64, 32, 10)
EPOCHS = 60
BATCH = 32
LEARNING_RATE = 2e-3
WEIGHT_DECAY = 1e-4
CALIBRATION_SAMPLES = 200
TEST_FRACTION = 0.3


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=TEST_FRACTION, random_state=SEED, stratify=y)
    return x_train, y_train, x_test, y_test


def init_params(rng: np.random.Generator) -> list[np.ndarray]:
    """He-initialised weights [out, in] and zero biases, layer after layer."""
    params = []
    for fan_in, fan_out in zip(LAYERS[:-1], LAYERS[1:], strict=True):
        params.append(rng.standard_normal((fan_out, fan_in)) * np.sqrt(2.0 / fan_in))
        params.append(np.zeros(fan_out))
    return params


def forward(params: list[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Logits and the activations each layer read (for the backward pass)."""
    seen = [x]
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i].T + params[i + 1]
        if i + 2 < len(params):
            h = np.maximum(h, 0.0)
            seen.append(h)
    return h, seen


def gradients(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """Gradients of the mean softmax cross-entropy plus L2 on the weights."""
    logits, seen = forward(params, x)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    delta = p
    delta[np.arange(len(y)), y] -= 1.0
    delta /= len(y)
    grads: list[np.ndarray] = [np.empty(0)] * len(params)
    for layer in reversed(range(len(params) // 2)):
        w = params[2 * layer]
        grads[2 * layer] = delta.T @ seen[layer] + WEIGHT_DECAY * w
        grads[2 * layer + 1] = delta.sum(axis=0)
        if layer:
            delta = (delta @ w) * (seen[layer] > 0)
    return grads


def train(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    params = init_params(rng)
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    beta1, beta2, eps, step = 0.9, 0.999, 1e-8, 0
    xd = x.astype(np.float64)
    for _ in range(EPOCHS):
        order = rng.permutation(len(x))
        for start in range(0, len(x), BATCH):
            batch = order[start:start + BATCH]
            step += 1
            for i, g in enumerate(gradients(params, xd[batch], y[batch])):
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                m_hat = m[i] / (1 - beta1 ** step)
                v_hat = v[i] / (1 - beta2 ** step)
                params[i] = params[i] - LEARNING_RATE * m_hat / (np.sqrt(v_hat) + eps)
    return [p.astype(np.float32) for p in params]


def to_onnx(params: list[np.ndarray]) -> onnx.ModelProto:
    nodes, inits = [], []
    x = "input"
    count = len(params) // 2
    for layer in range(count):
        w, b = f"fc{layer}.weight", f"fc{layer}.bias"
        inits += [numpy_helper.from_array(params[2 * layer], w),
                  numpy_helper.from_array(params[2 * layer + 1], b)]
        out = "logits" if layer == count - 1 else f"fc{layer}"
        nodes.append(helper.make_node("Gemm", [x, w, b], [out], name=f"fc{layer}", transB=1))
        if layer < count - 1:
            nodes.append(helper.make_node("Relu", [out], [f"relu{layer}"], name=f"relu{layer}"))
            out = f"relu{layer}"
        x = out
    graph = helper.make_graph(
        nodes, "digits",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, LAYERS[0]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, LAYERS[-1]])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=10, producer_name="dnn64build tools/digits")
    onnx.checker.check_model(model)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parents[2] / "models")
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    x_train, y_train, x_test, y_test = load_split()
    params = train(x_train, y_train, rng)
    train_acc = np.mean(np.argmax(forward(params, x_train)[0], axis=1) == y_train)
    test_acc = np.mean(np.argmax(forward(params, x_test)[0], axis=1) == y_test)
    calib = x_train[rng.choice(len(x_train), CALIBRATION_SAMPLES, replace=False)]
    args.out.mkdir(parents=True, exist_ok=True)
    onnx.save(to_onnx(params), args.out / "digits.onnx")
    np.savez(args.out / "digits_test.npz", input=x_test, labels=y_test)
    np.savez(args.out / "digits_calib.npz", input=calib)
    print(f"train accuracy {train_acc:.4f}, test accuracy {test_acc:.4f} (fp32, numpy); "
          f"wrote {args.out}/digits.onnx, digits_test.npz ({len(y_test)} samples), "
          f"digits_calib.npz ({len(calib)} samples)")


if __name__ == "__main__":
    main()
