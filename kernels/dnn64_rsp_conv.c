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
 * positions x 8 * kgroups taps; the CPU sums the jobs along k in int32. While the RSP
 * computes job j the CPU packs job j + 1 into the other of two RDRAM images and
 * requantises the result of job j - 1. When the taps fit one job, the weights go to
 * DMEM once per group of rows and each job only moves its inputs. */
#include "dnn64_internal.h"
#include "dnn64_rsp.h"
#include "platform/dnn64_platform.h"

/* The platform layer runs the jobs. Weak references: the portable kernels also link
 * without any platform layer (the kernel unit tests), and then run dnn64_conv_s8. */
#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_write_rows
#pragma weak dnn64_rsp_start
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_read

#define HEADER_BYTES 16
#define LANES 8
#define KGROUPS_MAX (DNN64_RSP_K_PER_JOB / LANES)
/* At most 32 columns: more (for depthwise, one row a group) measured slower in cen64,
 * as the larger buffers conflict in the direct-mapped 8 KiB D-cache. */
#define BLOCKS_MAX 4
#define COLS_MAX (BLOCKS_MAX * LANES)
#define ROWS_MAX 32

typedef struct {
    int32_t rows, blocks, kgroups;          /* this job's shape */
    uint32_t a_offset, b_offset, c_offset;  /* DMEM offsets (16-byte aligned) */
    uint32_t b_block_stride, b_k_stride;    /* B layout: packed or input rows */
} job_shape;

/* Two RDRAM images of a job (one packed while the RSP runs the other), one result. */
static uint8_t DNN64_ALIGNED(images[2][DNN64_RSP_DMEM_BYTES]);
static uint8_t DNN64_ALIGNED(result[DNN64_RSP_DMEM_BYTES]);
static int32_t sums[ROWS_MAX * COLS_MAX]; /* [rows][blocks * 8] */
static int32_t wsums[ROWS_MAX];

static uint32_t align16(uint32_t v)
{
    return (v + 15u) & ~15u;
}

/* A job of `rows` x `blocks` (DMEM layout in matmul_s8.rsp), or rows 0 if none fits. */
static job_shape shape_of(int32_t rows_wanted, int32_t blocks, int32_t kgroups)
{
    job_shape s;
    const int32_t b_bytes = blocks * kgroups * 64, per_row = kgroups * 16 + blocks * 32;
    const int32_t room = (int32_t)DNN64_RSP_DMEM_BYTES - HEADER_BYTES - b_bytes;
    int32_t rows = room > 0 ? room / per_row : 0;
    if (rows > rows_wanted)
        rows = rows_wanted;
    if (rows > ROWS_MAX)
        rows = ROWS_MAX;
    s.rows = rows;
    s.blocks = blocks;
    s.kgroups = kgroups;
    s.a_offset = HEADER_BYTES;
    s.b_offset = s.a_offset + align16((uint32_t)(rows * kgroups * 16));
    s.c_offset = s.b_offset + (uint32_t)b_bytes;
    s.b_block_stride = (uint32_t)(kgroups * 64); /* packed [nb][k][8] */
    s.b_k_stride = LANES;
    return s;
}

/* Rows matter most: the CPU packs each input byte once per job and the job reuses it
 * once per row. So: as many rows as fit beside at most BLOCKS_MAX column blocks, the
 * inputs taking at most half of DMEM. */
