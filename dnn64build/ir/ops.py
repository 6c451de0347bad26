"""Facts about operators that several compiler stages share."""

from __future__ import annotations

# Ops whose output is their input's data reinterpreted (tensors are dense row-major): the
# planner aliases the output to the input, the kernels copy at most.
VIEW_OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout")
# Stand-alone activation op -> the activation it computes (dnn64build.ir.kernels.ACTIVATIONS,
# parameters: the node's attributes). Element-wise, one input; fp32: one dnn64_act_f32 kind
# (codegen/ops_fp32.py); int8: a 256-entry lookup table built from the numpy function.
ACTIVATION_OF_OP = {
    "Relu": "relu",
    "Clip": "clip",
    "LeakyRelu": "leaky_relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "HardSigmoid": "hard_sigmoid",
    "HardSwish": "hard_swish",
    # unary element-wise ops (issue 22)
    "Neg": "neg",
    "Abs": "abs",
    "Exp": "exp",
    "Log": "log",
    "Sqrt": "sqrt",
    "Reciprocal": "reciprocal",
    "Sign": "sign",
    "Erf": "erf",
    "Gelu": "gelu",
    "Elu": "elu",
    "Selu": "selu",
    "Celu": "celu",
    "ThresholdedRelu": "thresholded_relu",
    "Softplus": "softplus",
    "Softsign": "softsign",
    "Mish": "mish",
    "Shrink": "shrink",
    "Swish": "swish",  # x * sigmoid(alpha * x), made from Mul(x, Sigmoid(x)) by a pass
}
ACTIVATION_OPS = tuple(ACTIVATION_OF_OP)
# Two-input element-wise ops (fp32: dnn64_binary_f32) that are an activation of their first
# input when the second is a constant scalar (int8: a lookup table): op -> (activation, the
# name of its parameter, the scalar).
SCALAR_OPERAND_ACTIVATIONS = {"Pow": ("pow", "exponent"), "PRelu": ("leaky_relu", "alpha")}
