/*
 * Big-endian check of a few kernels: built for the VR4300 and run under
 * qemu-mips by test_mips.py, which regenerates the same inputs (same LCG)
 * and compares the printed outputs with its references.
 */
#include <stdio.h>
#include <string.h>

#include "dnn64_kernels.h"

static unsigned int lcg_state = 12345u;

static unsigned int lcg(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return lcg_state;
}

static void fill_s8(signed char *p, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        p[i] = (signed char)((int)((lcg() >> 16) & 0xFF) - 128);
}

static void fill_f32(float *p, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        p[i] = (float)((lcg() >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

static void print_s8(const char *name, const signed char *p, int n)
{
    int i;
    printf("%s", name);
    for (i = 0; i < n; ++i)
        printf(" %d", p[i]);
    printf("\n");
}

static void print_f32(const char *name, const float *p, int n)
{
    int i;
    printf("%s", name);
    for (i = 0; i < n; ++i) {
        unsigned int bits;
        memcpy(&bits, &p[i], 4);
        printf(" %08x", bits);
    }
    printf("\n");
}

/* Input and weight values for conv_case_s8: the LCG's int8s, or the extremes
 * (-128 or 127 by the drawn value's low bit) that 1x1 Convs' channel pairs
 * must sum exactly. */
enum { VALUES_ANY, VALUES_EXTREME };

static void fill_values(signed char *p, int n, int values)
{
    int i;
    fill_s8(p, n);
    if (values == VALUES_EXTREME)
        for (i = 0; i < n; ++i)
            p[i] = (signed char)(p[i] & 1 ? 127 : -128);
}

/* int8 Conv shapes that take the kernels' specialised paths (their MIPS assembly
 * included): one line each, "<name> <outputs>". */
static void conv_case_s8(const char *name, const dnn64_conv_geom *g, int x_zp, int values)
{
    static const int mult[9] = {1518500250, 1200000000, 1800000000, 1073741824, 2000000000,
                                1300000000, 1100000000, 1900000000, 1400000000};
    static const int shift[9] = {-9, -8, -10, -7, -9, 1, -8, -9, -10};
    static signed char x[3600], w[1500], y[600];
    const dnn64_q8_out q = {-4, -128, 127, 0};
    const int xs = g->n * g->c_in * g->h_in * g->w_in;
    const int ws = g->c_out * (g->c_in / g->group) * g->k_h * g->k_w;
    const int ys = g->n * g->c_out * g->h_out * g->w_out;
    int b[9], i;
    fill_values(x, xs, values);
    fill_values(w, ws, values);
    for (i = 0; i < g->c_out; ++i)
        b[i] = (int)(lcg() >> 20) - 2048;
    dnn64_conv_s8(g, x, x_zp, w, b, mult, shift, 0, g->c_out, &q, y);
    print_s8(name, y, ys);
}

static void conv_paths_s8(void)
{
    /* 1x1: two blocks of 4 channels and one more, 7 pixels (pairs and an odd one) */
    static const dnn64_conv_geom pw = {1, 5, 1, 7, 9, 1, 7, 1, 1, 1, 1, 1, 1, 0, 0, 1};
    /* 1x1, 300 channels: chunks of 64 channel pairs (64, 64, 22), 12 pixels */
    static const dnn64_conv_geom chunked = {1, 300, 3, 4, 5, 3, 4, 1, 1, 1, 1, 1, 1, 0, 0, 1};
    /* depthwise 5x5, a padded plane */
    static const dnn64_conv_geom dw5 = {1, 3, 7, 9, 3, 7, 9, 5, 5, 1, 1, 1, 1, 2, 2, 3};
    /* 3 input channels, 3x3 stride 2 (a stem) */
    static const dnn64_conv_geom stem = {1, 3, 9, 10, 4, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1};
    /* 1x1: 7 channels (an odd last pair), 9 pixels (an odd last one) and 9
     * output channels (a short last block) */
    static const dnn64_conv_geom pairs = {1, 7, 3, 3, 9, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1};
    conv_case_s8("conv_pw_s8", &pw, 7, VALUES_ANY);
    conv_case_s8("conv_chunked_s8", &chunked, -2, VALUES_ANY);
    conv_case_s8("conv_dw5_s8", &dw5, 3, VALUES_ANY);
    conv_case_s8("conv_stem_s8", &stem, -5, VALUES_ANY);
    conv_case_s8("conv_pairs_s8", &pairs, 5, VALUES_ANY);
    conv_case_s8("conv_pairs_extreme_s8", &pairs, 0, VALUES_EXTREME);
}

/* The word-wise and table paths of the nodes around the Convs, on inputs that
 * test_mips.py rebuilds without the LCG: int8 Add and Sub through the tables with the
 * output stage folded in (every input pair; out_shift -1 sends half of them down the
 * exact path), the int8 sums of GlobalAveragePool and ReduceMean (planes at odd
 * offsets, runs past 128 words, all -128), and QuantizeLinear's rounding step (half
 * steps up to past 512 steps, 3 ulps either side, special values). */
static void node_paths(void)
{
    static const dnn64_add_s8_params small_e = {5, -7, 100, 2147483647, 0, 1073741825, -1,
                                                2147483647, -1, 8, -100, 90, 0};
    static const dnn64_add_s8_params usual = {-3, 10, 5, 1073741824, 0, 1717986918, -2,
                                              1789569707, -19, 20, -128, 127, 0};
    static const int32_t rdims[3] = {1, 5, 1029};
    static const unsigned int specials[8] = {0x7fc00000u, 0x7f800000u, 0xff800000u,
                                             0x00000001u, 0x80000001u, 0x007fffffu,
                                             0x7f7fffffu, 0xff7fffffu};
    static signed char a[65536], b[65536], y[65536], g[5 * 1029 + 1], m[3136];
    static float q[2061 * 7 + 8];
    dnn64_bcast dense = {1, {65536, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0}};
    signed char gy[5];
    int i, k, n = 0;

    for (i = 0; i < 65536; ++i) {
        a[i] = (signed char)((i & 255) - 128);
        b[i] = (signed char)((i >> 8) - 128);
    }
    dnn64_add_s8(&dense, a, b, &small_e, y);
    print_s8("add_folded_s8", y, 65536);
    dnn64_sub_s8(&dense, a, b, &usual, y);
    print_s8("sub_folded_s8", y, 65536);

    for (i = 0; i < 5 * 1029 + 1; ++i)
        g[i] = (signed char)(((i * 37 + 11) & 255) - 128);
    dnn64_global_avgpool_s8(5, 1029, -128, 127, g + 1, gy);
    print_s8("gap_s8", gy, 5);
    dnn64_reduce_mean_s8(3, rdims, 4, 3, 1407374884, -9, -5, g + 1, gy);
    print_s8("reduce_mean_s8", gy, 5);
    memset(m, -128, sizeof m);
    dnn64_global_avgpool_s8(1, 3136, -128, 127, m, gy);
    print_s8("gap_min_s8", gy, 1);

    for (k = -1030; k <= 1030; ++k) {
        const float v = (float)k * 0.5f * 0.0385445058f;
        unsigned int bits;
        memcpy(&bits, &v, 4);
        for (i = -3; i <= 3; ++i) {
            const unsigned int u = bits + (unsigned int)i;
            memcpy(&q[n++], &u, 4);
        }
    }
    for (i = 0; i < 8; ++i)
        memcpy(&q[n++], &specials[i], 4);
    dnn64_quantize_f32_s8(q, n, 0.0385445058f, -8, y);
    print_s8("quantize_s8", y, n);
}

int main(void)
{
    static const dnn64_conv_geom cg = {1, 4, 6, 5, 6, 3, 5, 3, 3, 2, 1, 1, 1, 1, 1, 2};
    static const int mult[6] = {1518500250, 1200000000, 1800000000, 1073741824, 2000000000,
                                1300000000};
    static const int shift[6] = {-9, -8, -10, -7, -9, 1};
    static const dnn64_act_f32 sig = {DNN64_ACT_SIGMOID, 0.0f, 0.0f};
    static const dnn64_add_s8_params ap = {-3, 10, 5, 1073741824, 0, 1717986918, -2,
                                           1789569707, -19, 20, -128, 127, 0};
    dnn64_q8_out q = {5, -128, 127, 0};
    dnn64_bcast bc = {3, {2, 3, 4}, {12, 4, 1}, {0, 1, 0}};
    signed char cx[4 * 6 * 5], cw[6 * 2 * 9], cy[6 * 3 * 5];
    int cb[6], i;
    float ga[3 * 7], gb[5 * 7], gbias[5], gy[3 * 5], sx[2 * 9], sy[2 * 9];
    signed char ea[24], eb[3], ey[24], rx[2 * 3 * 4], ry[2 * 5 * 7];

    fill_s8(cx, sizeof cx);
    fill_s8(cw, sizeof cw);
    for (i = 0; i < 6; ++i)
        cb[i] = (int)(lcg() >> 20) - 2048;
    dnn64_conv_s8(&cg, cx, -3, cw, cb, mult, shift, 0, 6, &q, cy);
    print_s8("conv_s8", cy, sizeof cy);

    fill_f32(ga, 21);
    fill_f32(gb, 35);
    fill_f32(gbias, 5);
    dnn64_gemm_f32(3, 7, 5, ga, gb, 1, gbias, 0, 5, &sig, gy);
    print_f32("gemm_f32", gy, 15);

    fill_f32(sx, 18);
    for (i = 0; i < 18; ++i)
        sx[i] *= 8.0f;
    dnn64_softmax_f32(2, 9, 1, sx, sy);
    print_f32("softmax_f32", sy, 18);

    fill_s8(ea, 24);
    fill_s8(eb, 3);
    dnn64_add_s8(&bc, ea, eb, &ap, ey);
    print_s8("add_s8", ey, 24);

    fill_s8(rx, 24);
    dnn64_resize_linear_s8(2, 3, 4, 5, 7, 5.0f / 3.0f, 7.0f / 4.0f, DNN64_COORD_HALF_PIXEL, rx, ry);
    print_s8("resize_linear_s8", ry, 70);
    conv_paths_s8();
    node_paths();
    return 0;
}