static job_shape shape_for(int32_t rows_wanted, int32_t blocks_wanted, int32_t kgroups)
{
    const int32_t fit = (int32_t)(DNN64_RSP_DMEM_BYTES / 2u) / (kgroups * 64);
    int32_t blocks = blocks_wanted < BLOCKS_MAX ? blocks_wanted : BLOCKS_MAX;
    if (blocks > fit)
        blocks = fit;
    return shape_of(rows_wanted, blocks, kgroups);
}

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Header, then A[r][kk] = W[r][k0 + kk] as big-endian int16, 0 past k. */
static void pack_weights(uint8_t *job, const job_shape *s, const int8_t *w_rows, int32_t k,
                         int32_t k0)
{
    const int32_t kc = s->kgroups * LANES;
    const int32_t valid = k - k0 < kc ? k - k0 : kc;
    int32_t r, kk;
    put_u16(job + 0, (uint32_t)s->rows);
    put_u16(job + 2, (uint32_t)s->blocks);
    put_u16(job + 4, (uint32_t)s->kgroups);
    put_u16(job + 6, s->a_offset);
    put_u16(job + 8, s->b_offset);
    put_u16(job + 10, s->c_offset);
    put_u16(job + 12, s->b_block_stride);
    put_u16(job + 14, s->b_k_stride);
    for (r = 0; r < s->rows; ++r) {
        const int8_t *wr = w_rows + r * k + k0;
        uint8_t *a = job + s->a_offset + (uint32_t)(r * kc * 2);
        for (kk = 0; kk < valid; ++kk) {
            a[2 * kk] = (uint8_t)(wr[kk] < 0 ? 0xFF : 0);
            a[2 * kk + 1] = (uint8_t)wr[kk];
        }
        for (; kk < kc; ++kk)
            a[2 * kk] = a[2 * kk + 1] = 0;
    }
}

/* B[nb][kk][lane] = X[k0 + kk][s0 + 8 nb + lane] of the group's input xg: the input
 * under tap k0 + kk of that output position, x_zp in the padding, 0 past k or the
 * last position. */
static void pack_inputs(uint8_t *job, const job_shape *s, const dnn64_conv_geom *g,
                        const int8_t *xg, int32_t x_zp, int32_t k, int32_t k0, int32_t s0)
{
    const int32_t kc = s->kgroups * LANES, cols = s->blocks * LANES;
    const int32_t positions = g->h_out * g->w_out, in_plane = g->h_in * g->w_in;
    const int32_t valid = positions - s0 < cols ? positions - s0 : cols;
    const int32_t block_stride = kc * LANES, ksize = g->k_h * g->k_w;
    int32_t iy0[COLS_MAX], ix0[COLS_MAX];
    int32_t col, kk, oy = s0 / g->w_out, ox = s0 % g->w_out;
    int32_t ic = k0 / ksize, ky = (k0 % ksize) / g->k_w, kx = k0 % g->k_w;
    int8_t *b0 = (int8_t *)job + s->b_offset;
    for (col = 0; col < valid; ++col) {
        iy0[col] = oy * g->stride_h - g->pad_top;
        ix0[col] = ox * g->stride_w - g->pad_left;
        if (++ox == g->w_out) {
            ox = 0;
            ++oy;
        }
    }
    for (kk = 0; kk < kc; ++kk) {
        int8_t *row = b0 + kk * LANES;
        if (k0 + kk >= k) {
            for (col = 0; col < cols; ++col)
                row[(col >> 3) * block_stride + (col & 7)] = 0;
            continue;
        }
        {
            const int8_t *xp = xg + ic * in_plane;
            const int32_t dy = ky * g->dil_h, dx = kx * g->dil_w;
            for (col = 0; col < valid; ++col) {
                const int32_t iy = iy0[col] + dy, ix = ix0[col] + dx;
                row[(col >> 3) * block_stride + (col & 7)] =
                    ((uint32_t)iy < (uint32_t)g->h_in && (uint32_t)ix < (uint32_t)g->w_in)
                        ? xp[iy * g->w_in + ix]
                        : (int8_t)x_zp;
            }
            for (; col < cols; ++col)
                row[(col >> 3) * block_stride + (col & 7)] = 0;
        }
        if (++kx == g->k_w) {
            kx = 0;
            if (++ky == g->k_h) {
                ky = 0;
                ++ic;
            }
        }
    }
}

/* A 1x1 Conv with stride 1 and no padding reads B[k][s] = xg[k * plane + s]: SP DMA
 * moves those rows into DMEM as they are (rows layout), when they are 8-byte aligned. */
static int gathers_rows(const dnn64_conv_geom *g, const int8_t *xg)
{
    return g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
           g->pad_top == 0 && g->pad_left == 0 && g->h_out == g->h_in && g->w_out == g->w_in &&
           (g->h_in * g->w_in) % 8 == 0 && ((uintptr_t)xg & 7u) == 0;
}

/* sums (=, or += after the first k chunk) the job's result: HI (bits 32..47) and MD
 * (16..31) of sum << 24 per lane. */
