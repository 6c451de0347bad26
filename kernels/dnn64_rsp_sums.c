/* int8 sums of planes on the RSP (dnn64_rsp.h): sums_s8.rsp, which fetches the planes by
 * SP DMA itself, for GlobalAveragePool. The CPU writes the D-cache back over the planes,
 * starts the RSP on up to PLANES planes at a time and, while the RSP sums the next ones,
 * reads each plane's 256 S (big-endian, exact: see the microcode), divides and clamps. */
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

void dnn64_rsp_global_avgpool_s8(int32_t planes, int32_t hw, int32_t act_min,
                                 int32_t act_max, const int8_t *x, int8_t *y)
{
    int32_t p0, buf = 0;
    if (!(dnn64_rsp_available && dnn64_rsp_start_sums && dnn64_rsp_available()) || hw < 1 ||
        hw > N_MAX || planes < 1) {
        dnn64_global_avgpool_s8(planes, hw, act_min, act_max, x, y);
        return;
    }
    dnn64_rsp_flush(x, (uint32_t)(planes * hw));
    start(x, hw, planes < PLANES ? planes : PLANES, sums[0]);
    for (p0 = 0; p0 < planes; p0 += PLANES, buf ^= 1) {
        const int32_t count = planes - p0 < PLANES ? planes - p0 : PLANES;
        int32_t p;
        dnn64_rsp_wait();
        if (p0 + PLANES < planes) /* the next planes are summed while the CPU divides */
            start(x + (p0 + PLANES) * hw, hw,
                  planes - p0 - PLANES < PLANES ? planes - p0 - PLANES : PLANES, sums[buf ^ 1]);
        for (p = 0; p < count; ++p) {
            const uint8_t *t = sums[buf] + 4 * p; /* 256 S, big-endian */
            const int32_t s = dnn64__s32(((uint32_t)t[0] << 24) | ((uint32_t)t[1] << 16) |
                                         ((uint32_t)t[2] << 8) | t[3]) >> 8;
            y[p0 + p] = (int8_t)dnn64__clamp(dnn64__div_round(s, hw), act_min, act_max);
        }
    }
}
