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
 * positions x 8 * kgroups taps; the RSP carries acc (as 2 acc, starting from
 * bias - x_zero_point * sum W, which the CPU computes once per group of rows) from
 * job to job along k in DMEM and writes int8 outputs after the last. While the RSP
 * computes job j the CPU packs job j + 1 into the other of two RDRAM images and copies
 * out (or requantises, for channels the RSP's output stage cannot take) the outputs
 * of the last finished job. When the taps fit one job, the weights go to DMEM once per
 * group of rows and each job only moves its inputs; int8 weight rows whose length is
 * a multiple of 8 go there by SP DMA, unpacked. */
#include "dnn64_internal.h"
#include "dnn64_rsp.h"
#include "dnn64_rsp_internal.h"
#include "platform/dnn64_platform.h"

/* The platform layer runs the jobs. Weak references: the portable kernels also link
 * without any platform layer (the kernel unit tests), and then run dnn64_conv_s8. */
#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_write_rows
#pragma weak dnn64_rsp_start
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_read
#pragma weak dnn64_rsp_start_at
#pragma weak dnn64_rsp_write_beside
#pragma weak dnn64_rsp_write_rows_beside
#pragma weak dnn64_rsp_read_beside

#define HEADER_BYTES 48
#define CONSTS_AT 0x20
#define PARAM_BYTES 16
#define STATE_BYTES 32 /* per row and column block: V lo, V hi */
#define LANES 8
#define KGROUPS_MAX (DNN64_RSP_K_PER_JOB / LANES)
/* At most 32 columns: more (for depthwise, one row a group) measured slower in cen64,
 * as the larger buffers conflict in the direct-mapped 8 KiB D-cache. */
#define BLOCKS_MAX 4
#define COLS_MAX (BLOCKS_MAX * LANES)
#define ROWS_MAX 64
#define ROWS_KGROUPS_MAX 8 /* input rows in DMEM: 64 taps x 32 bytes */
#define FLAG_FIRST 1u
#define FLAG_LAST 2u
/* |bias| below this and K <= DNN64_RSP_K_MAX keep |2 acc| < 2^30 (dnn64_rsp.h). */
#define BIAS_LIMIT (1 << 28)

typedef struct {
    int32_t rows, blocks, kgroups;         /* this job's shape */
    uint32_t a, b, p, s, y;                /* DMEM offsets (16-byte aligned) */
    uint32_t b_block_stride, b_k_stride;   /* B layout: packed or input rows */
    uint32_t b_row_stride;                 /* 0, or each row's own B (one group a row) */
} job_shape;

/* Two RDRAM images of a job (one packed while the RSP runs the other), one result. */
static uint8_t DNN64_ALIGNED(images[2][DNN64_RSP_DMEM_BYTES]);
static uint8_t DNN64_ALIGNED(result[DNN64_RSP_DMEM_BYTES]);

static uint32_t align16(uint32_t v)
{
    return (v + 15u) & ~15u;
}

/* How many rows of `per_row` bytes fit in `room` bytes of DMEM, at most `rows_wanted`
 * and ROWS_MAX (0 when none fits). */
static int32_t rows_that_fit(int32_t room, int32_t per_row, int32_t rows_wanted)
{
    int32_t rows = room > 0 ? room / per_row : 0;
    if (rows > rows_wanted)
        rows = rows_wanted;
    if (rows > ROWS_MAX)
        rows = ROWS_MAX;
    return rows;
}

/* A job of `rows` x `blocks` x `kgroups` (DMEM layout in matmul_s8.rsp), or rows 0 if
 * none fits. `state`: S holds V between jobs (several jobs along k, or channels whose
 * output stage the CPU runs). `own_b`: every row has its own B (one group a row). */
static job_shape shape_of(int32_t rows_wanted, int32_t blocks, int32_t kgroups, int state,
                          int own_b)
{
    job_shape s;
    const int32_t b_bytes = blocks * kgroups * 64;
    const int32_t per_row = kgroups * 8 + PARAM_BYTES + (state ? blocks * STATE_BYTES : 0) +
                            blocks * LANES + (own_b ? b_bytes : 0);
    const int32_t room =
        (int32_t)DNN64_RSP_DMEM_BYTES - HEADER_BYTES - 16 - (own_b ? 0 : b_bytes);
    const int32_t rows = rows_that_fit(room, per_row, rows_wanted);
    s.rows = rows;
    s.blocks = blocks;
    s.kgroups = kgroups;
    s.a = HEADER_BYTES;
    s.p = align16(s.a + (uint32_t)(rows * kgroups * 8));
    s.b = s.p + (uint32_t)(rows * PARAM_BYTES);
    s.b_row_stride = own_b ? (uint32_t)b_bytes : 0u;
    s.s = s.b + (uint32_t)(own_b ? rows * b_bytes : b_bytes);
    s.y = s.s + (state ? (uint32_t)(rows * blocks * STATE_BYTES) : 0u);
    s.b_block_stride = (uint32_t)(kgroups * 64); /* packed [nb][k][8] */
    s.b_k_stride = LANES;
    return s;
}

/* The CPU's share of a job with packed inputs, in CPU cycles (measured in cen64 on a
 * 3x3 Conv of 64 channels at 56x56: about 32 cycles a byte with 8 columns a tap): about
 * TAP_CYCLES a tap and PACK_CYCLES a byte of B, JOB_CYCLES for the rest (SP DMA, start,
 * wait, copying out). */
#define TAP_CYCLES 200
#define PACK_CYCLES 6
#define JOB_CYCLES 3000

/* CPU cycles per multiply-accumulate of a job shape (a float: no 64-bit division, which
 * would need libgcc). */
static float pack_cost(const job_shape *s)
{
    const int32_t taps = s->kgroups * LANES, cols = s->blocks * LANES;
    const int32_t cycles = taps * (TAP_CYCLES + PACK_CYCLES * cols) + JOB_CYCLES;
    return (float)cycles / (float)(s->rows * cols * taps);
}

/* Packed inputs: the CPU packs each input byte once per job and the job reuses it once
 * per row (own_b: never). So: of the k groups (all of k up to KGROUPS_MAX, 8 or 4) and
 * column blocks (at most BLOCKS_MAX, the inputs taking at most half of DMEM), those that
 * cost the CPU the least per multiply-accumulate. `cpu_stage`: some channel's output
 * stage runs on the CPU (S is needed even for one job along k). */
static job_shape shape_for(int32_t rows_wanted, int32_t blocks_wanted, int32_t k,
                           int cpu_stage, int own_b)
{
    const int32_t kg_all = (k + LANES - 1) / LANES < KGROUPS_MAX ? (k + LANES - 1) / LANES
                                                                 : KGROUPS_MAX;
    const int state_all = cpu_stage || k > kg_all * LANES;
    const int32_t fit_all = (int32_t)(DNN64_RSP_DMEM_BYTES / 2u) / (kg_all * 64);
    const int32_t widest = blocks_wanted < BLOCKS_MAX ? blocks_wanted : BLOCKS_MAX;
    job_shape best = shape_of(rows_wanted, widest < fit_all ? widest : fit_all, kg_all,
                              state_all, own_b);
    int32_t kg;
    if (own_b) /* depthwise: the widest job (nothing is reused) */
        return best;
    for (kg = kg_all; kg >= 4 || kg == kg_all; kg = kg > 8 ? 8 : kg / 2) {
        const int32_t fit = (int32_t)(DNN64_RSP_DMEM_BYTES / 2u) / (kg * 64);
        const int state = cpu_stage || (k + kg * LANES - 1) / (kg * LANES) > 1;
        int32_t blocks = widest < fit ? widest : fit;
        for (; blocks >= 1; --blocks) {
            const job_shape s = shape_of(rows_wanted, blocks, kg, state, own_b);
            if (s.rows > 0 && (best.rows == 0 || pack_cost(&s) < pack_cost(&best)))
                best = s;
        }
        if (kg < 8)
            break;
    }
    return best;
}

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* The header of a job with `kgroups` k groups (its last along k may have fewer). */
static void put_header(uint8_t *job, const job_shape *s, int32_t kgroups, uint32_t flags,
                       int rows_layout, const dnn64_q8_out *q)
{
    put_u16(job + 0, (uint32_t)s->rows);
    put_u16(job + 2, (uint32_t)s->blocks);
    put_u16(job + 4, (uint32_t)kgroups);
    put_u16(job + 6, flags);
    put_u16(job + 8, s->a);
    put_u16(job + 10, s->b);
    put_u16(job + 12, rows_layout ? s->b_block_stride : (uint32_t)(kgroups * 64));
    put_u16(job + 14, s->b_k_stride);
    put_u16(job + 16, s->p);
    put_u16(job + 18, s->s);
    put_u16(job + 20, s->y);
    put_u16(job + 22, s->b_row_stride);
    put_u16(job + CONSTS_AT + 0, (uint32_t)q->out_zero_point);
    put_u16(job + CONSTS_AT + 2, (uint32_t)q->act_min);
    put_u16(job + CONSTS_AT + 4, (uint32_t)q->act_max);
    put_u16(job + CONSTS_AT + 6, 256u);
    put_u16(job + CONSTS_AT + 8, 1u);
    put_u16(job + CONSTS_AT + 10, 0xFFFFu);
    put_u16(job + CONSTS_AT + 12, 0u);
    put_u16(job + CONSTS_AT + 14, 0u);
}

/* A[r][kk] = W[r][k0 + kk] for kk < 8 * kgroups, 0 past k. */
static void pack_weights(uint8_t *job, const job_shape *s, const int8_t *w_rows, int32_t k,
                         int32_t k0, int32_t kgroups)
{
    const int32_t kc = kgroups * LANES;
    const int32_t valid = k - k0 < kc ? k - k0 : kc;
    int32_t r, kk;
    for (r = 0; r < s->rows; ++r) {
        const int8_t *wr = w_rows + r * k + k0;
        int8_t *a = (int8_t *)job + s->a + (uint32_t)(r * kc);
        for (kk = 0; kk < valid; ++kk)
            a[kk] = wr[kk];
        for (; kk < kc; ++kk)
            a[kk] = 0;
    }
}

/* Whether the output stage of a channel runs on the RSP: 2 <= -shift <= 15 and a
 * normalised multiplier above 2^30 (matmul_s8.rsp's conditions). A table (q->lut), if
 * any, is applied by the CPU to what the RSP writes. */
static int requant_on_rsp(int32_t mult, int32_t shift)
{
    return shift <= -2 && shift >= -15 && mult > (1 << 30);
}

/* P row: 2c (c = bias - x_zp * sum W) and the output stage constants of matmul_s8.rsp. */
static void put_params(uint8_t *p, int32_t c, int32_t mult, int32_t shift, int on_rsp)
{
    const uint32_t c2 = (uint32_t)c * 2u;
    const int32_t e = -shift;
    put_u16(p + 0, c2 >> 16);
    put_u16(p + 2, c2 & 0xFFFFu);
    put_u16(p + 4, (uint32_t)mult >> 16);
    put_u16(p + 6, (uint32_t)mult & 0xFFFFu);
    /* K = 2^15 + 2^(15+e) = (1 + 2^(e-1)) * 2^16 - 2^15 */
    put_u16(p + 8, e >= 2 && e <= 15 ? 1u + (1u << (e - 1)) : 0u);
    put_u16(p + 10, 0x8000u);
    put_u16(p + 12, e >= 2 && e <= 15 ? 1u << (16 - e) : 0u);
    put_u16(p + 14, (uint32_t)on_rsp);
}

/* n <= 8 bytes from src to dst, either unaligned: a word at a time by LWL/LWR (SWL/SWR),
 * which __builtin_memcpy of 4 bytes compiles to on the VR4300. */
static void copy_run(int8_t *dst, const int8_t *src, int32_t n)
{
    uint32_t v;
    for (; n >= 4; n -= 4, src += 4, dst += 4) {
        __builtin_memcpy(&v, src, 4);
        __builtin_memcpy(dst, &v, 4);
    }
    while (n-- > 0)
        *dst++ = *src++;
}

/* Columns [c, c + n) of one tap's row of B (blocks `block_stride` bytes apart) from
 * src, `step` bytes apart (step 0: n copies of *src). */
static void put_cols(int8_t *row, int32_t block_stride, int32_t c, int32_t n,
                     const int8_t *src, int32_t step)
{
    int8_t fill[LANES];
    int32_t i;
    if (step == 0) /* copies of one byte: from a run of them */
        for (i = 0; i < LANES; ++i)
            fill[i] = *src;
    while (n > 0) {
        int8_t *p = row + (c >> 3) * block_stride + (c & 7);
        int32_t run = LANES - (c & 7);
        if (run > n)
            run = n;
        c += run;
        n -= run;
        if (step == 1 && run == LANES) { /* a whole block: p is 8-byte aligned */
            int8_t *block = __builtin_assume_aligned(p, 8);
            uint32_t v, w;
            __builtin_memcpy(&v, src, 4);
            __builtin_memcpy(&w, src + 4, 4);
            __builtin_memcpy(block, &v, 4);
            __builtin_memcpy(block + 4, &w, 4);
            src += LANES;
        } else if (step == 1) {
            copy_run(p, src, run);
            src += run;
        } else if (step == 0) {
            copy_run(p, fill, run);
        } else {
            while (run-- > 0) {
                *p++ = *src;
                src += step;
            }
        }
    }
}

/* ceil(a / d) for a >= 0 and a small d, without a DIV (37 cycles) for d = 1, 2. */
static int32_t ceil_div(int32_t a, int32_t d)
{
    return d == 1 ? a : d == 2 ? (a + 1) >> 1 : (a + d - 1) / d;
}

/* A job's columns as pieces of output rows: columns [c, c + n) are outputs
 * (oy, ox .. ox + n - 1). Worked out once per job (one DIV), used by every tap. */
typedef struct {
    int32_t c, n, oy, ox;
} col_run;

static int32_t col_runs(col_run *runs, const dnn64_conv_geom *g, int32_t s0, int32_t valid)
{
    int32_t count = 0, c = 0, oy = s0 / g->w_out, ox = s0 - oy * g->w_out;
    while (c < valid) {
        const int32_t n = g->w_out - ox < valid - c ? g->w_out - ox : valid - c;
        runs[count].c = c;
        runs[count].n = n;
        runs[count].oy = oy;
        runs[count].ox = ox;
        ++count;
        c += n;
        ox = 0;
        ++oy;
    }
    return count;
}

/* One tap's row of B: X[tap][s0 + col] for the job's columns (runs), the input plane xp
 * under the tap at offsets (dy, dx) from each output's window origin, x_zp in the
 * padding. */
static void pack_tap(int8_t *row, int32_t block_stride, const dnn64_conv_geom *g,
                     const int8_t *xp, int32_t dy, int32_t dx, const int8_t *zp,
                     const col_run *runs, int32_t run_count)
{
    const int32_t sw = g->stride_w;
    /* the outputs ox whose input column ox * sw + dx lies inside [0, w_in) */
    int32_t lo = dx >= 0 ? 0 : ceil_div(-dx, sw);
    int32_t hi = dx > g->w_in - 1 ? 0 : ceil_div(g->w_in - dx, sw);
    int32_t i;
    if (hi > g->w_out)
        hi = g->w_out;
    for (i = 0; i < run_count; ++i) {
        const int32_t c = runs[i].c, n = runs[i].n, ox = runs[i].ox;
        const int32_t iy = runs[i].oy * g->stride_h + dy;
        if ((uint32_t)iy >= (uint32_t)g->h_in) {
            put_cols(row, block_stride, c, n, zp, 0);
        } else {
            const int32_t a = lo < ox ? ox : (lo > ox + n ? ox + n : lo);
            const int32_t b = hi < a ? a : (hi > ox + n ? ox + n : hi);
            if (a > ox)
                put_cols(row, block_stride, c, a - ox, zp, 0);
            put_cols(row, block_stride, c + a - ox, b - a, xp + iy * g->w_in + a * sw + dx, sw);
            if (ox + n > b)
                put_cols(row, block_stride, c + b - ox, ox + n - b, zp, 0);
        }
    }
}

/* Planes narrower than GATHER_W_OUT outputs (whose output rows make short runs, each
 * with its own bounds) are packed by gathering from one input channel copied into
 * `padded` with its padding (x_zp): the window extents' (h_out - 1) * stride_h +
 * (k_h - 1) * dil_h + 1 rows of as many columns, when they fit PADDED_BYTES. */
#define GATHER_W_OUT 16
#define PADDED_BYTES 1024
static int8_t DNN64_ALIGNED(padded[PADDED_BYTES]);

static int32_t padded_h(const dnn64_conv_geom *g)
{
    return (g->h_out - 1) * g->stride_h + (g->k_h - 1) * g->dil_h + 1;
}

static int32_t padded_w(const dnn64_conv_geom *g)
{
    return (g->w_out - 1) * g->stride_w + (g->k_w - 1) * g->dil_w + 1;
}

static int gathers_padded(const dnn64_conv_geom *g)
{
    return g->w_out < GATHER_W_OUT && padded_h(g) * padded_w(g) <= PADDED_BYTES;
}

/* padded[py - py0][px] = the channel's x[py - pad_top][px - pad_left] (x_zp outside
 * it) for the window rows py0 <= py < py1 that a job's columns use. */
static void pad_channel(const dnn64_conv_geom *g, const int8_t *xp, int8_t zp, int32_t py0,
                        int32_t py1)
{
    dnn64__pad_plane(xp, g->h_in, g->w_in, g->pad_top - py0, g->pad_left, py1 - py0,
                     padded_w(g), zp, padded);
}

/* The taps [k0, k0 + kc) of columns [s0, s0 + cols) gathered from `padded`, one input
 * channel at a time (`at`: each column's window origin in it), a block of 8 columns at
 * a time. Columns past the last position (valid) repeat its inputs: lanes are
 * independent, and their outputs are never read. */
static void gather_taps(int8_t *b0, int32_t kc, int32_t block_stride, const dnn64_conv_geom *g,
                        const int8_t *xg, int8_t zp, int32_t k, int32_t k0, int32_t s0,
                        int32_t valid, int32_t cols)
{
    const int32_t wp = padded_w(g), ksize = g->k_h * g->k_w, plane = g->h_in * g->w_in;
    int16_t at[COLS_MAX];
    int32_t kk, col, ic = k0 / ksize, ky = (k0 % ksize) / g->k_w, kx = k0 % g->k_w;
    int32_t oy = s0 / g->w_out, ox = s0 - oy * g->w_out;
    /* the window rows of the columns' output rows oy .. */
    const int32_t py0 = oy * g->stride_h;
    const int32_t py1 = ((s0 + valid - 1) / g->w_out) * g->stride_h + (g->k_h - 1) * g->dil_h + 1;
    for (col = 0; col < valid; ++col) {
        at[col] = (int16_t)((oy * g->stride_h - py0) * wp + ox * g->stride_w);
        if (++ox == g->w_out) {
            ox = 0;
            ++oy;
        }
    }
    for (; col < cols; ++col)
        at[col] = at[valid - 1];
    pad_channel(g, xg + ic * plane, zp, py0, py1);
    for (kk = 0; kk < kc && k0 + kk < k; ++kk) {
        const int8_t *src = padded + ky * g->dil_h * wp + kx * g->dil_w;
        int8_t *row = b0 + kk * LANES;
        for (col = 0; col < cols; col += LANES, row += block_stride) {
            const int16_t *a = at + col;
            row[0] = src[a[0]];
            row[1] = src[a[1]];
            row[2] = src[a[2]];
            row[3] = src[a[3]];
            row[4] = src[a[4]];
            row[5] = src[a[5]];
            row[6] = src[a[6]];
            row[7] = src[a[7]];
        }
        if (++kx == g->k_w) {
            kx = 0;
            if (++ky == g->k_h) {
                ky = 0;
                if (++ic < g->c_in / g->group && k0 + kk + 1 < k && kk + 1 < kc)
                    pad_channel(g, xg + ic * plane, zp, py0, py1);
            }
        }
    }
}

/* B[nb][kk][lane] = X[k0 + kk][s0 + 8 nb + lane] of the group's input xg: the input
 * under tap k0 + kk of that output position, x_zp in the padding, 0 past k and past the
 * last position (gathered planes: the last position's inputs, see gather_taps). */
static void pack_inputs(int8_t *b0, const job_shape *s, const dnn64_conv_geom *g,
                        const int8_t *xg, int32_t x_zp, int32_t k, int32_t k0, int32_t s0)
{
    const int32_t kc = s->kgroups * LANES, cols = s->blocks * LANES;
    const int32_t positions = g->h_out * g->w_out, in_plane = g->h_in * g->w_in;
    const int32_t valid = positions - s0 < cols ? positions - s0 : cols;
    const int32_t block_stride = kc * LANES, ksize = g->k_h * g->k_w;
    /* a 1x1 Conv with stride 1 and no padding: tap k's row is xg[k * plane + s] */
    const int plain = ksize == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_top == 0 &&
                      g->pad_left == 0 && g->h_out == g->h_in && g->w_out == g->w_in;
    const int8_t zp = (int8_t)x_zp, zero = 0;
    const int gather = !plain && gathers_padded(g);
    col_run runs[COLS_MAX];
    const int32_t run_count = plain || gather ? 0 : col_runs(runs, g, s0, valid);
    int32_t kk, ic = k0 / ksize, ky = (k0 % ksize) / g->k_w, kx = k0 % g->k_w;
    if (gather) /* the taps below k; zeros after them below */
        gather_taps(b0, kc, block_stride, g, xg, zp, k, k0, s0, valid, cols);
    for (kk = 0; kk < kc; ++kk) {
        int8_t *row = b0 + kk * LANES;
        if (k0 + kk >= k) {
            put_cols(row, block_stride, 0, cols, &zero, 0);
            continue;
        }
        if (plain)
            put_cols(row, block_stride, 0, valid, xg + ic * in_plane + s0, 1);
        else if (!gather)
            pack_tap(row, block_stride, g, xg + ic * in_plane, ky * g->dil_h - g->pad_top,
                     kx * g->dil_w - g->pad_left, &zp, runs, run_count);
        if (valid < cols && !gather)
            put_cols(row, block_stride, valid, cols - valid, &zero, 0);
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
 * moves 32 bytes of each of those rows into DMEM as they are (rows layout), when they
 * are 8-byte aligned and at least 32 bytes apart. */
static int gathers_rows(const dnn64_conv_geom *g, const int8_t *xg)
{
    const int32_t plane = g->h_in * g->w_in;
    return g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
           g->pad_top == 0 && g->pad_left == 0 && g->h_out == g->h_in && g->w_out == g->w_in &&
           plane % 8 == 0 && plane >= COLS_MAX && ((uintptr_t)xg & 7u) == 0;
}

/* Row r's outputs of the last job: its int8 from Y (the RSP's output stage), or from V
 * (2 acc, in S) through the CPU's own. */
static void finish_row(const job_shape *s, int32_t r, int on_rsp, int8_t *y_row,
                       int32_t valid, int32_t mult, int32_t shift, const dnn64_q8_out *q)
{
    int32_t col;
    if (on_rsp) {
        const int8_t *src = (const int8_t *)result + s->y + r * s->blocks * LANES;
        if (q->lut)
            for (col = 0; col < valid; ++col)
                y_row[col] = q->lut[src[col] + 128];
        else
            for (col = 0; col < valid; ++col)
                y_row[col] = src[col];
        return;
    }
    for (col = 0; col < valid; ++col) {
        const uint8_t *v = result + s->s + (uint32_t)((r * s->blocks + col / LANES) *
                                                      STATE_BYTES + (col % LANES) * 2);
        const uint32_t lo = ((uint32_t)v[0] << 8) | v[1];
        const uint32_t hi = ((uint32_t)v[16] << 8) | v[17];
        const int32_t acc = (int32_t)((hi << 16) | lo) / 2; /* V is even */
        y_row[col] = dnn64__out_s8(acc, mult, shift, q);
    }
}

/* One row group (output channels of one group and image) of a Conv, as jobs. */
typedef struct {
    const dnn64_conv_geom *g;
    const int8_t *w_rows, *xg;
    int32_t x_zp, k, kc, k_jobs, positions, cols;
    int32_t xg_row_stride; /* own_b: from one row's group input to the next's */
    int rows_layout, weights_dma;
    job_shape s;
} row_group;

/* Job j's image: positions from (j / k_jobs) * cols, taps from (j % k_jobs) * kc. */
static void prepare_job(const row_group *rg, int32_t j, uint8_t *image, const dnn64_q8_out *q)
{
    const int32_t kj = j % rg->k_jobs, k0 = kj * rg->kc;
    const int32_t kg_left = (rg->k - k0 + LANES - 1) / LANES;
    job_shape sj = rg->s;
    sj.kgroups = kg_left < rg->s.kgroups ? kg_left : rg->s.kgroups;
    put_header(image, &sj, sj.kgroups,
               (kj == 0 ? FLAG_FIRST : 0u) | (kj == rg->k_jobs - 1 ? FLAG_LAST : 0u),
               rg->rows_layout, q);
    if (!rg->weights_dma && (rg->k_jobs > 1 || j == 0))
        pack_weights(image, &sj, rg->w_rows, rg->k, k0, sj.kgroups);
    if (!rg->rows_layout) {
        int32_t r;
        for (r = 0; r < (sj.b_row_stride ? sj.rows : 1); ++r) /* each row's group, or one */
            pack_inputs((int8_t *)image + sj.b + (uint32_t)r * sj.b_row_stride, &sj, rg->g,
                        rg->xg + r * rg->xg_row_stride, rg->x_zp, rg->k, k0,
                        (j / rg->k_jobs) * rg->cols);
    }
}

/* Job j's image (and what comes straight from the tensors) to DMEM. */
static void send_job(const row_group *rg, int32_t j, const uint8_t *image)
{
    const int32_t kj = j % rg->k_jobs, k0 = kj * rg->kc;
    const int32_t taps = rg->k - k0 < rg->kc ? rg->k - k0 : rg->kc;
    const int32_t kg = (taps + LANES - 1) / LANES;
    const job_shape *s = &rg->s;
    if (j == 0) /* header, weights (unless DMA'd below) and the row constants */
        dnn64_rsp_write(0, image, s->b);
    else if (!rg->weights_dma && rg->k_jobs > 1)
        dnn64_rsp_write(0, image, s->p);
    else
        dnn64_rsp_write(0, image, HEADER_BYTES);
    if (rg->weights_dma && (rg->k_jobs > 1 || j == 0))
        dnn64_rsp_write_rows(s->a, rg->w_rows + k0, (uint32_t)(kg * LANES), (uint32_t)s->rows,
                             (uint32_t)rg->k);
    if (rg->rows_layout) /* taps past k meet zero weights: any bytes will do */
        dnn64_rsp_write_rows(s->b, rg->xg + k0 * rg->positions + (j / rg->k_jobs) * rg->cols,
                             (uint32_t)rg->cols, (uint32_t)taps, (uint32_t)rg->positions);
    else
        dnn64_rsp_write(s->b, image + s->b,
                        (uint32_t)(kg * 64 * s->blocks) * (s->b_row_stride ? (uint32_t)s->rows : 1u));
}

/* Inputs resident in DMEM. A packed block of inputs (B: some columns x some taps) is
 * the same for every output channel of a group, so it goes to DMEM once and serves every
 * group of rows of a batch (up to RECORDS_BYTES of their per-row state) in turn: the CPU
 * packs each input byte once per batch rather than once per group of 8 or so rows, which
 * was most of a 3x3 layer's time. Each row group's job brings its weights (SP DMA from
 * the tile), its P rows and its V (S, saved in `records` between the jobs along k) and
 * leaves B in place. Jobs are double-buffered: DMEM holds two headers (at 0 and
 * DNN64_RSP_HEADER_B), B, then two slots of A, P, S, Y; while the RSP runs the job of one
 * slot, the CPU reads the last job's results out of the other and moves the next job in
 * (dnn64_rsp_*_beside), so the RSP waits for the CPU only where B changes. */
#define RECORDS_BYTES 16384
/* CPU cycles a job costs besides the RSP's (start and wait; the SP DMA of the job's
 * weights, P and S overlaps the previous job), and CPU cycles per RSP cycle (93.75 /
 * 62.5 MHz, as 3 / 2). */
#define RESIDENT_JOB_CYCLES 600
/* The CPU's packing of a step's B (while the RSP runs the step's jobs): about
 * RESIDENT_TAP_CYCLES a tap and RESIDENT_PACK_CYCLES a byte (block copies). */
#define RESIDENT_TAP_CYCLES 120
#define RESIDENT_PACK_CYCLES 2
#define RSP_CYCLES_PER_TAPS8 21 /* matmul_s8's loop: 8 taps of a row and a column block */
#define RSP_CYCLES_PER_BLOCK 40 /* and its sum, state and output stage */
#define B_AT (2 * HEADER_BYTES) /* B after the two headers */

/* Weights whose rows SP DMA cannot move as they are (K not a multiple of 8, or a
 * misaligned tile) are copied here once a call, rows padded with zeros to a multiple
 * of 8 bytes, when the tile fits. */
#define WPAD_BYTES 12288

static uint8_t DNN64_ALIGNED(records[RECORDS_BYTES]); /* per row group: P rows, then S */
static int8_t DNN64_ALIGNED(wpad[WPAD_BYTES]);
static uint8_t DNN64_ALIGNED(header_images[2][HEADER_BYTES]);

/* Slot 0 of a job of at most `rows_wanted` rows (B at B_AT, then the slot's A, P, S, Y;
 * slot 1 follows it, slot_shape), or rows 0 if none fits. */
static job_shape resident_shape_of(int32_t rows_wanted, int32_t blocks, int32_t kgroups,
                                   int state)
{
    job_shape s;
    const int32_t per_row = kgroups * 8 + PARAM_BYTES + (state ? blocks * STATE_BYTES : 0) +
                            blocks * LANES;
    const int32_t a = B_AT + blocks * kgroups * 64;
    /* each slot: its rows and up to 30 bytes of 16-byte alignment */
    const int32_t room = ((int32_t)DNN64_RSP_DMEM_BYTES - a) / 2 - 32;
    const int32_t rows = rows_that_fit(room, per_row, rows_wanted);
    s.rows = rows;
    s.blocks = blocks;
    s.kgroups = kgroups;
    s.b = B_AT;
    s.a = (uint32_t)a;
    s.p = align16(s.a + (uint32_t)(rows * kgroups * 8));
    s.s = s.p + (uint32_t)(rows * PARAM_BYTES);
    s.y = s.s + (state ? (uint32_t)(rows * blocks * STATE_BYTES) : 0u);
    s.b_block_stride = (uint32_t)(kgroups * 64);
    s.b_k_stride = LANES;
    s.b_row_stride = 0;
    return s;
}

/* The job shape of slot 0 or 1: slot 1's A, P, S, Y follow slot 0's. */
static job_shape slot_shape(const job_shape *s0, int slot)
{
    job_shape s = *s0;
    const uint32_t shift =
        slot ? align16(s0->y + (uint32_t)(s0->rows * s0->blocks * LANES)) - s0->a : 0u;
    s.a += shift;
    s.p += shift;
    s.s += shift;
    s.y += shift;
    return s;
}

/* The shape (k groups of 16 or 8, 1 to 4 column blocks) whose jobs cost the least in
 * all: per step (one B), the longer of the CPU packing the next B and the RSP running
 * the step's jobs, and RESIDENT_JOB_CYCLES a job. With few rows (a small tile of
 * weights) packing decides, and wide blocks share its cost per tap. */
static job_shape resident_shape(int32_t rows_wanted, int32_t positions, int32_t k,
                                int cpu_stage)
{
    const int32_t kg_all = (k + LANES - 1) / LANES;
    const int32_t blocks_needed = (positions + LANES - 1) / LANES;
    /* one block of 8 k groups always fits (at least 13 rows); the loop looks for better */
    job_shape best = resident_shape_of(rows_wanted, 1, kg_all < 8 ? kg_all : 8, 1);
    float best_cost = -1.0f;
    int32_t kg, blocks;
    for (kg = 16; kg >= 8; kg /= 2) {
        const int32_t kgc = kg < kg_all ? kg : kg_all;
        const int32_t k_jobs = (k + kgc * LANES - 1) / (kgc * LANES);
        for (blocks = 1; blocks <= BLOCKS_MAX && blocks <= blocks_needed; ++blocks) {
            const job_shape s = resident_shape_of(rows_wanted, blocks, kgc,
                                                  cpu_stage || k_jobs > 1);
            float groups, rsp, pack, cost;
            if (s.rows == 0)
                continue;
            groups = (float)((rows_wanted + s.rows - 1) / s.rows);
            rsp = groups * (float)(s.rows * blocks * (kgc * RSP_CYCLES_PER_TAPS8 +
                                                      RSP_CYCLES_PER_BLOCK)) * 1.5f;
            pack = (float)(kgc * LANES * (RESIDENT_TAP_CYCLES +
                                          RESIDENT_PACK_CYCLES * blocks * LANES));
            cost = (float)((positions + blocks * LANES - 1) / (blocks * LANES) * k_jobs) *
                   ((rsp > pack ? rsp : pack) + groups * (float)RESIDENT_JOB_CYCLES);
            if (best_cost < 0.0f || cost < best_cost) {
                best = s;
                best_cost = cost;
            }
        }
    }
    return best;
}

/* Whether SP DMA moves the tile's weight rows as they are. */
static int weights_dmaable(const int8_t *w_tile, int32_t k)
{
    return k % 8 == 0 && ((uintptr_t)w_tile & 7u) == 0;
}

/* Whether a Conv takes the resident path: groups of at least 8 channels (not
 * depthwise), a tile of at least RESIDENT_MIN_ROWS channels (fewer share B too little:
 * measured in cen64, the packed jobs do better on ResNet-18's 3x3 layers in tiles of 7
 * and 14 channels), weight rows DMA-able or a tile that fits `wpad` padded, inputs that
 * are not moved as rows (1x1 stride 1 planes of a multiple of 8 bytes). */
#define RESIDENT_MIN_ROWS 16
static int takes_resident(const dnn64_conv_geom *g, const int8_t *x, const int8_t *w_tile,
                          int32_t k, int32_t oc_count)
{
    const int32_t ocpg = g->c_out / g->group;
    return ocpg >= LANES && oc_count >= RESIDENT_MIN_ROWS && !gathers_rows(g, x) &&
           (weights_dmaable(w_tile, k) || oc_count * ((k + 7) & ~7) <= WPAD_BYTES);
}

/* One batch of a conv group's channels as a sequence of jobs: job j is row group
 * j % groups at step j / groups (column block (step / k_jobs) * cols, taps from
 * (step % k_jobs) * kc), in DMEM slot j & 1. */
typedef struct {
    const dnn64_conv_geom *g;
    const int8_t *xg, *w_rows; /* the batch's first weight row */
    int32_t w_stride, x_zp, k, kc, k_jobs, cols, positions, rows, groups, batch, rec_bytes;
    int all_on_rsp;
    job_shape slot[2];
    const int32_t *mult, *shift; /* the batch's first channel's */
    const dnn64_q8_out *q;
    int8_t *y; /* the batch's first channel's outputs */
} batch_jobs;

static int32_t job_kgroups(const batch_jobs *b, int32_t step)
{
    const int32_t left = (b->k - (step % b->k_jobs) * b->kc + LANES - 1) / LANES;
    return left < b->slot[0].kgroups ? left : b->slot[0].kgroups;
}

static int32_t job_rows(const batch_jobs *b, int32_t j)
{
    const int32_t left = b->batch - (j % b->groups) * b->rows;
    return left < b->rows ? left : b->rows;
}

/* Job j's header, weights, P and S (the RSP may be running the job of the other slot). */
static void load_job(const batch_jobs *b, int32_t j)
{
    const int32_t step = j / b->groups, grp = j % b->groups, kj = step % b->k_jobs;
    const uint8_t *rec = records + grp * b->rec_bytes;
    job_shape sj = b->slot[j & 1];
    sj.rows = job_rows(b, j);
    sj.kgroups = job_kgroups(b, step);
    put_header(header_images[j & 1], &sj, sj.kgroups,
               (kj == 0 ? FLAG_FIRST : 0u) | (kj == b->k_jobs - 1 ? FLAG_LAST : 0u), 0, b->q);
    dnn64_rsp_write_beside((uint32_t)(j & 1) * DNN64_RSP_HEADER_B, header_images[j & 1],
                           HEADER_BYTES);
    dnn64_rsp_write_rows_beside(sj.a, b->w_rows + grp * b->rows * b->w_stride + kj * b->kc,
                                (uint32_t)(sj.kgroups * LANES), (uint32_t)sj.rows,
                                (uint32_t)b->w_stride);
    /* P, and S when this job continues the sums of the previous step */
    dnn64_rsp_write_beside(sj.p, rec, kj == 0 ? sj.s - sj.p : (uint32_t)b->rec_bytes);
}

/* After job j: its S back to its record, or (the last step along k) its outputs to
 * `result`; returns 1 when there are outputs to copy out. */
static int collect_job(const batch_jobs *b, int32_t j)
{
    const int32_t step = j / b->groups, kj = step % b->k_jobs;
    const job_shape *sj = &b->slot[j & 1];
    if (kj < b->k_jobs - 1) {
        dnn64_rsp_read_beside(records + (j % b->groups) * b->rec_bytes + (sj->s - sj->p),
                              sj->s, sj->y - sj->s);
        return 0;
    }
    if (!b->all_on_rsp)
        dnn64_rsp_read_beside(result + sj->s, sj->s, sj->y - sj->s);
    dnn64_rsp_read_beside(result + sj->y, sj->y, (uint32_t)(job_rows(b, j) * b->cols));
    return 1;
}

/* Job j's int8 outputs from `result` into y. */
static void copy_out(const batch_jobs *b, int32_t j)
{
    const int32_t s0 = (j / b->groups / b->k_jobs) * b->cols, t = (j % b->groups) * b->rows;
    const int32_t valid = b->positions - s0 < b->cols ? b->positions - s0 : b->cols;
    int32_t r;
    for (r = 0; r < job_rows(b, j); ++r)
        finish_row(&b->slot[j & 1], r, requant_on_rsp(b->mult[t + r], b->shift[t + r]),
                   b->y + (t + r) * b->positions + s0, valid, b->mult[t + r], b->shift[t + r],
                   b->q);
}

static uint32_t start_pc(int32_t j)
{
    return (j & 1) ? DNN64_RSP_PC_HEADER_B : 0u;
}

/* The jobs of one batch. While job j runs: job j - 1's results out, job j + 1 in (same
 * B), the next step's B packed (during a step's first job). */
static void run_batch(const batch_jobs *b)
{
    const int32_t steps = (b->positions + b->cols - 1) / b->cols * b->k_jobs;
    const int32_t jobs = steps * b->groups;
    int32_t j, pending = -1, collected = -1;
    job_shape sb = b->slot[0];
    sb.kgroups = job_kgroups(b, 0);
    pack_inputs((int8_t *)images[0], &sb, b->g, b->xg, b->x_zp, b->k, 0, 0);
    dnn64_rsp_write(B_AT, images[0], (uint32_t)(sb.kgroups * 64 * sb.blocks));
    load_job(b, 0);
    dnn64_rsp_start_at(start_pc(0));
    for (j = 0; j < jobs; ++j) {
        const int32_t step = j / b->groups;
        if (j > 0 && collected < j - 1 && collect_job(b, j - 1))
            pending = j - 1;
        if (pending >= 0)
            copy_out(b, pending);
        pending = -1;
        if (j + 1 < jobs && (j + 1) / b->groups == step)
            load_job(b, j + 1);
        if (j % b->groups == 0 && step + 1 < steps) {
            sb.kgroups = job_kgroups(b, step + 1);
            pack_inputs((int8_t *)images[(step + 1) & 1], &sb, b->g, b->xg, b->x_zp, b->k,
                        ((step + 1) % b->k_jobs) * b->kc, ((step + 1) / b->k_jobs) * b->cols);
        }
        dnn64_rsp_wait();
        if (j + 1 == jobs || (j + 1) / b->groups != step) {
            /* the last job, or B changes: the RSP stays idle until the next job is in */
            if (collect_job(b, j))
                pending = j;
            collected = j;
            if (j + 1 == jobs)
                break;
            sb.kgroups = job_kgroups(b, step + 1);
            dnn64_rsp_write(B_AT, images[(step + 1) & 1],
                            (uint32_t)(sb.kgroups * 64 * sb.blocks));
            load_job(b, j + 1);
        }
        dnn64_rsp_start_at(start_pc(j + 1));
    }
    if (pending >= 0)
        copy_out(b, pending);
}

/* One conv group's channels [t0, t0 + count) of the tile for image n, in batches. */
static void resident_channels(const dnn64_conv_geom *g, int32_t n, const int8_t *x,
                              int32_t x_zero_point, const int8_t *w_rows, int32_t w_stride,
                              const int32_t *bias_tile, const int32_t *mult_tile,
                              const int32_t *shift_tile, int32_t oc_begin, int32_t t0,
                              int32_t count, const dnn64_q8_out *q, int8_t *y)
{
    const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t0);
    batch_jobs b;
    int32_t t, r, b0, batch_rows;
    b.g = g;
    b.xg = x + c.x;
    b.w_stride = w_stride;
    b.x_zp = x_zero_point;
    b.k = g->c_in / g->group * g->k_h * g->k_w;
    b.positions = g->h_out * g->w_out;
    b.q = q;
    b.all_on_rsp = 1;
    for (t = 0; t < count && b.all_on_rsp; ++t)
        b.all_on_rsp = requant_on_rsp(mult_tile[t0 + t], shift_tile[t0 + t]);
    b.slot[0] = resident_shape(count, b.positions, b.k, !b.all_on_rsp);
    b.slot[1] = slot_shape(&b.slot[0], 1);
    b.rows = b.slot[0].rows;
    b.kc = b.slot[0].kgroups * LANES;
    b.k_jobs = (b.k + b.kc - 1) / b.kc;
    b.cols = b.slot[0].blocks * LANES;
    b.rec_bytes = (int32_t)(b.slot[0].y - b.slot[0].p); /* P rows, then S */
    batch_rows = RECORDS_BYTES / b.rec_bytes * b.rows;
    for (b0 = 0; b0 < count; b0 += batch_rows) {
        b.batch = count - b0 < batch_rows ? count - b0 : batch_rows;
        b.groups = (b.batch + b.rows - 1) / b.rows;
        b.w_rows = w_rows + b0 * w_stride;
        b.mult = mult_tile + t0 + b0;
        b.shift = shift_tile + t0 + b0;
        b.y = y + c.y + b0 * b.positions;
        for (r = 0; r < b.batch; ++r) {
            const int32_t tr = t0 + b0 + r;
            const int8_t *wr = b.w_rows + r * w_stride;
            int32_t kk, sum = 0;
            for (kk = 0; kk < b.k; ++kk)
                sum += wr[kk];
            put_params(records + (r / b.rows) * b.rec_bytes + (r % b.rows) * PARAM_BYTES,
                       (bias_tile ? bias_tile[tr] : 0) - x_zero_point * sum, mult_tile[tr],
                       shift_tile[tr], requant_on_rsp(mult_tile[tr], shift_tile[tr]));
        }
        run_batch(&b);
    }
}

/* The resident path over the tile: each image, each conv group's share of the tile. */
static void resident_conv(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                          const int8_t *w_tile, const int32_t *bias_tile,
                          const int32_t *mult_tile, const int32_t *shift_tile,
                          int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                          int8_t *y)
{
    const int32_t ocpg = g->c_out / g->group;
    const int32_t k = g->c_in / g->group * g->k_h * g->k_w;
    const int dma = weights_dmaable(w_tile, k);
    const int32_t w_stride = dma ? k : (k + 7) & ~7;
    int32_t n, t0, kk;
    if (!dma) /* rows padded to 8 bytes, zeros past k (they meet zero inputs too) */
        for (t0 = 0; t0 < oc_count; ++t0)
            for (kk = 0; kk < w_stride; ++kk)
                wpad[t0 * w_stride + kk] = kk < k ? w_tile[t0 * k + kk] : 0;
    for (n = 0; n < g->n; ++n)
        for (t0 = 0; t0 < oc_count;) {
            const int32_t left = ocpg - (oc_begin + t0) % ocpg;
            const int32_t count = left < oc_count - t0 ? left : oc_count - t0;
            resident_channels(g, n, x, x_zero_point, (dma ? w_tile : wpad) + t0 * w_stride,
                              w_stride, bias_tile, mult_tile, shift_tile, oc_begin, t0, count,
                              q, y);
            t0 += count;
        }
}

void dnn64_rsp_conv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                       const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                       const dnn64_q8_out *q, int8_t *y)
{
    const int32_t icpg = g->c_in / g->group, ocpg = g->c_out / g->group;
    const int32_t k = icpg * g->k_h * g->k_w, positions = g->h_out * g->w_out;
    const int32_t blocks_needed = (positions + LANES - 1) / LANES;
    int32_t n, t0, j, r, t, kgroups;
    int fits = k <= DNN64_RSP_K_MAX && dnn64_rsp_available && dnn64_rsp_available();
    row_group rg;
    for (t = 0; fits && bias_tile && t < oc_count; ++t)
        fits = bias_tile[t] < BIAS_LIMIT && bias_tile[t] > -BIAS_LIMIT;
    if (!fits) {
        dnn64_conv_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile, oc_begin,
                      oc_count, q, y);
        return;
    }
    if (dnn64__rsp_stem_s8(g, NULL, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                           oc_begin, oc_count, q, y))
        return;
    if (takes_resident(g, x, w_tile, k, oc_count)) {
        resident_conv(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile, oc_begin,
                      oc_count, q, y);
        return;
    }
    rg.g = g;
    rg.x_zp = x_zero_point;
    rg.k = k;
    rg.positions = positions;
    for (n = 0; n < g->n; ++n) {
        for (t0 = 0; t0 < oc_count;) {
            /* rows of one group share their input block; with one channel a group
             * (depthwise), a job takes rows of several groups, each with its own */
            const int own_b = ocpg == 1;
            const int32_t left_in_group = own_b ? oc_count - t0 : ocpg - (oc_begin + t0) % ocpg;
            const int32_t wanted = left_in_group < oc_count - t0 ? left_in_group : oc_count - t0;
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t0);
            int all_on_rsp = 1;
            int32_t jobs, done = -1; /* done: a job whose outputs are in `result` */
            rg.w_rows = w_tile + c.w;
            rg.xg = x + c.x;
            rg.xg_row_stride = icpg * g->h_in * g->w_in;
            rg.rows_layout = !own_b && gathers_rows(g, rg.xg);
            /* weights by SP DMA straight from the tile when its rows are 8-byte aligned */
            rg.weights_dma = k % 8 == 0 && ((uintptr_t)rg.w_rows & 7u) == 0;
            for (t = 0; t < wanted && all_on_rsp; ++t)
                all_on_rsp = requant_on_rsp(mult_tile[t0 + t], shift_tile[t0 + t]);
            if (rg.rows_layout) {
                /* input rows: taps 32 bytes apart (4 blocks), at most 64 taps (2 KiB) */
                kgroups = (k + LANES - 1) / LANES;
                if (kgroups > ROWS_KGROUPS_MAX)
                    kgroups = ROWS_KGROUPS_MAX;
                rg.s = shape_of(wanted, BLOCKS_MAX, kgroups,
                                (k + kgroups * LANES - 1) / (kgroups * LANES) > 1 || !all_on_rsp,
                                0);
            } else {
                rg.s = shape_for(wanted, blocks_needed, k, !all_on_rsp, own_b);
            }
            rg.kc = rg.s.kgroups * LANES;
            rg.k_jobs = (k + rg.kc - 1) / rg.kc;
            rg.cols = rg.s.blocks * LANES;
            jobs = (positions + rg.cols - 1) / rg.cols * rg.k_jobs;
            if (rg.rows_layout) {
                rg.s.b_block_stride = LANES;
                rg.s.b_k_stride = (uint32_t)rg.cols;
            }
            for (r = 0; r < rg.s.rows; ++r) {
                int32_t kk, sum = 0;
                for (kk = 0; kk < k; ++kk)
                    sum += rg.w_rows[r * k + kk];
                put_params(images[0] + rg.s.p + (uint32_t)(r * PARAM_BYTES),
                           (bias_tile ? bias_tile[t0 + r] : 0) - x_zero_point * sum,
                           mult_tile[t0 + r], shift_tile[t0 + r],
                           requant_on_rsp(mult_tile[t0 + r], shift_tile[t0 + r]));
            }
            prepare_job(&rg, 0, images[0], q);
            /* While the RSP runs job j, the CPU prepares job j + 1 and writes out the
             * outputs of the last finished job. */
            for (j = 0; j <= jobs; ++j) {
                if (j < jobs) {
                    send_job(&rg, j, images[j & 1]);
                    dnn64_rsp_start();
                    if (j + 1 < jobs)
                        prepare_job(&rg, j + 1, images[(j + 1) & 1], q);
                }
                if (done >= 0) {
                    const int32_t s0 = (done / rg.k_jobs) * rg.cols;
                    const int32_t valid = positions - s0 < rg.cols ? positions - s0 : rg.cols;
                    for (r = 0; r < rg.s.rows; ++r)
                        finish_row(&rg.s, r, requant_on_rsp(mult_tile[t0 + r],
                                                            shift_tile[t0 + r]),
                                   y + c.y + r * positions + s0, valid, mult_tile[t0 + r],
                                   shift_tile[t0 + r], q);
                    done = -1;
                }
                if (j < jobs) {
                    dnn64_rsp_wait();
                    if (j % rg.k_jobs == rg.k_jobs - 1) {
                        if (!all_on_rsp)
                            dnn64_rsp_read(result + rg.s.s, rg.s.s, rg.s.y - rg.s.s);
                        dnn64_rsp_read(result + rg.s.y, rg.s.y, (uint32_t)(rg.s.rows * rg.cols));
                        done = j;
                    }
                }
            }
            t0 += rg.s.rows;
        }
    }
}

