/*
 * dnn64_kernels.h - portable C99 neural-network kernels (fp32 and int8) for dnn64build.
 *
 * What it is for: the code that dnn64build generates calls one of these
 * functions per scheduled node, with pointers into one static arena. The
 * kernels are platform-free: no libc, no libm (see dnn64_math.h for the fp32
 * exp/log/tanh/erf/... used here), no allocation, no global state. A compiler may
 * still turn a copy loop into a call to memcpy/memset; the platform provides
 * those two.
 *
 * Build: compile every .c file directly in kernels/ (kernels/platform/ is the
 * platform layer) with kernels/ on the include path. C99, no libc, no libm,
 * no 64-bit division (nothing from libgcc on a 32-bit MIPS target).
 * Compile with IEEE float semantics: no -ffast-math (or at least
 * -fno-reciprocal-math -fno-finite-math-only), because the int8 resize
 * weights and QuantizeLinear's ties are defined by exact fp32 operations
 * and the NaN checks must survive.
 *
 * Hard limits and conventions:
 *   - Layout NCHW (ONNX native), row-major, batch N >= 1. All sizes are
 *     int32_t element counts; no tensor may exceed 2^31-1 elements.
 *   - Every pointer must be aligned for its element type (4 bytes for float
 *     and int32_t, 1 for int8_t, elem_size for the type-agnostic copies). No
 *     kernel needs more alignment than that.
 *   - Unless a function says otherwise, the output must not overlap any input.
 *   - Shape-agnostic copies (concat, pad, transpose, nearest resize) take an
 *     element size of 1, 2 or 4 bytes and work for fp32 and int8 alike.
 *   - DNN64_MAX_DIMS (6) bounds the rank of broadcast, pad, transpose, reduce.
 *
 * Weight streaming: Conv, ConvTranspose and Gemm take an OUTPUT-CHANNEL TILE
 * [oc_begin, oc_begin + oc_count) with the weights, bias and requantization
 * parameters of just those channels (contiguous, layouts below), and write
 * only those output channels of the full output tensor. One call with
 * oc_begin = 0, oc_count = C_out computes the whole layer.
 *
 * int8 semantics (bit-exact definition: dnn64build/quant/intmath.py):
 *   - Activations: int8, per-tensor asymmetric (scale, zero point).
 *   - Weights: int8, per-output-channel symmetric (zero point 0).
 *   - Bias: int32 with scale in_scale * w_scale[c], zero point 0.
 *   - acc = bias[c] + sum((x - x_zero_point) * w) in int32. Padded input
 *     positions hold the real value 0 (= x_zero_point) and add nothing. The
 *     accumulation cannot overflow while 32640 * K + |bias| < 2^31, K being
 *     the reduction length (C_in/group * kH * kW, or Gemm's k); e.g. K <= 65000
 *     with |bias| < 2^24; the compiler must keep layers inside this bound.
 *   - y = clamp(out_zero_point + mbqm(acc, mult[c], shift[c]), act_min, act_max),
 *     then y = lut[y + 128] when a lookup table is given.
 *   - mbqm(x, M, s) (TFLite MultiplyByQuantizedMultiplier): the real value
 *     M * 2^(s - 31); s in [-31, 30]. For s > 0, x << s saturates to int32;
 *     then gemmlowp SaturatingRoundingDoublingHighMul (nearest, ties toward
 *     +infinity, INT32_MIN * INT32_MIN -> INT32_MAX); for s < 0,
 *     RoundingDivideByPOT by -s (round half away from zero).
 *   Every other rounding choice is stated on the function that makes it.
 *
 * int8 semantics of the element-wise ops (the compiler picks the kernel):
 *   op                                  int8 kernel      semantics
 *   Relu, Clip (fused)                  output clamp     act_min/act_max of the stage
 *   LeakyRelu, Sigmoid, Tanh,           dnn64_lut_s8     y = lut[x + 128]: 256 entries
 *     HardSigmoid, HardSwish, Neg, Abs,                  clamp(round_half_away(f(real(x))
 *     Exp, Log, Sqrt, Reciprocal, Sign,                  / s_out) + zp_out), f in float64
 *     Erf, Gelu, Elu, Selu, Celu,                        at compile time; +-inf saturates,
 *     ThresholdedRelu, Softplus,                         NaN (Log, Sqrt of x < 0) gives
 *     Softsign, Mish, Shrink, Swish,                     zp_out (the real 0). Fused after
 *     Pow, PRelu with a constant                         a Conv/Gemm: the same table on
 *     scalar exponent / slope                            the requantized pre-activation.
 *   Add, Sub, Mul, Div                  dnn64_*_s8       see dnn64_add_s8 and below
 *   Max, Min                            dnn64_max_s8,    each input rescaled to the output
 *                                       dnn64_min_s8     steps (rounded, clamped), then the
 *                                                        larger / smaller
 *   PRelu (slope per channel), Pow      none             fp32 between Dequantize and
 *     (tensor exponent), LogSoftmax                      Quantize nodes
 */
#ifndef DNN64_KERNELS_H
#define DNN64_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DNN64_MAX_DIMS 6

