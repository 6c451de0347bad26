/* spin_probe.c - never reaches dnn64_done: the runner's time limit must fire. */
#include "dnn64_platform.h"

int main(void)
{
    volatile uint32_t n = 0;
    dnn64_platform_init();
    dnn64_print("spinning");
    for (;;)
        n++;
    return 0;
}
