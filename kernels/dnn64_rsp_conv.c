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
 * a multiple of 8 go there by SP DMA, unpacked.
 *
 * Tiles of many channels take the resident path instead (dnn64_rsp_resident.c), RGB
 * stems stem_s8.rsp (dnn64_rsp_stem.c); the jobs' layout and packing are in
 * dnn64_rsp_matmul.c. */
#include "dnn64_internal.h"
#include "dnn64_rsp_internal.h"
#include "dnn64_rsp_matmul.h"

/* The platform layer runs the jobs. Weak references: the portable kernels also link
 * without any platform layer (the kernel unit tests), and then run dnn64_conv_s8. */
#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_write_rows
#pragma weak dnn64_rsp_start
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_read

#define ROWS_KGROUPS_MAX 8 /* input rows in DMEM: 64 taps x 32 bytes */
/* |bias| below this and K <= DNN64_RSP_K_MAX keep |2 acc| < 2^30 (dnn64_rsp.h). */
#define BIAS_LIMIT (1 << 28)

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
    job_shape best = dnn64__rsp_shape_of(rows_wanted, widest < fit_all ? widest : fit_all,
                                         kg_all, state_all, own_b);
    int32_t kg;
    if (own_b) /* depthwise: the widest job (nothing is reused) */
        return best;
    for (kg = kg_all; kg >= 4 || kg == kg_all; kg = kg > 8 ? 8 : kg / 2) {
        const int32_t fit = (int32_t)(DNN64_RSP_DMEM_BYTES / 2u) / (kg * 64);
        const int state = cpu_stage || (k + kg * LANES - 1) / (kg * LANES) > 1;
        int32_t blocks = widest < fit ? widest : fit;
        for (; blocks >= 1; --blocks) {
            const job_shape s = dnn64__rsp_shape_of(rows_wanted, blocks, kg, state, own_b);
            if (s.rows > 0 && (best.rows == 0 || pack_cost(&s) < pack_cost(&best)))
                best = s;
        }
        if (kg < 8)
            break;
    }
    return best;
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
    dnn64__rsp_put_header(image, &sj, sj.kgroups,
                          (kj == 0 ? FLAG_FIRST : 0u) | (kj == rg->k_jobs - 1 ? FLAG_LAST : 0u),
                          rg->rows_layout, q);
    if (!rg->weights_dma && (rg->k_jobs > 1 || j == 0))
        pack_weights(image, &sj, rg->w_rows, rg->k, k0, sj.kgroups);
    if (!rg->rows_layout) {
        int32_t r;
        for (r = 0; r < (sj.b_row_stride ? sj.rows : 1); ++r) /* each row's group, or one */
            dnn64__rsp_pack_inputs((int8_t *)image + sj.b + (uint32_t)r * sj.b_row_stride,
                                   &sj, rg->g, rg->xg + r * rg->xg_row_stride, rg->x_zp,
                                   rg->k, k0, (j / rg->k_jobs) * rg->cols, 0,
                                   sj.kgroups * LANES);
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
                        (uint32_t)(kg * 64 * s->blocks) *
                            (s->b_row_stride ? (uint32_t)s->rows : 1u));
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
    if (dnn64__rsp_resident_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                               oc_begin, oc_count, q, y))
        return;
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
            rg.rows_layout = !own_b && dnn64__rsp_gathers_rows(g, rg.xg);
            /* weights by SP DMA straight from the tile when its rows are 8-byte aligned */
            rg.weights_dma = k % 8 == 0 && ((uintptr_t)rg.w_rows & 7u) == 0;
            for (t = 0; t < wanted && all_on_rsp; ++t)
                all_on_rsp = dnn64__rsp_requant_on_rsp(mult_tile[t0 + t], shift_tile[t0 + t]);
            if (rg.rows_layout) {
                /* input rows: taps 32 bytes apart (4 blocks), at most 64 taps (2 KiB) */
                kgroups = (k + LANES - 1) / LANES;
                if (kgroups > ROWS_KGROUPS_MAX)
                    kgroups = ROWS_KGROUPS_MAX;
                rg.s = dnn64__rsp_shape_of(
                    wanted, BLOCKS_MAX, kgroups,
                    (k + kgroups * LANES - 1) / (kgroups * LANES) > 1 || !all_on_rsp, 0);
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
                dnn64__rsp_put_params(
                    dnn64__rsp_images[0] + rg.s.p + (uint32_t)(r * PARAM_BYTES),
                    (bias_tile ? bias_tile[t0 + r] : 0) - x_zero_point * sum, mult_tile[t0 + r],
                    shift_tile[t0 + r],
                    dnn64__rsp_requant_on_rsp(mult_tile[t0 + r], shift_tile[t0 + r]));
            }
            prepare_job(&rg, 0, dnn64__rsp_images[0], q);
            /* While the RSP runs job j, the CPU prepares job j + 1 and writes out the
             * outputs of the last finished job. */
            for (j = 0; j <= jobs; ++j) {
                if (j < jobs) {
                    send_job(&rg, j, dnn64__rsp_images[j & 1]);
                    dnn64_rsp_start();
                    if (j + 1 < jobs)
                        prepare_job(&rg, j + 1, dnn64__rsp_images[(j + 1) & 1], q);
                }
                if (done >= 0) {
                    const int32_t s0 = (done / rg.k_jobs) * rg.cols;
                    const int32_t valid = positions - s0 < rg.cols ? positions - s0 : rg.cols;
                    for (r = 0; r < rg.s.rows; ++r)
                        dnn64__rsp_finish_row(
                            &rg.s, r,
                            dnn64__rsp_requant_on_rsp(mult_tile[t0 + r], shift_tile[t0 + r]),
                            y + c.y + r * positions + s0, valid, mult_tile[t0 + r],
                            shift_tile[t0 + r], q);
                    done = -1;
                }
                if (j < jobs) {
                    dnn64_rsp_wait();
                    if (j % rg.k_jobs == rg.k_jobs - 1) {
                        if (!all_on_rsp)
                            dnn64_rsp_read(dnn64__rsp_result + rg.s.s, rg.s.s,
                                           rg.s.y - rg.s.s);
                        dnn64_rsp_read(dnn64__rsp_result + rg.s.y, rg.s.y,
                                       (uint32_t)(rg.s.rows * rg.cols));
                        done = j;
                    }
                }
            }
            t0 += rg.s.rows;
        }
    }
}