/* ------------------------------------------------------------------------ */
/* Fixed-point primitives (also used inside the kernels).                   */
/* ------------------------------------------------------------------------ */

/* gemmlowp SaturatingRoundingDoublingHighMul: a * b / 2^31 rounded to nearest,
 * ties toward +infinity (its nudge is 2^30, or 1 - 2^30 for a negative
 * product, before a truncating division); INT32_MIN * INT32_MIN saturates to
 * INT32_MAX. */
int32_t dnn64_srdhm(int32_t a, int32_t b);

/* gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero.
 * exponent in [0, 31]. */
int32_t dnn64_rdbp(int32_t x, int32_t exponent);

/* TFLite MultiplyByQuantizedMultiplier: x * multiplier * 2^(shift - 31),
 * rounded as above; shift in [-31, 30], a left shift saturates to int32. */
int32_t dnn64_mbqm(int32_t x, int32_t multiplier, int32_t shift);

/* ------------------------------------------------------------------------ */
/* Fused activations.                                                       */
/* ------------------------------------------------------------------------ */

typedef enum {
    DNN64_ACT_NONE = 0,
    DNN64_ACT_RELU = 1,         /* max(x, 0) */
    DNN64_ACT_CLIP = 2,         /* min(max(x, alpha), beta); relu6: alpha 0, beta 6 */
    DNN64_ACT_LEAKY_RELU = 3,   /* x < 0 ? alpha * x : x */
    DNN64_ACT_SIGMOID = 4,      /* 1 / (1 + exp(-x)) */
    DNN64_ACT_TANH = 5,         /* tanh(x) */
    DNN64_ACT_HARD_SIGMOID = 6, /* max(0, min(1, alpha * x + beta)) (ONNX: 0.2, 0.5) */
    DNN64_ACT_HARD_SWISH = 7,   /* x * max(0, min(1, x / 6 + 0.5)) */
    DNN64_ACT_SILU = 8,         /* x * sigmoid(x) */
    /* Unary element-wise ops (stand-alone ONNX ops; the functions of dnn64_math.h). */
    DNN64_ACT_NEG = 9,          /* -x */
    DNN64_ACT_ABS = 10,         /* |x| */
    DNN64_ACT_EXP = 11,         /* exp(x) */
    DNN64_ACT_LOG = 12,         /* ln(x) */
    DNN64_ACT_SQRT = 13,        /* sqrt(x) */
    DNN64_ACT_RECIPROCAL = 14,  /* 1 / x */
    DNN64_ACT_SIGN = 15,        /* -1, 0 or 1 (NaN stays NaN) */
    DNN64_ACT_ERF = 16,         /* erf(x) */
    DNN64_ACT_GELU = 17,        /* x (1 + erf(x / sqrt 2)) / 2 */
    DNN64_ACT_GELU_TANH = 18,   /* x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2 */
    DNN64_ACT_ELU = 19,         /* x < 0 ? alpha (exp(x) - 1) : x */
    DNN64_ACT_SELU = 20,        /* beta (x <= 0 ? alpha (exp(x) - 1) : x) (beta: ONNX gamma) */
    DNN64_ACT_CELU = 21,        /* max(0, x) + min(0, alpha (exp(x / alpha) - 1)) */
    DNN64_ACT_THRESHOLDED_RELU = 22, /* x > alpha ? x : 0 */
    DNN64_ACT_SOFTPLUS = 23,    /* ln(1 + exp(x)) */
    DNN64_ACT_SOFTSIGN = 24,    /* x / (1 + |x|) */
    DNN64_ACT_MISH = 25,        /* x tanh(softplus(x)) */
    DNN64_ACT_SHRINK = 26,      /* x < -alpha ? x + beta : x > alpha ? x - beta : 0 */
    DNN64_ACT_SWISH = 27        /* x sigmoid(alpha x) */
} dnn64_act_kind;

/* An fp32 activation: kind is a dnn64_act_kind; alpha/beta as documented on
 * the kind, ignored otherwise. Accuracy: see dnn64_math.h. */
typedef struct {
    int32_t kind;
    float alpha;
    float beta;
} dnn64_act_f32;

/* Apply act to count floats. x, y: count floats; y may equal x (in place).
 * act may be NULL (copy). */
void dnn64_activation_f32(const dnn64_act_f32 *act, const float *x, float *y, int32_t count);

/* int8 activation by table: y[i] = lut[x[i] + 128]. lut: 256 int8 built by
 * the compiler (intmath.activation_lut). x, y: count int8; y may equal x. */
void dnn64_lut_s8(const int8_t *lut, const int8_t *x, int8_t *y, int32_t count);

/* The output stage of an int8 Conv/ConvTranspose/Gemm/MatMul.
 * act_min/act_max: clamp bounds in output steps, -128 <= act_min <= act_max
 * <= 127 (ReLU: act_min = out_zero_point). lut: NULL, or 256 int8 applied
 * after the clamp for a non-linear activation (the requantized value is then
 * in the pre-activation quantization that the table was built for). */
