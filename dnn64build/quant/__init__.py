"""int8 quantisation: calibration, the quantised IR (docs/quant-ir.md), its integer
reference executor, and the import of pre-quantised (QDQ / QLinear) ONNX models."""

from dnn64build.quant.calibrate import load_calibration
from dnn64build.quant.execute import run_int8
from dnn64build.quant.quantize import quantize_graph
from dnn64build.quant.report import accuracy_report

__all__ = ["accuracy_report", "load_calibration", "quantize_graph", "run_int8"]
