/*
 * dnn64_math.h - the fp32 elementary functions the kernels need, without libm.
 *
 * The N64 bare target has no libm, so the fp32 kernels use these. They need
 * only IEEE single-precision + - * / and integer/float conversions (no FMA,
 * no float-to-bits tricks beyond a union). Accuracy, measured against
 * float64 over the ranges below by tests/kernels/test_math.py:
 *   dnn64_expf:    relative error <= 1.5e-7 for x in [-87, 88] (results below
 *                  FLT_MIN lose precision gradually; x < -103.97 gives 0,
 *                  x > 88.72 gives +inf, NaN gives NaN).
 *   dnn64_tanhf:   relative error <= 2.5e-7 everywhere (odd polynomial below
 *                  |x| = 0.5, 1 - 2 / (exp(2|x|) + 1) above, +-1 beyond 9).
 *   dnn64_sigmoidf: relative error <= 2.5e-7 for results >= FLT_MIN
 *                  (1 / (1 + exp(-x)) for x >= 0, e / (1 + e) with e = exp(x)
 *                  for x < 0, so small results keep their precision).
 *   dnn64_logf:    absolute error <= 1e-7 for x in [0.5, 2], relative error
 *                  <= 1.5e-7 elsewhere for x > 0 (subnormals included); 0 gives
 *                  -inf, x < 0 and NaN give NaN, +inf gives +inf.
 */
#ifndef DNN64_MATH_H
#define DNN64_MATH_H

float dnn64_expf(float x);
float dnn64_tanhf(float x);
float dnn64_sigmoidf(float x);
float dnn64_logf(float x);

#endif /* DNN64_MATH_H */
