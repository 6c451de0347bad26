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
 *   dnn64_expm1f:  exp(x) - 1; relative error <= 2e-7 for |x| < ln(2) / 2 (series),
 *                  as dnn64_expf's result minus 1 beyond.
 *   dnn64_logf:    relative error <= 2e-7 (ln 0 = -inf, negative or NaN gives NaN).
 *   dnn64_sqrtf:   within one ulp (three Newton steps; sqrt(-x) is NaN, -0 stays -0).
 *   dnn64_erff:    absolute error <= 2e-7 (series below |x| = 1, Abramowitz &
 *                  Stegun 7.1.26 up to 4, +-1 beyond).
 *   dnn64_powf:    an integer exponent (|e| < 2^24) by repeated squaring (any base,
 *                  one rounding per multiply); 0.5 as dnn64_sqrtf; otherwise
 *                  exp(e ln x), relative error about (|e ln x| + 2) * 1.2e-7;
 *                  a negative base to a non-integer exponent gives NaN.
 */
#ifndef DNN64_MATH_H
#define DNN64_MATH_H

float dnn64_expf(float x);
float dnn64_tanhf(float x);
float dnn64_sigmoidf(float x);
float dnn64_expm1f(float x);
float dnn64_logf(float x);
float dnn64_sqrtf(float x);
float dnn64_erff(float x);
float dnn64_powf(float x, float e);

#endif /* DNN64_MATH_H */