typedef struct {
    int32_t out_zero_point;
    int32_t act_min;
    int32_t act_max;
    const int8_t *lut;
} dnn64_q8_out;

/* ------------------------------------------------------------------------ */
/* Convolution and transposed convolution.                                  */
/* ------------------------------------------------------------------------ */

/* Geometry of a Conv or ConvTranspose. The caller resolves auto_pad,
 * output_padding and output_shape: h_out/w_out are final, and pad_top /
 * pad_left are the begin pads (end pads follow from the output size). Conv
 * also takes negative begin pads (the first window starts past the first
 * input row/column), as the region kernels below use them.
 * Conv:          oy = (iy + pad_top - ky * dil_h) / stride_h
 *                (iy = oy * stride_h - pad_top + ky * dil_h).
 * ConvTranspose: oy = iy * stride_h - pad_top + ky * dil_h.
 * group divides c_in and c_out. */
typedef struct {
    int32_t n, c_in, h_in, w_in;
    int32_t c_out, h_out, w_out;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w;
    int32_t dil_h, dil_w;
    int32_t pad_top, pad_left;
    int32_t group;
} dnn64_conv_geom;

/* fp32 Conv of output channels [oc_begin, oc_begin + oc_count).
 *   x:      in,  [n, c_in, h_in, w_in] floats.
 *   w_tile: in,  [oc_count, c_in/group, k_h, k_w] floats: rows oc_begin.. of
 *           the ONNX weight [c_out, c_in/group, k_h, k_w] (a contiguous slice).
 *   b_tile: in,  oc_count floats (bias of the tile), or NULL for no bias.
 *   act:    in,  fused activation, or NULL for none.
 *   y:      out, [n, c_out, h_out, w_out] floats; only the tile's channels written.
 * Fast paths (same results): 1x1 (kernel 1x1, stride 1, no pad, any group)
 * register-blocked, and outputs whose window lies inside the input. Every
 * path accumulates in the order bias, then input channel, ky, kx ascending.
 * Uses up to 2 KiB of stack. */
void dnn64_conv_f32(const dnn64_conv_geom *g, const float *x, const float *w_tile,
                    const float *b_tile, int32_t oc_begin, int32_t oc_count,
                    const dnn64_act_f32 *act, float *y);

/* int8 Conv of output channels [oc_begin, oc_begin + oc_count).
 *   x:            in,  [n, c_in, h_in, w_in] int8, zero point x_zero_point.
 *   w_tile:       in,  [oc_count, c_in/group, k_h, k_w] int8 (slice as for fp32).
 *   bias_tile:    in,  oc_count int32, or NULL for zero bias.
 *   mult_tile, shift_tile: in, oc_count int32 each (per-channel requant).
 *   q:            in,  output stage (zero point, clamp, optional LUT).
 *   y:            out, [n, c_out, h_out, w_out] int8; only the tile written.
 * Uses up to 17 KiB of stack (a padded depthwise plane of 16 KiB). */
void dnn64_conv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                   const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                   const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                   const dnn64_q8_out *q, int8_t *y);

/* fp32 ConvTranspose of output channels [oc_begin, oc_begin + oc_count).
 * The ONNX weight is [c_in, c_out/group, k_h, k_w]; the TILE is reordered
 * output-channel-major, like a Conv weight:
 *   w_tile[t][i][ky][kx] = W[gi * (c_in/group) + i][oc % (c_out/group)][ky][kx]
 *   with oc = oc_begin + t, gi = oc / (c_out/group), t < oc_count, i < c_in/group;
 *   shape [oc_count, c_in/group, k_h, k_w] floats.
 * x: [n, c_in, h_in, w_in]; b_tile: oc_count or NULL; act: or NULL;
 * y: [n, c_out, h_out, w_out], only the tile's channels written. Each output
 * is gathered (bias, then ky, kx, input channel ascending), never scattered. */
void dnn64_conv_transpose_f32(const dnn64_conv_geom *g, const float *x, const float *w_tile,
                              const float *b_tile, int32_t oc_begin, int32_t oc_count,
                              const dnn64_act_f32 *act, float *y);

/* int8 ConvTranspose: tile layout as dnn64_conv_transpose_f32, arithmetic as
 * dnn64_conv_s8 (bias, mult, shift: oc_count int32 each). */
void dnn64_conv_transpose_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                             const int8_t *w_tile, const int32_t *bias_tile,
                             const int32_t *mult_tile, const int32_t *shift_tile,
                             int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                             int8_t *y);

/* ------------------------------------------------------------------------ */
/* Gemm / MatMul.                                                           */
/* ------------------------------------------------------------------------ */

/* fp32 Y[m][oc] = act(sum_k A[m][k] * B(k, oc) + bias[oc]) for the output
 * columns oc in [oc_begin, oc_begin + oc_count). ONNX Gemm alpha/beta are
 * folded into B and bias by the compiler; transA is resolved by a Transpose;
 * a MatMul with constant B is this with trans_b = 0 and m = product of A's
 * leading dims.
 *   a:      in,  [m, k] floats.
 *   b_tile: in,  trans_b != 0: [oc_count, k] (rows oc_begin.. of B[n, k]);
 *                trans_b == 0: [k, oc_count] (columns oc_begin.. of B[k, n],
 *                gathered row-major by the compiler).
 *   bias_tile: in, oc_count floats, or NULL.
 *   y:      out, [m, n] floats; only columns of the tile written. */
