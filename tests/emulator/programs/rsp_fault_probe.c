/* rsp_fault_probe.c - RSP faults end the run with a clear DNN64-FAIL line
 * (tests/emulator/test_rsp_kernels.py). FAULT 1: a job larger than DMEM.
 * FAULT 2: a job whose loops run for billions of steps (an RSP that does not halt).
 * FAULT 3: an SP DMA from an address that is not a multiple of 8. */
#include "dnn64_platform.h"

static uint8_t DNN64_ALIGNED(job[DNN64_RSP_DMEM_BYTES + 64u]);
static uint8_t DNN64_ALIGNED(result[64]);

int main(void)
{
    uint32_t i;
    dnn64_platform_init();
    for (i = 0; i < 12u; i += 2u) {
        job[i] = 0xFF; /* rows, blocks, k groups and offsets all 0xFFxx */
        job[i + 1u] = 0xF0;
    }
    dnn64_print("start");
#if FAULT == 1
    dnn64_rsp_write(0, job, DNN64_RSP_DMEM_BYTES + 8u);
#elif FAULT == 3
    dnn64_rsp_write(0, job + 4, 64);
#else
    dnn64_rsp_write(0, job, 64);
    dnn64_rsp_start();
    dnn64_rsp_wait();
#endif
    dnn64_rsp_read(result, 0, 32);
    dnn64_print("not reached");
    return 0;
}