static void take_result(const job_shape *s, int first)
{
    int32_t r, col;
    for (r = 0; r < s->rows; ++r)
        for (col = 0; col < s->blocks * LANES; ++col) {
            const uint8_t *v = result + (r * s->blocks + col / LANES) * 32 + (col % LANES) * 2;
            const int32_t sum = (int16_t)(((uint32_t)v[0] << 8) | v[1]) * 256 + v[16];
            int32_t *acc = &sums[r * s->blocks * LANES + col];
            *acc = first ? sum : *acc + sum;
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
    const int32_t kc = kgroups * LANES, k_jobs = (k + kc - 1) / kc;
    const int32_t blocks_needed = (positions + LANES - 1) / LANES;
    int32_t n, t0, j, r, col;
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
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t0);
            const int8_t *w_rows = w_tile + c.w, *xg = x + c.x;
            const int rows_layout = gathers_rows(g, xg);
            job_shape s = shape_for(wanted, blocks_needed, kgroups);
            const int32_t cols = s.blocks * LANES, s_jobs = (positions + cols - 1) / cols;
            const int32_t jobs = s_jobs * k_jobs;
            if (rows_layout) {
                s.b_block_stride = LANES;
                s.b_k_stride = (uint32_t)cols;
            }
            for (r = 0; r < s.rows; ++r) {
                int32_t kk, sum = 0;
                for (kk = 0; kk < k; ++kk)
                    sum += w_rows[r * k + kk];
                wsums[r] = (bias_tile ? bias_tile[t0 + r] : 0) - x_zero_point * sum;
            }
            /* job j: positions from (j / k_jobs) * cols, taps from (j % k_jobs) * kc */
            pack_weights(images[0], &s, w_rows, k, 0);
            if (!rows_layout)
                pack_inputs(images[0], &s, g, xg, x_zero_point, k, 0, 0);
            for (j = 0; j <= jobs; ++j) {
                const int32_t kj = (j - 1) % k_jobs; /* of job j - 1 */
                if (j < jobs) {
                    const int32_t s0 = (j / k_jobs) * cols, k0 = (j % k_jobs) * kc;
                    uint8_t *image = images[j & 1], *next = images[(j + 1) & 1];
                    if (k_jobs > 1 || j == 0) /* else the weights are in DMEM already */
                        dnn64_rsp_write(0, image, s.b_offset);
                    if (rows_layout) /* taps past k meet zero weights: any bytes will do */
                        dnn64_rsp_write_rows(s.b_offset, xg + k0 * positions + s0,
                                             (uint32_t)cols,
                                             (uint32_t)(k - k0 < kc ? k - k0 : kc),
                                             (uint32_t)positions);
                    else
                        dnn64_rsp_write(s.b_offset, image + s.b_offset,
                                        s.c_offset - s.b_offset);
                    dnn64_rsp_start();
                    if (j + 1 < jobs) { /* pack job j + 1 while the RSP runs job j */
                        const int32_t next_k0 = ((j + 1) % k_jobs) * kc;
                        if (k_jobs > 1)
                            pack_weights(next, &s, w_rows, k, next_k0);
                        if (!rows_layout)
                            pack_inputs(next, &s, g, xg, x_zero_point, k, next_k0,
                                        ((j + 1) / k_jobs) * cols);
                    }
                }
                if (j > 0) { /* and finish job j - 1 (its result is in `result`) */
                    const int32_t s0 = ((j - 1) / k_jobs) * cols;
                    take_result(&s, kj == 0);
                    if (kj == k_jobs - 1)
                        for (r = 0; r < s.rows; ++r) {
                            const int32_t t = t0 + r;
                            int8_t *yr = y + c.y + r * positions + s0;
                            for (col = 0; col < cols && s0 + col < positions; ++col)
                                yr[col] = dnn64__out_s8(wsums[r] + sums[r * cols + col],
                                                        mult_tile[t], shift_tile[t], q);
                        }
                }
                if (j < jobs) {
                    dnn64_rsp_wait();
                    dnn64_rsp_read(result, s.c_offset, (uint32_t)(s.rows * s.blocks * 32));
                }
            }
            t0 += s.rows;
        }
    }
}