void dnn64_gemm_f32(int32_t m, int32_t k, int32_t n, const float *a, const float *b_tile,
                    int32_t trans_b, const float *bias_tile, int32_t oc_begin, int32_t oc_count,
                    const dnn64_act_f32 *act, float *y);

/* int8 Gemm: tiles as dnn64_gemm_f32; per-output-column (channel) weights,
 * bias, mult, shift (oc_count each); arithmetic as dnn64_conv_s8 with
 * reduction length k. a: [m, k] int8 with zero point a_zero_point. */
void dnn64_gemm_s8(int32_t m, int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                   const int8_t *b_tile, int32_t trans_b, const int32_t *bias_tile,
                   const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                   int32_t oc_count, const dnn64_q8_out *q, int8_t *y);

/* fp32 batched MatMul of two activations: for each b < batch,
 * Y[b] = A[b] @ B[b] with A[b] at a + b * a_batch_stride ([m, k]), B[b] at
 * b + b * b_batch_stride ([k, n]), Y[b] at y + b * m * n ([m, n]). A stride
 * of 0 broadcasts that operand. */
void dnn64_matmul_f32(int32_t batch, int32_t m, int32_t k, int32_t n, const float *a,
                      int32_t a_batch_stride, const float *b, int32_t b_batch_stride, float *y);

/* int8 batched MatMul of two activations (both per-tensor asymmetric):
 * acc = sum (a - a_zero_point) * (b - b_zero_point) (no overflow for
 * k <= 33025 = 2^31 / 255^2); one (multiplier, shift) for the tensor; output
 * stage q. Layouts as dnn64_matmul_f32. */
void dnn64_matmul_s8(int32_t batch, int32_t m, int32_t k, int32_t n, const int8_t *a,
                     int32_t a_batch_stride, int32_t a_zero_point, const int8_t *b,
                     int32_t b_batch_stride, int32_t b_zero_point, int32_t multiplier,
                     int32_t shift, const dnn64_q8_out *q, int8_t *y);

/* ------------------------------------------------------------------------ */
/* Pooling.                                                                 */
/* ------------------------------------------------------------------------ */

/* Geometry of a MaxPool/AveragePool over [n, c, h_in, w_in] ->
 * [n, c, h_out, w_out]. The caller resolves auto_pad and ceil_mode into
 * h_out/w_out; pads are the four ONNX pads (end pads matter only to
 * AveragePool with count_include_pad, which counts window positions inside
 * the padded input [-pad_top, h_in + pad_bottom), as onnxruntime does).
 * Window start: oy * stride_h - pad_top; taps ky * dil_h. */
typedef struct {
    int32_t n, c, h_in, w_in;
    int32_t h_out, w_out;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w;
    int32_t dil_h, dil_w;
    int32_t pad_top, pad_left, pad_bottom, pad_right;
} dnn64_pool_geom;

/* MaxPool; padded positions never win. A window with no input position
 * gives -FLT_MAX (fp32) or -128 (int8). x: [n, c, h_in, w_in]; y: [n, c,
 * h_out, w_out]. int8: input and output share quantization. */
void dnn64_maxpool_f32(const dnn64_pool_geom *g, const float *x, float *y);
void dnn64_maxpool_s8(const dnn64_pool_geom *g, const int8_t *x, int8_t *y);

/* AveragePool. count_include_pad != 0 divides by the window positions inside
 * the padded input, else by the valid positions. int8 (TFLite): input and
 * output share quantization; padded positions count as x_zero_point (real 0);
 * y = clamp(round_half_away(sum / count), act_min, act_max) with
 * round_half_away(s / c) = s > 0 ? (s + c/2) / c : (s - c/2) / c (C division).
 * Layouts as MaxPool. A window with nothing to count gives 0 (fp32) or
 * x_zero_point (int8). */
void dnn64_avgpool_f32(const dnn64_pool_geom *g, int32_t count_include_pad, const float *x,
                       float *y);
void dnn64_avgpool_s8(const dnn64_pool_geom *g, int32_t count_include_pad,
                      int32_t x_zero_point, int32_t act_min, int32_t act_max, const int8_t *x,
                      int8_t *y);

/* GlobalAveragePool of planes = N*C planes of hw = H*W elements each.
 * x: [planes, hw]; y: [planes]. int8 rounding as dnn64_avgpool_s8 (shared
 * quantization, hw <= 2^24). */
void dnn64_global_avgpool_f32(int32_t planes, int32_t hw, const float *x, float *y);
void dnn64_global_avgpool_s8(int32_t planes, int32_t hw, int32_t act_min, int32_t act_max,
                             const int8_t *x, int8_t *y);

/* ------------------------------------------------------------------------ */
/* Regions: Conv and pooling on part of the output (fused groups).           */
/* ------------------------------------------------------------------------ */

