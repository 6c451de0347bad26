"""Facts about operators that several compiler stages share."""

from __future__ import annotations

# Ops whose output is their input's data reinterpreted (tensors are dense row-major): the
# planner aliases the output to the input, the kernels copy at most.
VIEW_OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout")
# Stand-alone activation ops: element-wise, one input; in int8 a 256-entry lookup table.
ACTIVATION_OPS = ("Relu", "Clip", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish")
