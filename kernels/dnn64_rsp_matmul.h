/* dnn64_rsp_matmul.h - matmul_s8.rsp's jobs, shared by the kernels that run them (not
 * part of the kernel API): the streamed Conv (dnn64_rsp_conv.c), the Conv with its
 * inputs resident in DMEM (dnn64_rsp_resident.c) and the Gemm of one row
 * (dnn64_rsp_gemv.c). dnn64_rsp_matmul.c packs and reads them.
 *
 * A job (DMEM layout in matmul_s8.rsp) covers `rows` channels x `blocks` * 8 columns x
 * 8 * kgroups taps: a header, A (the rows' weights), P (a row's constants), B (the
 * inputs), S (a row's 32-bit state V = 2 acc, carried between jobs along k) and Y (the
 * int8 outputs of the RSP's output stage). */
#ifndef DNN64_RSP_MATMUL_H
#define DNN64_RSP_MATMUL_H

#include <stdint.h>

#include "dnn64_kernels.h"
#include "dnn64_rsp.h"
#include "platform/dnn64_platform.h"

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
#define FLAG_FIRST 1u
#define FLAG_LAST 2u

typedef struct {
    int32_t rows, blocks, kgroups;         /* this job's shape */
    uint32_t a, b, p, s, y;                /* DMEM offsets (16-byte aligned) */
    uint32_t b_block_stride, b_k_stride;   /* B layout: packed or input rows */
    uint32_t b_row_stride;                 /* 0, or each row's own B (one group a row) */
} job_shape;

/* Two RDRAM images of a job (one packed while the RSP runs the other), one result. */
extern uint8_t dnn64__rsp_images[2][DNN64_RSP_DMEM_BYTES];
extern uint8_t dnn64__rsp_result[DNN64_RSP_DMEM_BYTES];

static inline uint32_t dnn64__rsp_align16(uint32_t v)
{
    return (v + 15u) & ~15u;
}

/* How many rows of `per_row` bytes fit in `room` bytes of DMEM, at most `rows_wanted`
 * and ROWS_MAX (0 when none fits). */
int32_t dnn64__rsp_rows_that_fit(int32_t room, int32_t per_row, int32_t rows_wanted);

/* A job of `rows` x `blocks` x `kgroups`, or rows 0 if none fits. `state`: S holds V
 * between jobs (several jobs along k, or channels whose output stage the CPU runs).
 * `own_b`: every row has its own B (one group a row). */
job_shape dnn64__rsp_shape_of(int32_t rows_wanted, int32_t blocks, int32_t kgroups, int state,
                              int own_b);

/* The header of a job with `kgroups` k groups (its last along k may have fewer);
 * `rows_layout`: B is input rows moved by SP DMA (b_block_stride, b_k_stride). */
void dnn64__rsp_put_header(uint8_t *job, const job_shape *s, int32_t kgroups, uint32_t flags,
                           int rows_layout, const dnn64_q8_out *q);

/* B[nb][kk][lane] = X[k0 + kk][s0 + 8 nb + lane] of the group's input xg for kk0 <= kk <
 * kk1 (of the im2col block of a Conv's taps [k0, k0 + 8 kgroups) and columns [s0, s0 + 8
 * blocks): all of it for kk0 = 0, kk1 = 8 kgroups, or a part, as the RSP runs jobs). */
void dnn64__rsp_pack_inputs(int8_t *b0, const job_shape *s, const dnn64_conv_geom *g,
                            const int8_t *xg, int32_t x_zp, int32_t k, int32_t k0, int32_t s0,
                            int32_t kk0, int32_t kk1);

/* Whether dnn64__rsp_pack_inputs gathers a Conv's taps from each input channel copied
 * with its padding (planes narrower than 16 outputs, when they fit) rather than copying
 * runs of input rows. */
int dnn64__rsp_gathers_planes(const dnn64_conv_geom *g);

/* Whether a Conv's B is its input rows as they are (a 1x1 Conv with stride 1 and no
 * padding on 8-byte aligned planes of a multiple of 8 bytes, at least COLS_MAX). */
int dnn64__rsp_gathers_rows(const dnn64_conv_geom *g, const int8_t *xg);

/* Row r's `valid` outputs of the job in dnn64__rsp_result into y_row: from Y (on_rsp:
 * the RSP's output stage) or from V through the CPU's. */
void dnn64__rsp_finish_row(const job_shape *s, int32_t r, int on_rsp, int8_t *y_row,
                           int32_t valid, int32_t mult, int32_t shift, const dnn64_q8_out *q);

/* dnn64_rsp_conv_s8's contract (its checks passed) through jobs whose inputs stay in
 * DMEM for many rows (dnn64_rsp_resident.c): 1 when it ran the call, 0 (nothing done)
 * when the Conv does not take that path (a tile of few channels, depthwise, ...). */
int dnn64__rsp_resident_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                           const int8_t *w_tile, const int32_t *bias_tile,
                           const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                           int32_t oc_count, const dnn64_q8_out *q, int8_t *y);

#endif /* DNN64_RSP_MATMUL_H */