/* A rectangle of every channel plane of an [n*c, h, w] tensor as stored in
 * some buffer: tensor rows [row0, row0 + rows) x cols [col0, col0 + cols).
 * Element (row0 + r, col0 + k) of plane p is at
 * buffer[offset + p * plane_stride + r * row_stride + k] (elements). */
typedef struct {
    int32_t row0, rows, col0, cols;
    int32_t offset, row_stride, plane_stride;
} dnn64_region;

/* Conv (dnn64_conv_f32 / _s8) of the output region yr, written to y at yr's
 * layout (output channel oc at plane oc), from the input region xr held in x.
 *   xr: every in-bounds tap of every output in yr lies inside it (taps outside
 *       xr are taken to be padding). Its rows must be compact: row_stride ==
 *       cols, and plane_stride == rows * cols when c_in / group > 1.
 *   y:  must not overlap x. yr may have any strides (one kernel call per
 *       channel when row_stride == cols, else per channel and row).
 * Other arguments and the arithmetic (bit for bit) as the whole-tensor kernel. */
void dnn64_conv_region_f32(const dnn64_conv_geom *g, const dnn64_region *xr, const float *x,
                           const float *w_tile, const float *b_tile, int32_t oc_begin,
                           int32_t oc_count, const dnn64_act_f32 *act,
                           const dnn64_region *yr, float *y);
void dnn64_conv_region_s8(const dnn64_conv_geom *g, const dnn64_region *xr, const int8_t *x,
                          int32_t x_zero_point, const int8_t *w_tile, const int32_t *bias_tile,
                          const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                          int32_t oc_count, const dnn64_q8_out *q, const dnn64_region *yr,
                          int8_t *y);

/* MaxPool / AveragePool of the output region yr from the input region xr
 * (same contract as dnn64_conv_region_*, any strides for both). */
void dnn64_maxpool_region_f32(const dnn64_pool_geom *g, const dnn64_region *xr, const float *x,
                              const dnn64_region *yr, float *y);
void dnn64_maxpool_region_s8(const dnn64_pool_geom *g, const dnn64_region *xr,
                             const int8_t *x, const dnn64_region *yr, int8_t *y);
void dnn64_avgpool_region_f32(const dnn64_pool_geom *g, int32_t count_include_pad,
                              const dnn64_region *xr, const float *x, const dnn64_region *yr,
                              float *y);
void dnn64_avgpool_region_s8(const dnn64_pool_geom *g, int32_t count_include_pad,
                             int32_t x_zero_point, int32_t act_min, int32_t act_max,
                             const dnn64_region *xr, const int8_t *x, const dnn64_region *yr,
                             int8_t *y);

/* The row buffer of a row-streamed group moves on: in buf, planes planes of
 * old_rows rows (row_bytes each) become planes of new_rows rows whose first
 * keep_rows rows are old rows [keep_from, keep_from + keep_rows).
 * keep_from + keep_rows <= old_rows, keep_rows <= new_rows. */
void dnn64_region_keep(uint8_t *buf, int32_t planes, int32_t row_bytes, int32_t old_rows,
                       int32_t keep_from, int32_t keep_rows, int32_t new_rows);

/* Rows [lo, hi) (all columns) of a compact row buffer holding rows [held_lo, held_hi)
 * of a tensor `width` wide: every plane's held rows back to back (a whole tensor is
 * the buffer holding all its rows). Used by dag groups. */
dnn64_region dnn64_rows_region(int32_t held_lo, int32_t held_hi, int32_t lo, int32_t hi,
                               int32_t width);

/* A dag group's firings, run-length coded (dnn64build/codegen/firings.py): run k
 * stands for template rows [first, first + count) repeated `times` times, repetition
 * r adding r * step to each field. A template row: the stage, DNN64_FIRING_FIELDS
 * fields (first row, end row, rows held before (lo, hi) and after (lo, hi)), then
 * each field's step. */
#define DNN64_FIRING_FIELDS 6
typedef struct {
    int32_t first, count, times;
} dnn64_firing_run;

/* A walk over coded firings: set runs, templates and run_count, the rest to 0. */
typedef struct {
    const dnn64_firing_run *runs;
    const int16_t (*templates)[1 + 2 * DNN64_FIRING_FIELDS];
    int32_t run_count;
    int32_t run, rep, row; /* where the walk is */
} dnn64_firings;

/* The next firing into f[0 .. DNN64_FIRING_FIELDS] (its stage, then its fields); 0 when
 * there is none left. */
int32_t dnn64_next_firing(dnn64_firings *walk, int32_t *f);

/* ------------------------------------------------------------------------ */
/* Element-wise binary ops with numpy broadcasting.                         */
/* ------------------------------------------------------------------------ */

/* Broadcast description: the output has `rank` (1..DNN64_MAX_DIMS) dims
 * `dims` (row-major, contiguous); element (i0..ir-1) reads
 * a[sum i_d * a_strides[d]] and b[sum i_d * b_strides[d]]: element strides,
 * 0 along broadcast dims. The caller right-aligns the ONNX shapes. */
