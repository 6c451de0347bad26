/* matmul_s8.rsp's jobs (dnn64_rsp_matmul.h): their shapes, headers and P rows, the
 * im2col blocks of inputs (B) the CPU packs for a Conv, and the outputs it reads back. */
#include "dnn64_internal.h"
#include "dnn64_rsp_internal.h"
#include "dnn64_rsp_matmul.h"

uint8_t DNN64_ALIGNED(dnn64__rsp_images[2][DNN64_RSP_DMEM_BYTES]);
uint8_t DNN64_ALIGNED(dnn64__rsp_result[DNN64_RSP_DMEM_BYTES]);

int32_t dnn64__rsp_rows_that_fit(int32_t room, int32_t per_row, int32_t rows_wanted)
{
    int32_t rows = room > 0 ? room / per_row : 0;
    if (rows > rows_wanted)
        rows = rows_wanted;
    if (rows > ROWS_MAX)
        rows = ROWS_MAX;
    return rows;
}

job_shape dnn64__rsp_shape_of(int32_t rows_wanted, int32_t blocks, int32_t kgroups, int state,
                              int own_b)
{
    job_shape s;
    const int32_t b_bytes = blocks * kgroups * 64;
    const int32_t per_row = kgroups * 8 + PARAM_BYTES + (state ? blocks * STATE_BYTES : 0) +
                            blocks * LANES + (own_b ? b_bytes : 0);
    const int32_t room =
        (int32_t)DNN64_RSP_DMEM_BYTES - HEADER_BYTES - 16 - (own_b ? 0 : b_bytes);
    const int32_t rows = dnn64__rsp_rows_that_fit(room, per_row, rows_wanted);
    s.rows = rows;
    s.blocks = blocks;
    s.kgroups = kgroups;
    s.a = HEADER_BYTES;
    s.p = dnn64__rsp_align16(s.a + (uint32_t)(rows * kgroups * 8));
    s.b = s.p + (uint32_t)(rows * PARAM_BYTES);
    s.b_row_stride = own_b ? (uint32_t)b_bytes : 0u;
    s.s = s.b + (uint32_t)(own_b ? rows * b_bytes : b_bytes);
    s.y = s.s + (state ? (uint32_t)(rows * blocks * STATE_BYTES) : 0u);
    s.b_block_stride = (uint32_t)(kgroups * 64); /* packed [nb][k][8] */
    s.b_k_stride = LANES;
    return s;
}

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void dnn64__rsp_put_header(uint8_t *job, const job_shape *s, int32_t kgroups, uint32_t flags,
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

/* The output stage of a channel runs on the RSP: 2 <= -shift <= 15 and a normalised
 * multiplier above 2^30 (matmul_s8.rsp's conditions). A table (q->lut), if any, is
 * applied by the CPU to what the RSP writes. */
int dnn64__rsp_requant_on_rsp(int32_t mult, int32_t shift)
{
    return shift <= -2 && shift >= -15 && mult > (1 << 30);
}

/* P row: 2c (c = bias - x_zp * sum W) and the output stage constants of matmul_s8.rsp. */
void dnn64__rsp_put_params(uint8_t *p, int32_t c, int32_t mult, int32_t shift, int on_rsp)
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

/* A 1x1 Conv with stride 1 and no padding: tap k's row is xg[k * plane + s]. */
static int plain_1x1(const dnn64_conv_geom *g)
{
    return g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
           g->pad_top == 0 && g->pad_left == 0 && g->h_out == g->h_in && g->w_out == g->w_in;
}

int dnn64__rsp_gathers_planes(const dnn64_conv_geom *g)
{
    return !plain_1x1(g) && g->w_out < GATHER_W_OUT &&
           padded_h(g) * padded_w(g) <= PADDED_BYTES;
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

/* B[nb][kk][lane] = X[k0 + kk][s0 + 8 nb + lane] of the group's input xg for kk0 <= kk <
 * kk1: the input under tap k0 + kk of that output position, x_zp in the padding, 0 past k
 * and past the last position (gathered planes: the last position's inputs, see
 * gather_taps). */
void dnn64__rsp_pack_inputs(int8_t *b0, const job_shape *s, const dnn64_conv_geom *g,
                            const int8_t *xg, int32_t x_zp, int32_t k, int32_t k0, int32_t s0,
                            int32_t kk0, int32_t kk1)
{
    const int32_t kc = s->kgroups * LANES, cols = s->blocks * LANES;
    const int32_t positions = g->h_out * g->w_out, in_plane = g->h_in * g->w_in;
    const int32_t valid = positions - s0 < cols ? positions - s0 : cols;
    const int32_t block_stride = kc * LANES, ksize = g->k_h * g->k_w;
    const int plain = plain_1x1(g);
    const int8_t zp = (int8_t)x_zp, zero = 0;
    const int gather = dnn64__rsp_gathers_planes(g);
    col_run runs[COLS_MAX];
    const int32_t run_count = plain || gather ? 0 : col_runs(runs, g, s0, valid);
    int32_t kk, ic = (k0 + kk0) / ksize, ky = ((k0 + kk0) % ksize) / g->k_w,
                kx = (k0 + kk0) % g->k_w;
    if (gather) /* the taps below k; zeros after them below */
        gather_taps(b0 + kk0 * LANES, kk1 - kk0, block_stride, g, xg, zp, k, k0 + kk0, s0,
                    valid, cols);
    for (kk = kk0; kk < kk1; ++kk) {
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
int dnn64__rsp_gathers_rows(const dnn64_conv_geom *g, const int8_t *xg)
{
    const int32_t plane = g->h_in * g->w_in;
    return g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
           g->pad_top == 0 && g->pad_left == 0 && g->h_out == g->h_in && g->w_out == g->w_in &&
           plane % 8 == 0 && plane >= COLS_MAX && ((uintptr_t)xg & 7u) == 0;
}

/* Row r's outputs of the last job: its int8 from Y (the RSP's output stage), or from V
 * (2 acc, in S) through the CPU's own. */
void dnn64__rsp_finish_row(const job_shape *s, int32_t r, int on_rsp, int8_t *y_row,
                           int32_t valid, int32_t mult, int32_t shift, const dnn64_q8_out *q)
{
    int32_t col;
    if (on_rsp) {
        const int8_t *src = (const int8_t *)dnn64__rsp_result + s->y + r * s->blocks * LANES;
        if (q->lut)
            for (col = 0; col < valid; ++col)
                y_row[col] = q->lut[src[col] + 128];
        else
            for (col = 0; col < valid; ++col)
                y_row[col] = src[col];
        return;
    }
    for (col = 0; col < valid; ++col) {
        const uint8_t *v = dnn64__rsp_result + s->s +
                           (uint32_t)((r * s->blocks + col / LANES) * STATE_BYTES +
                                      (col % LANES) * 2);
        const uint32_t lo = ((uint32_t)v[0] << 8) | v[1];
        const uint32_t hi = ((uint32_t)v[16] << 8) | v[17];
        const int32_t acc = (int32_t)((hi << 16) | lo) / 2; /* V is even */
        y_row[col] = dnn64__out_s8(acc, mult, shift, q);
    }
}
