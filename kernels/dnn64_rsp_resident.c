/* int8 Conv through matmul_s8.rsp with its inputs resident in DMEM (the resident path
 * of dnn64_rsp_conv_s8, dnn64_rsp_conv.c; the jobs in dnn64_rsp_matmul.h).
 *
 * A packed block of inputs (B: some columns x some taps) is
 * the same for every output channel of a group, so it goes to DMEM once and serves every
 * group of rows of a batch (up to RECORDS_BYTES of their per-row state) in turn: the CPU
 * packs each input byte once per batch rather than once per group of 8 or so rows, which
 * was most of a 3x3 layer's time. Each row group's job brings its weights (SP DMA from
 * the tile), its P rows and its V (S, saved in `records` between the jobs along k) and
 * leaves B in place. Jobs are double-buffered: DMEM holds two headers (at 0 and
 * DNN64_RSP_HEADER_B), B, then two slots of A, P, S, Y; while the RSP runs the job of one
 * slot, the CPU reads the last job's results out of the other and moves the next job in
 * (dnn64_rsp_*_beside), so the RSP waits for the CPU only where B changes. */
#include "dnn64_internal.h"
#include "dnn64_rsp_internal.h"
#include "dnn64_rsp_matmul.h"

/* Weak, as in dnn64_rsp_conv.c: only dnn64_rsp_conv_s8 calls in here, when the platform
 * runs RSP jobs. */
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_start_at
#pragma weak dnn64_rsp_write_beside
#pragma weak dnn64_rsp_write_rows_beside
#pragma weak dnn64_rsp_read_beside
#pragma weak dnn64_rsp_flush

#define RECORDS_BYTES 16384
/* CPU cycles a job costs besides the RSP's, in the shape's cost (CPU cycles per RSP cycle:
 * 93.75 / 62.5 MHz, as 3 / 2): its transfers, start, wait and copying out take about
 * RESIDENT_JOB_CYCLES (cen64), which decide where the jobs of a step share its packing;
 * where a step's first job packs it all (gathered planes), RESIDENT_GATHER_JOB_CYCLES
 * chose the faster shapes of ResNet-18's 14x14 and 7x7 layers (7 x 8 x 128 over 4 x 16 x
 * 128, 7% on 14x14x256), RESIDENT_JOB_CYCLES those of its 56x56 layers (6 x 24 x 64
 * over 4 x 16 x 128, 13% on 56x56x64). */
#define RESIDENT_JOB_CYCLES 3000
#define RESIDENT_GATHER_JOB_CYCLES 600
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
static uint16_t DNN64_ALIGNED(header_images[2][HEADER_BYTES / 2]); /* big-endian words */

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
    const int32_t rows = dnn64__rsp_rows_that_fit(room, per_row, rows_wanted);
    s.rows = rows;
    s.blocks = blocks;
    s.kgroups = kgroups;
    s.b = B_AT;
    s.a = (uint32_t)a;
    s.p = dnn64__rsp_align16(s.a + (uint32_t)(rows * kgroups * 8));
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
        slot ? dnn64__rsp_align16(s0->y + (uint32_t)(s0->rows * s0->blocks * LANES)) - s0->a : 0u;
    s.a += shift;
    s.p += shift;
    s.s += shift;
    s.y += shift;
    return s;
}

/* The shape (k groups of 16 or 8, 1 to 4 column blocks) whose jobs cost the least in
 * all: per step (one B), the longer of the CPU packing the next B and the RSP running
 * the step's jobs, and the CPU's cycles a job. With few rows (a small tile of
 * weights) packing decides, and wide blocks share its cost per tap. */