typedef struct {
    int32_t rank;
    int32_t dims[DNN64_MAX_DIMS];
    int32_t a_strides[DNN64_MAX_DIMS];
    int32_t b_strides[DNN64_MAX_DIMS];
} dnn64_bcast;

typedef enum {
    DNN64_BINARY_ADD = 0,
    DNN64_BINARY_SUB = 1,
    DNN64_BINARY_MUL = 2,
    DNN64_BINARY_DIV = 3, /* IEEE division (x / 0 gives inf or nan) */
    DNN64_BINARY_MAX = 4, /* a > b ? a : b (ONNX Max of two inputs) */
    DNN64_BINARY_MIN = 5, /* a < b ? a : b */
    DNN64_BINARY_PRELU = 6, /* a < 0 ? a * b : a (b: the slope) */
    DNN64_BINARY_POW = 7 /* a ^ b (dnn64_powf: an integral b takes a negative a) */
} dnn64_binary_op;

/* fp32 y = a op b. y may equal a (or b) when that operand is not broadcast
 * (its strides are the contiguous output strides). */
void dnn64_binary_f32(int32_t op, const dnn64_bcast *bc, const float *a, const float *b,
                      float *y);

/* int8 Add/Sub parameters (TFLite int8 Add, intmath.add_params): each
 * input is (x - zp) << left_shift (20), scaled by its (mult, shift); the
 * sum (or difference) is scaled by (out_mult, out_shift), out_zero_point is
 * added and the result clamped to [act_min, act_max]. `tables`: NULL, or the
 * 512 values the kernel would fold the output stage into (dnn64_eltwise.c; built at
 * compile time by intmath.add_tables for this op, Add or Sub), saving the 512
 * requantisations of building them. */
typedef struct {
    int32_t a_zero_point, b_zero_point, out_zero_point;
    int32_t a_mult, a_shift, b_mult, b_shift, out_mult, out_shift;
    int32_t left_shift;
    int32_t act_min, act_max;
    const int32_t *tables;
} dnn64_add_s8_params;

/* int8 Mul/Div parameters (intmath.mul_params / div_params). */
typedef struct {
    int32_t a_zero_point, b_zero_point, out_zero_point;
    int32_t mult, shift;
    int32_t act_min, act_max;
} dnn64_mul_s8_params;

/* int8 Max/Min parameters (intmath.minmax_params): each input's rescale to the
 * output steps, (a_mult, a_shift) = quantize_multiplier(a_scale / out_scale), b alike. */
typedef struct {
    int32_t a_zero_point, b_zero_point, out_zero_point;
    int32_t a_mult, a_shift, b_mult, b_shift;
} dnn64_minmax_s8_params;

/* int8 Max / Min (intmath.minmax_s8): ra = clamp(zp_out + mbqm(a - zp_a, a_mult,
 * a_shift), -128, 127), rb alike, y = max(ra, rb) (min(ra, rb)). Aliasing rule as
 * dnn64_binary_f32. */
void dnn64_max_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_minmax_s8_params *p, int8_t *y);
void dnn64_min_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_minmax_s8_params *p, int8_t *y);

/* int8 element-wise ops; aliasing rule as dnn64_binary_f32.
 * add/sub: TFLite (see dnn64_add_s8_params).
 * mul: y = clamp(zp_out + mbqm((a - zp_a) * (b - zp_b), mult, shift)).
 * div: t = ((a - zp_a) * 2^16) / (b - zp_b) rounded half away from zero,
 *      y = clamp(zp_out + mbqm(t, mult, shift)); a zero divisor gives act_max
 *      (a > zp_a), act_min (a < zp_a) or clamp(zp_out) (a == zp_a). */
void dnn64_add_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_add_s8_params *p, int8_t *y);
void dnn64_sub_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_add_s8_params *p, int8_t *y);
void dnn64_mul_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_mul_s8_params *p, int8_t *y);
void dnn64_div_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                  const dnn64_mul_s8_params *p, int8_t *y);

/* ------------------------------------------------------------------------ */
/* Data movement (any element type of elem_size 1, 2 or 4 bytes).           */
/* ------------------------------------------------------------------------ */

/* One input of a Concat: the tensors are viewed as [outer, axis_len * inner].
 * Copies x ([outer, x_span]) into y ([outer, y_span]) at column y_offset;
 * spans and offset in elements (axis length times the inner size). The
 * generated code calls this once per input. int8: inputs and output share
 * quantization (the compiler requantizes others first). */
void dnn64_concat_copy(int32_t elem_size, int32_t outer, int32_t x_span, int32_t y_span,
                       int32_t y_offset, const void *x, void *y);

typedef enum {
    DNN64_PAD_CONSTANT = 0,
    DNN64_PAD_REFLECT = 1, /* mirror without repeating the edge, periodic for big pads */
    DNN64_PAD_EDGE = 2
} dnn64_pad_mode;

/* Pad: y[o] = x[o - pads_begin] where inside, else per mode. rank <= 6;
 * in_dims, pads_begin, out_dims: rank int32 each (negative pads crop).
 * value: one element of elem_size bytes (constant mode; NULL means zero).
 * x: prod(in_dims) elements; y: prod(out_dims) elements. */