/* B[nb][kk][lane] = b_tile[oc0 + 8 nb + lane][k0 + kk] (0 past the channels or k), and
 * wsum[col] += the column's weights. */
static void pack_columns(int8_t *b0, const job_shape *s, const int8_t *b_tile, int32_t k,
                         int32_t k0, int32_t oc0, int32_t oc_count, int32_t *wsum)
{
    const int32_t kc = s->kgroups * LANES, cols = s->blocks * LANES;
    const int32_t taps = k - k0 < kc ? k - k0 : kc;
    int32_t col, kk;
    for (col = 0; col < cols; ++col) {
        int8_t *dst = b0 + (col >> 3) * kc * LANES + (col & 7);
        const int8_t *src = b_tile + (oc0 + col) * k + k0;
        int32_t sum = 0;
        if (oc0 + col >= oc_count) {
            for (kk = 0; kk < kc; ++kk)
                dst[kk * LANES] = 0;
            continue;
        }
        for (kk = 0; kk < taps; ++kk) {
            dst[kk * LANES] = src[kk];
            sum += src[kk];
        }
        for (; kk < kc; ++kk)
            dst[kk * LANES] = 0;
        wsum[col] += sum;
    }
}

void dnn64_rsp_gemv_s8(int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                       const int8_t *b_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                       const dnn64_q8_out *q, int8_t *y)
{
    const int32_t kgroups = (k + LANES - 1) / LANES < KGROUPS_MAX ? (k + LANES - 1) / LANES
                                                                 : KGROUPS_MAX;
    const int32_t kc = kgroups * LANES, k_jobs = (k + kc - 1) / kc;
    const int32_t fit = (int32_t)(DNN64_RSP_DMEM_BYTES / 2u) / (kgroups * 64);
    const job_shape s = shape_of(1, fit < BLOCKS_MAX ? fit : BLOCKS_MAX, kgroups, 1, 0);
    const int32_t cols = s.blocks * LANES;
    int32_t oc0, kj, col, wsum[COLS_MAX];
    uint8_t *image = images[0];
    if (k > DNN64_RSP_K_MAX || !dnn64_rsp_available || !dnn64_rsp_available()) {
        dnn64_gemm_s8(1, k, n, a, a_zero_point, b_tile, 1, bias_tile, mult_tile, shift_tile,
                      oc_begin, oc_count, q, y);
        return;
    }
    put_params(image + s.p, 0, 0, 0, 0); /* V = 2 sum a B; the CPU's output stage */
    for (oc0 = 0; oc0 < oc_count; oc0 += cols) {
        for (col = 0; col < cols; ++col)
            wsum[col] = 0;
        for (kj = 0; kj < k_jobs; ++kj) {
            const int32_t k0 = kj * kc, taps = k - k0 < kc ? k - k0 : kc;
            job_shape sj = s;
            int32_t kk;
            sj.kgroups = (taps + LANES - 1) / LANES;
            put_header(image, &sj, sj.kgroups,
                       (kj == 0 ? FLAG_FIRST : 0u) | (kj == k_jobs - 1 ? FLAG_LAST : 0u), 0, q);
            for (kk = 0; kk < sj.kgroups * LANES; ++kk) /* the row of A: a's taps */
                ((int8_t *)image)[s.a + (uint32_t)kk] = kk < taps ? a[k0 + kk] : 0;
            pack_columns((int8_t *)image + s.b, &sj, b_tile, k, k0, oc0, oc_count, wsum);
            dnn64_rsp_write(0, image, s.b + (uint32_t)(sj.kgroups * 64 * s.blocks));
            dnn64_rsp_start();
            dnn64_rsp_wait();
        }
        dnn64_rsp_read(result + s.s, s.s, (uint32_t)(s.blocks * STATE_BYTES));
        for (col = 0; col < cols && oc0 + col < oc_count; ++col) {
            const int32_t t = oc0 + col;
            const uint8_t *v = result + s.s + (uint32_t)((col / LANES) * STATE_BYTES +
                                                         (col % LANES) * 2);
            const uint32_t lo = ((uint32_t)v[0] << 8) | v[1];
            const uint32_t hi = ((uint32_t)v[16] << 8) | v[17];
            const int32_t dot = (int32_t)((hi << 16) | lo) / 2; /* V is even */
            const uint32_t acc = (uint32_t)(bias_tile ? bias_tile[t] : 0) + (uint32_t)dot -
                                 (uint32_t)a_zero_point * (uint32_t)wsum[col];
            y[oc_begin + t] = dnn64__out_s8((int32_t)acc, mult_tile[t], shift_tile[t], q);
        }
    }
}

/* The output stage's channel test and P rows, for the other RSP kernels
 * (dnn64_rsp_internal.h). */
int dnn64__rsp_requant_on_rsp(int32_t mult, int32_t shift)
{
    return requant_on_rsp(mult, shift);
}

void dnn64__rsp_put_params(uint8_t *p, int32_t c, int32_t mult, int32_t shift, int on_rsp)
{
    put_params(p, c, mult, shift, on_rsp);
}
