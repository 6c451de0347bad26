/* int8 Conv through the RSP's matmul_s8 jobs (dnn64_rsp.h).
 *
 * View the tile's convolution per image n and group as a matrix product
 *     dot[t][s] = sum_k W[t][k] * X[k][s]
 * t: output channel of the group, s: output position (oy * w_out + ox),
 * k = (ic, ky, kx) in the weight's order, X[k][s] the input under tap k of
 * position s, or x_zero_point where the tap falls in the padding (its share
 * cancels below). Then acc = bias + dot - x_zero_point * sum_k W[t][k] equals
 * dnn64_conv_s8's bias + sum_k (x - x_zero_point) * W exactly.
 *
 * A job (DMEM layout in matmul_s8.rsp) covers `rows` channels x `blocks` * 8
 * positions x 8 * kgroups taps; the CPU sums the jobs along k in int32. */
#include "dnn64_internal.h"
#include "dnn64_rsp.h"
#include "platform/dnn64_platform.h"

/* The platform layer runs the jobs. Weak references: the portable kernels also link
 * without any platform layer (the kernel unit tests), and then run dnn64_conv_s8. */
#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_matmul_s8

#define HEADER_BYTES 16
#define LANES 8
#define KGROUPS_MAX (DNN64_RSP_K_PER_JOB / LANES)
#define BLOCKS_MAX 4
#define ROWS_MAX 32

typedef struct {
    int32_t rows, blocks, kgroups;          /* this job's shape */
    uint32_t a_offset, b_offset, c_offset;  /* DMEM offsets (16-byte aligned) */
    uint32_t bytes;                         /* job bytes to move in (multiple of 8) */
} job_shape;

/* Space in RDRAM for one job and one result; DMEM bounds their sizes. */
static uint8_t DNN64_ALIGNED(job[DNN64_RSP_DMEM_BYTES]);
static uint8_t DNN64_ALIGNED(result[DNN64_RSP_DMEM_BYTES]);
static int32_t sums[ROWS_MAX][BLOCKS_MAX * LANES];

static uint32_t align16(uint32_t v)
{
    return (v + 15u) & ~15u;
}

/* The most rows that fit beside `blocks` column blocks of `kgroups` k groups. */
static job_shape shape_for(int32_t rows_wanted, int32_t blocks, int32_t kgroups)
{
    job_shape s;
    const uint32_t b_bytes = (uint32_t)(blocks * kgroups * 64);
    const uint32_t per_row = (uint32_t)(kgroups * 16 + blocks * 32);
    int32_t rows = (int32_t)((DNN64_RSP_DMEM_BYTES - HEADER_BYTES - b_bytes) / per_row);
    if (rows > rows_wanted)
        rows = rows_wanted;
    if (rows > ROWS_MAX)
        rows = ROWS_MAX;
    s.rows = rows;
    s.blocks = blocks;
    s.kgroups = kgroups;
    s.a_offset = HEADER_BYTES;
    s.b_offset = s.a_offset + align16((uint32_t)(rows * kgroups * 16));
    s.c_offset = s.b_offset + b_bytes;
    s.bytes = s.c_offset;
    return s;
}

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void pack_header(const job_shape *s)
{
    put_u16(job + 0, (uint32_t)s->rows);
    put_u16(job + 2, (uint32_t)s->blocks);
    put_u16(job + 4, (uint32_t)s->kgroups);
    put_u16(job + 6, s->a_offset);
    put_u16(job + 8, s->b_offset);
    put_u16(job + 10, s->c_offset);
}

/* A[r][kk] = W[t0 + r][k0 + kk] as big-endian int16, 0 past k. */
static void pack_weights(const job_shape *s, const int8_t *w_rows, int32_t k, int32_t k0)
{
    const int32_t kc = s->kgroups * LANES;
    int32_t r, kk;
    for (r = 0; r < s->rows; ++r) {
        const int8_t *wr = w_rows + r * k + k0;
        uint8_t *a = job + s->a_offset + (uint32_t)(r * kc * 2);
        for (kk = 0; kk < kc; ++kk) {
            const int32_t v = k0 + kk < k ? wr[kk] : 0;
            a[2 * kk] = (uint8_t)(v < 0 ? 0xFF : 0);
            a[2 * kk + 1] = (uint8_t)v;
        }
    }
}