void dnn64_pad(int32_t elem_size, int32_t rank, const int32_t *in_dims,
               const int32_t *pads_begin, const int32_t *out_dims, int32_t mode,
               const void *value, const void *x, void *y);

/* Transpose: y dims[i] = in_dims[perm[i]]. rank <= 6; in_dims, perm: rank
 * int32 each. x, y: prod(in_dims) elements. */
void dnn64_transpose(int32_t elem_size, int32_t rank, const int32_t *in_dims,
                     const int32_t *perm, const void *x, void *y);

/* ------------------------------------------------------------------------ */
/* Resize over the last two dims of [planes = N*C, h, w].                   */
/* ------------------------------------------------------------------------ */

typedef enum {
    DNN64_COORD_HALF_PIXEL = 0,         /* (o + 0.5) / scale - 0.5 */
    DNN64_COORD_ASYMMETRIC = 1,         /* o / scale */
    DNN64_COORD_ALIGN_CORNERS = 2,      /* o * (in - 1) / (out - 1), 0 if out == 1 */
    DNN64_COORD_PYTORCH_HALF_PIXEL = 3  /* half_pixel, 0 if out == 1 */
} dnn64_coord_mode;

typedef enum {
    DNN64_NEAREST_ROUND_PREFER_FLOOR = 0,
    DNN64_NEAREST_ROUND_PREFER_CEIL = 1,
    DNN64_NEAREST_FLOOR = 2,
    DNN64_NEAREST_CEIL = 3
} dnn64_nearest_mode;

/* Source coordinates are computed in float32 exactly as written on the
 * modes (as onnxruntime); scale_h/scale_w are the ONNX scales (out/in when
 * the model gives sizes). Nearest indices are clamped to [0, in - 1].
 * x: [planes, h_in, w_in]; y: [planes, h_out, w_out]. */
void dnn64_resize_nearest(int32_t elem_size, int32_t planes, int32_t h_in, int32_t w_in,
                          int32_t h_out, int32_t w_out, float scale_h, float scale_w,
                          int32_t coord_mode, int32_t nearest_mode, const void *x, void *y);

/* Bilinear: the source coordinate is clamped to [0, in - 1], i0 = floor,
 * i1 = min(i0 + 1, in - 1), f = coordinate - i0.
 * fp32: y = (1-fy)((1-fx) v00 + fx v01) + fy((1-fx) v10 + fx v11).
 * int8 (shared quantization): per axis w1 = (int32)(f * 2048 + 0.5f) (Q11),
 * w0 = 2048 - w1; acc = wy0 (wx0 v00 + wx1 v01) + wy1 (wx0 v10 + wx1 v11);
 * y = rdbp(acc, 22) (round half away from zero). */
void dnn64_resize_linear_f32(int32_t planes, int32_t h_in, int32_t w_in, int32_t h_out,
                             int32_t w_out, float scale_h, float scale_w, int32_t coord_mode,
                             const float *x, float *y);
void dnn64_resize_linear_s8(int32_t planes, int32_t h_in, int32_t w_in, int32_t h_out,
                            int32_t w_out, float scale_h, float scale_w, int32_t coord_mode,
                            const int8_t *x, int8_t *y);

/* ------------------------------------------------------------------------ */
/* Softmax, ReduceMean, (de)quantization.                                   */
/* ------------------------------------------------------------------------ */

/* Softmax along one axis of a tensor viewed as [outer, axis_len, inner].
 * x, y: outer * axis_len * inner elements; y may equal x.
 * fp32: max-subtracted exp (dnn64_expf), sum, multiply by 1/sum.
 * int8 (integer-only, intmath.softmax_s8): e = exp_table[max - x] (256 int32,
 * Q16, intmath.softmax_exp_table), sum in int32 (axis_len <= 32767),
 * p = (e * 2^14 + sum / 2) / sum, y = clamp(out_zero_point + mbqm(p, mult,
 * shift), -128, 127) with (mult, shift) from intmath.softmax_out_multiplier. */
void dnn64_softmax_f32(int32_t outer, int32_t axis_len, int32_t inner, const float *x, float *y);
/* fp32 LogSoftmax, same layout: y = x - (max + ln(sum(exp(x - max)))) (dnn64_expf,
 * dnn64_logf). y may equal x. */
void dnn64_log_softmax_f32(int32_t outer, int32_t axis_len, int32_t inner, const float *x,
                           float *y);
void dnn64_softmax_s8(int32_t outer, int32_t axis_len, int32_t inner, const int8_t *x,
                      const int32_t *exp_table, int32_t mult, int32_t shift,
                      int32_t out_zero_point, int8_t *y);

/* ReduceMean (keepdims either way: the output is dense) over the dims with
 * bit (1 << d) set in axes_mask. rank <= 6; in_dims: rank int32.
 * x: prod(in_dims); y: product of the kept dims.
 * fp32: sum in order of increasing input offset, then multiply by 1/count.
 * int8: y = clamp(out_zero_point + mbqm(sum(x - x_zero_point), mult, shift),
 * -128, 127), (mult, shift) = quantize_multiplier(s_in / (s_out * count)). */
