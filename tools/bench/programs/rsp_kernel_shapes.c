/* rsp_kernel_shapes.c - CPU cycles of one int8 layer per kernel, for
 * tools/bench/bench_rsp_kernels.py: for each shape below (MobileNetV3-Small's depthwise,
 * 1x1 (with the squeeze-excite's 1x1 Convs on one position), squeeze-excite Mul and
 * stem layer shapes at 224x224, and MnasNet-0.5's 1x1 Conv of 8 input channels and its
 * stride-1 depthwise ones), dnn64_conv_s8 / dnn64_mul_s8 on the CPU,
 * dnn64_rsp_conv_s8 (the CPU packing and queueing matmul_s8 jobs; for the stem
 * stem_s8.rsp, whose RSP fetches its own data) and the kernel
 * whose RSP fetches its own data (dnn64_rsp_dwconv_s8, dnn64_rsp_pwconv_s8,
 * dnn64_rsp_mul_channels_s8), and for the classifier's Gemms of one row and the
 * squeeze-excite's 1x1 Convs on one position (which codegen sends to
 * dnn64_rsp_gemv_dma_s8) dnn64_gemm_s8, dnn64_rsp_gemv_s8 and dnn64_rsp_gemv_dma_s8 (its
 * weights blocked as codegen lays them out), and GlobalAveragePool (the planes just
 * written back, as after an RSP kernel) by dnn64_global_avgpool_s8 and
 * dnn64_rsp_global_avgpool_s8. Prints per shape and kernel
 *   <shape> <kernel> <CPU cycles (Count x 2)> <1 if its y equals the CPU kernel's>
 * Inputs, weights and biases are fixed pseudo-random bytes; every channel's output
 * stage is one the RSP takes. */
#include "dnn64_kernels.h"
#include "dnn64_platform.h"
#include "dnn64_rsp.h"

#define X_MAX (24 * 112 * 112) /* the largest input and output */
#define W_MAX (1024 * 1000)
#define C_MAX 1024

static int8_t DNN64_ALIGNED(x[X_MAX]);
static int8_t DNN64_ALIGNED(y_cpu[X_MAX]);
static int8_t DNN64_ALIGNED(y_rsp[X_MAX]);
static int8_t DNN64_ALIGNED(w[W_MAX]);
static int8_t DNN64_ALIGNED(w_blocks[W_MAX]); /* w in dnn64_rsp_gemv_dma_s8's layout */
static int32_t bias[C_MAX], mult[C_MAX], shift[C_MAX];

typedef void (*conv_fn)(const dnn64_conv_geom *, const int8_t *, int32_t, const int8_t *,
                        const int32_t *, const int32_t *, const int32_t *, int32_t, int32_t,
                        const dnn64_q8_out *, int8_t *);

static uint64_t cycles_since(uint64_t t0)
{
    return (dnn64_ticks() - t0) * 2u;
}

static void report(const char *shape, const char *kernel, uint64_t cycles, int32_t count)
{
    int32_t i, same = 1;
    dnn64_line line;
    for (i = 0; i < count; i++)
        same &= y_rsp[i] == y_cpu[i];
    dnn64_line_begin(&line, shape);
    dnn64_line_str(&line, " ");
    dnn64_line_str(&line, kernel);
    dnn64_line_u64(&line, cycles);
    dnn64_line_u64(&line, (uint64_t)same);
    dnn64_line_end(&line);
}

static void conv(const char *shape, int32_t c_in, int32_t c_out, int32_t h, int32_t k,
                 int32_t s, int32_t group, conv_fn own, const char *own_name) /* own: or 0 */
{
    dnn64_conv_geom g;
    dnn64_q8_out q;
    uint64_t t0;
    const int32_t count = c_out * ((h + 2 * (k / 2) - k) / s + 1) * ((h + 2 * (k / 2) - k) / s + 1);
    g.n = 1, g.c_in = c_in, g.h_in = h, g.w_in = h, g.c_out = c_out;
    g.h_out = (h + 2 * (k / 2) - k) / s + 1, g.w_out = g.h_out;
    g.k_h = k, g.k_w = k, g.stride_h = s, g.stride_w = s, g.dil_h = 1, g.dil_w = 1;
    g.pad_top = k / 2, g.pad_left = k / 2, g.group = group;
    q.out_zero_point = 3, q.act_min = -128, q.act_max = 127, q.lut = 0;
    t0 = dnn64_ticks();
    dnn64_conv_s8(&g, x, 5, w, bias, mult, shift, 0, c_out, &q, y_cpu);
    report(shape, "cpu", cycles_since(t0), 0);
    t0 = dnn64_ticks();
    dnn64_rsp_conv_s8(&g, x, 5, w, bias, mult, shift, 0, c_out, &q, y_rsp);
    report(shape, "rsp_conv", cycles_since(t0), count);
    if (!own)
        return;
    t0 = dnn64_ticks();
    own(&g, x, 5, w, bias, mult, shift, 0, c_out, &q, y_rsp);
    report(shape, own_name, cycles_since(t0), count);
}

