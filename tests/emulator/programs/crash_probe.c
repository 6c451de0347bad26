/* crash_probe.c - a CPU exception (here a syscall, which mupen64plus's
 * recompiler does raise, unlike address errors) must be reported as
 * DNN64-FAIL by the bare exception vector. */
#include "dnn64_platform.h"

int main(void)
{
    dnn64_platform_init();
    dnn64_print("before");
    __asm__ volatile("syscall");
    dnn64_print("after");
    dnn64_done();
    return 0;
}