void dnn64_reduce_mean_f32(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                           const float *x, float *y);
void dnn64_reduce_mean_s8(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                          int32_t x_zero_point, int32_t mult, int32_t shift,
                          int32_t out_zero_point, const int8_t *x, int8_t *y);

/* LRN (LocalResponseNormalization, ONNX) across the channels of a tensor viewed
 * as [n, c, inner]: y = x / (bias + alpha / size * sum of x^2 over the channels
 * [ch - floor((size-1)/2), ch + ceil((size-1)/2)] clipped to [0, c-1])^beta.
 * x, y: n * c * inner floats; y must not overlap x (x is read across channels).
 * fp32: the power as dnn64_expf(-beta * dnn64_logf(d)). No int8 kernel: an LRN
 * between int8 tensors runs in fp32 between a DequantizeLinear and a
 * QuantizeLinear (the quantizer inserts them). */
void dnn64_lrn_f32(int32_t n, int32_t c, int32_t inner, int32_t size, float alpha, float beta,
                   float bias, const float *x, float *y);

/* LayerNormalization over the last `inner` values of each of `outer` rows:
 * y = (x - mean) / sqrt(var + epsilon) * scale + bias (var the biased
 * variance, two passes; 1/sqrt as dnn64_expf(-0.5 * dnn64_logf(.))).
 * x, y: outer * inner floats (y may equal x); scale: inner floats; bias:
 * inner floats or NULL. No int8 kernel: between int8 tensors it runs in fp32
 * between a DequantizeLinear and a QuantizeLinear, as LRN. */
void dnn64_layer_norm_f32(int32_t outer, int32_t inner, float epsilon, const float *x,
                          const float *scale, const float *bias, float *y);

/* ReduceSum and ReduceMax: dims and axes_mask as dnn64_reduce_mean_f32.
 * fp32 sum: in order of increasing input offset. Max: of the reduced elements
 * (int8: exact, the output keeps the input's quantization). int8 ReduceSum
 * is dnn64_reduce_mean_s8 with (mult, shift) = quantize_multiplier(s_in / s_out). */
void dnn64_reduce_sum_f32(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                          const float *x, float *y);
void dnn64_reduce_max_f32(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                          const float *x, float *y);
void dnn64_reduce_max_s8(int32_t rank, const int32_t *in_dims, int32_t axes_mask,
                         const int8_t *x, int8_t *y);

/* Strided copy (Transpose, Expand, Tile): y, row-major over out_dims, gets
 * y[i0, ..., i(rank-1)] = x[sum(i_d * src_strides[d])]; a stride of 0
 * repeats (broadcasts) the source along that dim. 1 <= rank <= 6; out_dims,
 * src_strides: rank int32 each (strides in elements). */
void dnn64_strided_copy(int32_t elem_size, int32_t rank, const int32_t *out_dims,
                        const int32_t *src_strides, const void *x, void *y);

/* Gather along one axis: x viewed as [outer, rows, inner], y as [outer,
 * count, inner]; y[o, j, :] = x[o, indices[j], :]. indices: count int32 (a
 * negative index counts from the end, as ONNX says; one outside [-rows, rows)
 * is clamped to the nearest row: never a read outside x). x and y must not
 * overlap. int8: the output keeps x's quantization. */
void dnn64_gather(int32_t elem_size, int32_t outer, int32_t rows, int32_t inner,
                  const void *x, const int32_t *indices, int32_t count, void *y);

/* Where with a constant condition: y[i] = mask[i] ? a[.] : b[.], the operands
 * read through bc (their broadcast to bc->dims, as dnn64_binary_f32). mask:
 * prod(bc->dims) bytes, the condition broadcast to the output by the compiler.
 * y must not overlap a or b. Element-size generic (fp32; no int8 kernel: between
 * int8 tensors Where runs in fp32 between Dequantize/QuantizeLinear). */
void dnn64_select(int32_t elem_size, const dnn64_bcast *bc, const uint8_t *mask, const void *a,
                  const void *b, void *y);

/* QuantizeLinear: y = clamp(round_half_even(x / scale) + zero_point, -128, 127)
 * (division, as onnxruntime; NaN gives zero_point). x: count floats; y: count int8. */
void dnn64_quantize_f32_s8(const float *x, int32_t count, float scale, int32_t zero_point,
                           int8_t *y);

/* DequantizeLinear: y = (float)(x - zero_point) * scale. x: count int8;
 * y: count floats. */
void dnn64_dequantize_s8_f32(const int8_t *x, int32_t count, float scale, int32_t zero_point,
                             float *y);

/* Requantize int8 to other parameters (e.g. before a Concat):
 * y = clamp(out_zero_point + mbqm(x - x_zero_point, mult, shift), -128, 127).
 * y may equal x. */
void dnn64_requantize_s8(const int8_t *x, int32_t count, int32_t x_zero_point, int32_t mult,
                         int32_t shift, int32_t out_zero_point, int8_t *y);

#ifdef __cplusplus
}
#endif

#endif /* DNN64_KERNELS_H */