static void mul(const char *shape, int32_t c, int32_t h)
{
    dnn64_mul_s8_params p;
    dnn64_bcast bc;
    uint64_t t0;
    p.a_zero_point = 5, p.b_zero_point = -128, p.out_zero_point = 3;
    p.mult = 1300000000, p.shift = -8, p.act_min = -128, p.act_max = 127;
    bc.rank = 3, bc.dims[0] = c, bc.dims[1] = h, bc.dims[2] = h;
    bc.a_strides[0] = h * h, bc.a_strides[1] = h, bc.a_strides[2] = 1;
    bc.b_strides[0] = 1, bc.b_strides[1] = 0, bc.b_strides[2] = 0;
    t0 = dnn64_ticks();
    dnn64_mul_s8(&bc, x, w, &p, y_cpu);
    report(shape, "cpu", cycles_since(t0), 0);
    t0 = dnn64_ticks();
    dnn64_rsp_mul_channels_s8(&bc, x, w, &p, y_rsp, c, h, h, 1);
    report(shape, "rsp_mul_channels", cycles_since(t0), c * h * h);
}

static void gemv(const char *shape, int32_t k, int32_t n)
{
    dnn64_q8_out q;
    uint64_t t0;
    int32_t i;
    q.out_zero_point = 3, q.act_min = -128, q.act_max = 127, q.lut = 0;
    t0 = dnn64_ticks();
    dnn64_gemm_s8(1, k, n, x, 5, w, 1, bias, mult, shift, 0, n, &q, y_cpu);
    report(shape, "cpu", cycles_since(t0), 0);
    t0 = dnn64_ticks();
    dnn64_rsp_gemv_s8(k, n, x, 5, w, bias, mult, shift, 0, n, &q, y_rsp);
    report(shape, "rsp_gemv", cycles_since(t0), n);
    for (i = 0; i < n * k; i++) /* blocks of 8 channels, tap after tap (n % 8 == 0) */
        w_blocks[i / (8 * k) * 8 * k + i % k * 8 + i / k % 8] = w[i];
    t0 = dnn64_ticks();
    dnn64_rsp_gemv_dma_s8(k, n, x, 5, w_blocks, bias, mult, shift, 0, n, &q, y_rsp);
    report(shape, "rsp_gemv_dma", cycles_since(t0), n);
}

static void gap(const char *shape, int32_t c, int32_t h)
{
    uint64_t t0;
    dnn64_rsp_flush(x, (uint32_t)(c * h * h)); /* as the RSP kernel before it leaves it */
    t0 = dnn64_ticks();
    dnn64_global_avgpool_s8(c, h * h, -128, 127, x, y_cpu);
    report(shape, "cpu", cycles_since(t0), 0);
    dnn64_rsp_flush(x, (uint32_t)(c * h * h));
    t0 = dnn64_ticks();
    dnn64_rsp_global_avgpool_s8(c, h * h, -128, 127, x, y_rsp);
    report(shape, "rsp_gap", cycles_since(t0), c);
}

int main(void)
{
    int32_t i;
    dnn64_platform_init();
    for (i = 0; i < C_MAX; i++)
        bias[i] = i * 7 - 1000, mult[i] = 1300000000 + i, shift[i] = -8;
    for (i = 0; i < X_MAX; i++)
        x[i] = (int8_t)(i * 13 + (i >> 7));
    for (i = 0; i < W_MAX; i++)
        w[i] = (int8_t)(i * 7 + (i >> 5));
    conv("stem3to16_224", 3, 16, 224, 3, 2, 1, 0, 0);
    conv("dw3x3s2_16x112", 16, 16, 112, 3, 2, 16, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("dw3x3s2_72x56", 72, 72, 56, 3, 2, 72, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("dw3x3s1_88x28", 88, 88, 28, 3, 1, 88, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    /* MnasNet-0.5's stride-1 depthwise planes */
    conv("dw3x3s1_16x112", 16, 16, 112, 3, 1, 16, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("dw3x3s1_48x56", 48, 48, 56, 3, 1, 48, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("dw5x5s1_72x28", 72, 72, 28, 5, 1, 72, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("dw5x5s2_96x28", 96, 96, 28, 5, 2, 96, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("dw5x5s1_240x14", 240, 240, 14, 5, 1, 240, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("dw5x5s1_576x7", 576, 576, 7, 5, 1, 576, dnn64_rsp_dwconv_s8, "rsp_dwconv");
    conv("pw8to24_112", 8, 24, 112, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw8to16_56", 8, 16, 56, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw4to24_56", 4, 24, 56, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw16to72_56", 16, 72, 56, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw72to24_28", 72, 24, 28, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw24to88_28", 24, 88, 28, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw40to240_14", 40, 240, 14, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw240to40_14", 240, 40, 14, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw96to576_7", 96, 576, 7, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw576to96_7", 576, 96, 7, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw576to144_1", 576, 144, 1, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    conv("pw144to576_1", 144, 576, 1, 1, 1, 1, dnn64_rsp_pwconv_s8, "rsp_pwconv");
    gemv("pw576to144_1", 576, 144); /* the squeeze-excite's 1x1 Convs as codegen calls them */
    gemv("pw144to576_1", 144, 576);
    mul("mul_16x56", 16, 56);
    mul("mul_240x14", 240, 14);
    mul("mul_576x7", 576, 7);
    gap("gap_16x56", 16, 56);
    gap("gap_96x14", 96, 14);
    gap("gap_240x14", 240, 14);
    gap("gap_576x7", 576, 7);
    gemv("fc576to1024", 576, 1024);
    gemv("fc1024to1000", 1024, 1000);
    return 0;
}
