/* int8 sums of planes on the RSP (dnn64_rsp.h): sums_s8.rsp, which fetches the planes by
 * SP DMA itself, for GlobalAveragePool and ReduceMean over trailing axes. The CPU writes
 * the D-cache back over the planes, starts the RSP on up to PLANES planes at a time and,
 * while the RSP sums the next ones, reads each plane's 256 S (big-endian, exact: see the
 * microcode) and runs the node's output stage on it. */
#include "dnn64_internal.h"
#include "dnn64_kernels.h"
#include "dnn64_rsp.h"
#include "dnn64_rsp_internal.h"
#include "platform/dnn64_platform.h"

#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_start_sums
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_flush
#pragma weak dnn64_rsp_dram_address

#define N_MAX 65535    /* bytes a plane (the microcode's bound) */
#define PLANES 128     /* planes a start */
#define HEADER_BYTES 32

static uint8_t DNN64_ALIGNED(sums[2][PLANES * 4]);
static uint16_t DNN64_ALIGNED(header[HEADER_BYTES / 2]);

/* Starts the RSP on `planes` planes of n bytes from x; their 256 S into out. */
static void start(const int8_t *x, int32_t n, int32_t planes, uint8_t *out)
{
    int32_t i;
    dnn64__rsp_put_u32(header, dnn64_rsp_dram_address(x));
    dnn64__rsp_put_u32(header + 2, (uint32_t)n);
    dnn64__rsp_put_u32(header + 4, (uint32_t)planes);
    dnn64__rsp_put_u32(header + 6, dnn64_rsp_dram_address(out));
    for (i = 0; i < 8; ++i)
        header[8 + i] = (uint16_t)i;
    dnn64_rsp_flush(out, (uint32_t)(planes * 4 + 7) & ~7u);
    dnn64_rsp_write(0, header, HEADER_BYTES);
    dnn64_rsp_start_sums();
}

/* A node's output stage of a plane's sum: GlobalAveragePool's (mean: 0) or
 * ReduceMean's (mean: 1), as dnn64_global_avgpool_s8 and dnn64_reduce_mean_s8 run it. */
typedef struct {
    int32_t n, mean, act_min, act_max, x_zero_point, mult, shift, out_zero_point;
} out_stage;

static int8_t out_s8(const out_stage *o, int32_t sum)
{
    return o->mean ? dnn64__reduce_mean_out_s8(sum, o->n, o->x_zero_point, o->mult, o->shift,
                                               o->out_zero_point)
                   : dnn64__gap_out_s8(sum, o->n, o->act_min, o->act_max);
}

/* y[p] = the output stage of plane p's sum, the sums on the RSP when it takes them. */
static void plane_outputs(const int8_t *x, int32_t planes, const out_stage *o, int8_t *y)
{
    const int32_t n = o->n;
    int32_t p0, buf = 0;
    if (!(dnn64_rsp_available && dnn64_rsp_start_sums && dnn64_rsp_available()) || n < 1 ||
        n > N_MAX || planes < 1) {
        for (p0 = 0; p0 < planes; ++p0)
            y[p0] = out_s8(o, dnn64__sum_s8(x + p0 * n, n));
        return;
    }
    dnn64_rsp_flush(x, (uint32_t)(planes * n));
    start(x, n, planes < PLANES ? planes : PLANES, sums[0]);
    for (p0 = 0; p0 < planes; p0 += PLANES, buf ^= 1) {
        const int32_t count = planes - p0 < PLANES ? planes - p0 : PLANES;
        int32_t p;
        dnn64_rsp_wait();
        if (p0 + PLANES < planes) /* the next planes are summed while the CPU finishes */
            start(x + (p0 + PLANES) * n, n,
                  planes - p0 - PLANES < PLANES ? planes - p0 - PLANES : PLANES, sums[buf ^ 1]);
        for (p = 0; p < count; ++p) {
            const uint8_t *t = sums[buf] + 4 * p; /* 256 S, big-endian */
            y[p0 + p] = out_s8(o, dnn64__s32(((uint32_t)t[0] << 24) | ((uint32_t)t[1] << 16) |
                                             ((uint32_t)t[2] << 8) | t[3]) >> 8);
        }
    }
}

void dnn64_rsp_global_avgpool_s8(int32_t planes, int32_t hw, int32_t act_min,
                                 int32_t act_max, const int8_t *x, int8_t *y)
{
    out_stage o = {0};
    o.n = hw, o.act_min = act_min, o.act_max = act_max;
    plane_outputs(x, planes, &o, y);
}

void dnn64_rsp_reduce_mean_s8(int32_t planes, int32_t n, int32_t x_zero_point, int32_t mult,
                              int32_t shift, int32_t out_zero_point, const int8_t *x, int8_t *y)
{
    out_stage o = {0};
    o.n = n, o.mean = 1, o.x_zero_point = x_zero_point, o.mult = mult, o.shift = shift;
    o.out_zero_point = out_zero_point;
    plane_outputs(x, planes, &o, y);
}