static job_shape resident_shape(int32_t rows_wanted, int32_t positions, int32_t k,
                                int cpu_stage, int gathered)
{
    const float job_cycles = (float)(gathered ? RESIDENT_GATHER_JOB_CYCLES : RESIDENT_JOB_CYCLES);
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
                   ((rsp > pack ? rsp : pack) + groups * job_cycles);
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
    return ocpg >= LANES && oc_count >= RESIDENT_MIN_ROWS && !dnn64__rsp_gathers_rows(g, x) &&
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

/* Job j of a batch: its row group, its step (one B), that step's k job and first
 * column (counted along as j grows: no divisions a job). */
typedef struct {
    int32_t j, grp, step, kj, s0;
} job_at;

static job_at next_job(const batch_jobs *b, job_at at)
{
    ++at.j;
    if (++at.grp == b->groups) {
        at.grp = 0;
        ++at.step;
        if (++at.kj == b->k_jobs) {
            at.kj = 0;
            at.s0 += b->cols;
        }
    }
    return at;
}

static int32_t job_kgroups(const batch_jobs *b, int32_t kj)
{
    const int32_t left = (b->k - kj * b->kc + LANES - 1) / LANES;
    return left < b->slot[0].kgroups ? left : b->slot[0].kgroups;
}

static int32_t job_rows(const batch_jobs *b, int32_t grp)
{
    const int32_t left = b->batch - grp * b->rows;
    return left < b->rows ? left : b->rows;
}

/* The job's header, its slot's (header_images, written once a batch) with the words a
 * job changes: rows, k groups, flags and B's block stride (words 0, 2, 3, 6; big-endian, as the
 * CPU's own). */
static void put_job_header(const batch_jobs *b, job_at at, int32_t rows, int32_t kgroups)
{
    uint16_t *h = header_images[at.j & 1];
    h[0] = (uint16_t)rows;
    h[2] = (uint16_t)kgroups;
    h[3] = (uint16_t)((at.kj == 0 ? FLAG_FIRST : 0u) | (at.kj == b->k_jobs - 1 ? FLAG_LAST : 0u));
    h[6] = (uint16_t)(kgroups * 64);
}

/* Job at's header, weights, P and S (the RSP may be running the job of the other slot). */
static void load_job(const batch_jobs *b, job_at at)
{
    const uint8_t *rec = records + at.grp * b->rec_bytes;
    const job_shape *sj = &b->slot[at.j & 1];
    const int32_t rows = job_rows(b, at.grp), kgroups = job_kgroups(b, at.kj);
    put_job_header(b, at, rows, kgroups);
    dnn64_rsp_flush(header_images[at.j & 1], HEADER_BYTES);
    dnn64_rsp_write_beside((uint32_t)(at.j & 1) * DNN64_RSP_HEADER_B, header_images[at.j & 1],
                           HEADER_BYTES);
    dnn64_rsp_write_rows_beside(sj->a, b->w_rows + at.grp * b->rows * b->w_stride + at.kj * b->kc,
                                (uint32_t)(kgroups * LANES), (uint32_t)rows,
                                (uint32_t)b->w_stride);
    /* P, and S when this job continues the sums of the previous step */
    dnn64_rsp_write_beside(sj->p, rec, at.kj == 0 ? sj->s - sj->p : (uint32_t)b->rec_bytes);
}

/* After job at: its S back to its record, or (the last step along k) its outputs to
 * dnn64__rsp_result; returns 1 when there are outputs to copy out. */
static int collect_job(const batch_jobs *b, job_at at)
{
    const job_shape *sj = &b->slot[at.j & 1];
    if (at.kj < b->k_jobs - 1) {
        dnn64_rsp_read_beside(records + at.grp * b->rec_bytes + (sj->s - sj->p), sj->s,
                              sj->y - sj->s);
        return 0;
    }
    if (!b->all_on_rsp)
        dnn64_rsp_read_beside(dnn64__rsp_result + sj->s, sj->s, sj->y - sj->s);
    dnn64_rsp_read_beside(dnn64__rsp_result + sj->y, sj->y,
                          (uint32_t)(job_rows(b, at.grp) * b->cols));
    return 1;
}

/* Job at's int8 outputs from dnn64__rsp_result into y. */
static void copy_out(const batch_jobs *b, job_at at)
{
    const int32_t t = at.grp * b->rows, rows = job_rows(b, at.grp);
    const int32_t valid = b->positions - at.s0 < b->cols ? b->positions - at.s0 : b->cols;
    int32_t r;
    for (r = 0; r < rows; ++r)
        dnn64__rsp_finish_row(&b->slot[at.j & 1], r,
                              dnn64__rsp_requant_on_rsp(b->mult[t + r], b->shift[t + r]),
                              b->y + (t + r) * b->positions + at.s0, valid, b->mult[t + r],
                              b->shift[t + r], b->q);
}

static uint32_t start_pc(int32_t j)
{
    return (j & 1) ? DNN64_RSP_PC_HEADER_B : 0u;
}

/* The jobs of one batch. While job j runs: job j - 1's results out, job j + 1 in (same
 * B), and a share of the next step's B packed (every job of a step packs about 1 / groups
 * of it, so that the RSP runs the step's jobs while the CPU packs). */
static void run_batch(const batch_jobs *b)
{
    const int32_t steps = (b->positions + b->cols - 1) / b->cols * b->k_jobs;
    const int32_t jobs = steps * b->groups;
    job_at at = {0, 0, 0, 0, 0}, prev = at, out = at;
    int uncollected = 0, pending = 0; /* prev's results not read yet; out's to copy out */
    /* taps of the next B a job packs: an even share, or all of it in a step's first job
     * when the packing gathers padded planes (shares measured slower in cen64: each
     * pads its planes anew, and the transfers between them evict the planes from the
     * D-cache) */
    const int32_t share = dnn64__rsp_gathers_planes(b->g) ? b->kc
                                                          : (b->kc + b->groups - 1) / b->groups;
    int slot;
    job_shape sb = b->slot[0];
    for (slot = 0; slot < 2; ++slot) /* what no job changes */
        dnn64__rsp_put_header((uint8_t *)header_images[slot], &b->slot[slot], b->slot[0].kgroups,
                              0u, 0, b->q);
    sb.kgroups = job_kgroups(b, 0);
    dnn64__rsp_pack_inputs((int8_t *)dnn64__rsp_images[0], &sb, b->g, b->xg, b->x_zp, b->k, 0,
                           0, 0, sb.kgroups * LANES);
    dnn64_rsp_write(B_AT, dnn64__rsp_images[0], (uint32_t)(sb.kgroups * 64 * sb.blocks));
    load_job(b, at);
    dnn64_rsp_start_at(start_pc(0));
    for (;;) {
        const job_at next = next_job(b, at);
        const int step_ends = next.step != at.step || next.j == jobs;
        if (uncollected && collect_job(b, prev)) {
            pending = 1;
            out = prev;
        }
        if (pending)
            copy_out(b, out);
        pending = 0;
        if (!step_ends)
            load_job(b, next);
        if (at.step + 1 < steps) {
            /* the next step's B: k job and columns of the job after this step's last */
            const int32_t kj = at.kj + 1 == b->k_jobs ? 0 : at.kj + 1;
            const int32_t s0 = kj == 0 ? at.s0 + b->cols : at.s0;
            const int32_t kk0 = at.grp * share;
            int32_t kk1 = kk0 + share;
            sb.kgroups = job_kgroups(b, kj);
            if (kk1 > sb.kgroups * LANES)
                kk1 = sb.kgroups * LANES;
            if (kk0 < kk1)
                dnn64__rsp_pack_inputs((int8_t *)dnn64__rsp_images[(at.step + 1) & 1], &sb,
                                       b->g, b->xg, b->x_zp, b->k, kj * b->kc, s0, kk0, kk1);
        }
        dnn64_rsp_wait();
        uncollected = !step_ends;
        if (step_ends) {
            /* the last job, or B changes: the RSP stays idle until the next job is in */
            if (collect_job(b, at)) {
                pending = 1;
                out = at;
            }
            if (next.j == jobs)
                break;
            sb.kgroups = job_kgroups(b, next.kj);
            dnn64_rsp_write(B_AT, dnn64__rsp_images[next.step & 1],
                            (uint32_t)(sb.kgroups * 64 * sb.blocks));
            load_job(b, next);
        }
        dnn64_rsp_start_at(start_pc(next.j));
        prev = at;
        at = next;
    }
    if (pending)
        copy_out(b, out);
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
        b.all_on_rsp = dnn64__rsp_requant_on_rsp(mult_tile[t0 + t], shift_tile[t0 + t]);
    b.slot[0] = resident_shape(count, b.positions, b.k, !b.all_on_rsp,
                               dnn64__rsp_gathers_planes(g));
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
            dnn64__rsp_put_params(
                records + (r / b.rows) * b.rec_bytes + (r % b.rows) * PARAM_BYTES,
                (bias_tile ? bias_tile[tr] : 0) - x_zero_point * sum, mult_tile[tr],
                shift_tile[tr], dnn64__rsp_requant_on_rsp(mult_tile[tr], shift_tile[tr]));
        }
        dnn64_rsp_flush(records, (uint32_t)(b.groups * b.rec_bytes));
        run_batch(&b);
    }
}

