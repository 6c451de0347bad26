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

int main(void)
{
    static const dnn64_conv_geom cg = {1, 4, 6, 5, 6, 3, 5, 3, 3, 2, 1, 1, 1, 1, 1, 2};
    static const int mult[6] = {1518500250, 1200000000, 1800000000, 1073741824, 2000000000,
                                1300000000};
    static const int shift[6] = {-9, -8, -10, -7, -9, 1};
    static const dnn64_act_f32 sig = {DNN64_ACT_SIGMOID, 0.0f, 0.0f};
    static const dnn64_add_s8_params ap = {-3, 10, 5, 1073741824, 0, 1717986918, -2,
                                           1789569707, -19, 20, -128, 127};
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
    return 0;
}