/* B[nb][kk][lane] = X[k0 + kk][s0 + 8 nb + lane] of the group's input xg. */
static void pack_inputs(const job_shape *s, const dnn64_conv_geom *g, const int8_t *xg,
                        int32_t x_zp, int32_t k, int32_t k0, int32_t s0)
{
    const int32_t kc = s->kgroups * LANES, positions = g->h_out * g->w_out;
    const int32_t in_plane = g->h_in * g->w_in;
    int32_t col, kk;
    for (col = 0; col < s->blocks * LANES; ++col) {
        int8_t *b = (int8_t *)job + s->b_offset + (col / LANES) * kc * LANES + col % LANES;
        const int32_t pos = s0 + col;
        int32_t iy0, ix0, ic, ky, kx;
        if (pos >= positions) {
            for (kk = 0; kk < kc; ++kk)
                b[kk * LANES] = 0;
            continue;
        }
        iy0 = (pos / g->w_out) * g->stride_h - g->pad_top;
        ix0 = (pos % g->w_out) * g->stride_w - g->pad_left;
        /* tap k0 = ((ic * k_h) + ky) * k_w + kx, then step through the taps */
        ic = k0 / (g->k_h * g->k_w);
        ky = (k0 / g->k_w) % g->k_h;
        kx = k0 % g->k_w;
        for (kk = 0; kk < kc; ++kk) {
            int32_t v = 0;
            if (k0 + kk < k) {
                const int32_t iy = iy0 + ky * g->dil_h, ix = ix0 + kx * g->dil_w;
                v = (iy >= 0 && iy < g->h_in && ix >= 0 && ix < g->w_in)
                        ? xg[ic * in_plane + iy * g->w_in + ix]
                        : x_zp;
                if (++kx == g->k_w) {
                    kx = 0;
                    if (++ky == g->k_h) {
                        ky = 0;
                        ++ic;
                    }
                }
            }
            b[kk * LANES] = (int8_t)v;
        }
    }
}

/* Add a job's result to sums: HI (bits 32..47) and MD (16..31) of sum << 24. */
static void add_result(const job_shape *s)
{
    int32_t r, col;
    for (r = 0; r < s->rows; ++r)
        for (col = 0; col < s->blocks * LANES; ++col) {
            const uint8_t *v = result + (r * s->blocks + col / LANES) * 32 + (col % LANES) * 2;
            const int32_t hi = (int16_t)(((uint32_t)v[0] << 8) | v[1]);
            sums[r][col] += hi * 256 + v[16];
        }
}

void dnn64_rsp_conv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                       const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                       const dnn64_q8_out *q, int8_t *y)
{
    const int32_t icpg = g->c_in / g->group, ocpg = g->c_out / g->group;
    const int32_t k = icpg * g->k_h * g->k_w, positions = g->h_out * g->w_out;
    const int32_t kgroups = (k + LANES - 1) / LANES < KGROUPS_MAX ? (k + LANES - 1) / LANES
                                                                 : KGROUPS_MAX;
    const int32_t blocks_needed = (positions + LANES - 1) / LANES;
    /* input blocks take at most half of DMEM, so several weight rows fit beside them */
    const int32_t blocks_fit = (int32_t)(DNN64_RSP_DMEM_BYTES / 2u) / (kgroups * 64);
    const int32_t blocks_cap = blocks_fit < BLOCKS_MAX ? blocks_fit : BLOCKS_MAX;
    const int32_t blocks = blocks_needed < blocks_cap ? blocks_needed : blocks_cap;
    int32_t n, t0, s0, k0, r, col;
    if (k > DNN64_RSP_K_MAX || !dnn64_rsp_available || !dnn64_rsp_available()) {
        dnn64_conv_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile, oc_begin,
                      oc_count, q, y);
        return;
    }
    for (n = 0; n < g->n; ++n) {
        for (t0 = 0; t0 < oc_count;) {
            /* rows of one group: they share the input block */
            const int32_t left_in_group = ocpg - (oc_begin + t0) % ocpg;
            const int32_t wanted = left_in_group < oc_count - t0 ? left_in_group : oc_count - t0;
            const job_shape s = shape_for(wanted, blocks, kgroups);
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t0);
            const int8_t *w_rows = w_tile + c.w;
            for (s0 = 0; s0 < positions; s0 += blocks * LANES) {
                for (r = 0; r < s.rows; ++r)
                    for (col = 0; col < blocks * LANES; ++col)
                        sums[r][col] = 0;
                for (k0 = 0; k0 < k; k0 += kgroups * LANES) {
                    pack_header(&s);
                    pack_weights(&s, w_rows, k, k0);
                    pack_inputs(&s, g, x + c.x, x_zero_point, k, k0, s0);
                    dnn64_rsp_matmul_s8(job, s.bytes, s.c_offset, result,
                                        (uint32_t)(s.rows * s.blocks * 32));
                    add_result(&s);
                }
                for (r = 0; r < s.rows; ++r) {
                    const int32_t t = t0 + r;
                    const int8_t *wr = w_rows + r * k;
                    int32_t wsum = 0, kk, base;
                    for (kk = 0; kk < k; ++kk)
                        wsum += wr[kk];
                    base = (bias_tile ? bias_tile[t] : 0) - x_zero_point * wsum;
                    for (col = 0; col < blocks * LANES && s0 + col < positions; ++col)
                        y[c.y + r * positions + s0 + col] =
                            dnn64__out_s8(base + sums[r][col], mult_tile[t], shift_tile[t], q);
                }
            }
            t0 += s.rows;
        }
    }
}