/* The resident path over the tile (each image, each conv group's share of it): 1 when it
 * ran the call, 0 (nothing done) when the Conv does not take it (takes_resident). */
int dnn64__rsp_resident_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                           const int8_t *w_tile, const int32_t *bias_tile,
                           const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                           int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    const int32_t ocpg = g->c_out / g->group;
    const int32_t k = g->c_in / g->group * g->k_h * g->k_w;
    const int dma = weights_dmaable(w_tile, k);
    const int32_t w_stride = dma ? k : (k + 7) & ~7;
    int32_t n, t0, kk;
    if (!takes_resident(g, x, w_tile, k, oc_count))
        return 0;
    if (!dma) /* rows padded to 8 bytes, zeros past k (they meet zero inputs too) */
        for (t0 = 0; t0 < oc_count; ++t0)
            for (kk = 0; kk < w_stride; ++kk)
                wpad[t0 * w_stride + kk] = kk < k ? w_tile[t0 * k + kk] : 0;
    /* the jobs move weight rows by SP DMA as RDRAM holds them */
    dnn64_rsp_flush(dma ? w_tile : (const int8_t *)wpad, (uint32_t)(oc_count * w_stride));
    for (n = 0; n < g->n; ++n)
        for (t0 = 0; t0 < oc_count;) {
            const int32_t left = ocpg - (oc_begin + t0) % ocpg;
            const int32_t count = left < oc_count - t0 ? left : oc_count - t0;
            resident_channels(g, n, x, x_zero_point, (dma ? w_tile : wpad) + t0 * w_stride,
                              w_stride, bias_tile, mult_tile, shift_tile, oc_begin, t0, count,
                              q, y);
            t0 += count;
        }
    return 1;
}
