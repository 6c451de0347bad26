/* long_line_probe.c - lines longer than one IS-Viewer write and than
 * DNN64_LINE_MAX: dnn64_print splits writes, dnn64_line truncates. */
#include "dnn64_platform.h"

static char text[1301];

int main(void)
{
    uint32_t i;
    dnn64_line line;
    dnn64_platform_init();
    for (i = 0; i < 1300u; i++)
        text[i] = (char)('a' + i % 26u);
    dnn64_print(text);
    dnn64_line_begin(&line, "t");
    for (i = 0; i < 100u; i++)
        dnn64_line_u32(&line, i);
    dnn64_line_end(&line);
    dnn64_print_u64("truncated", (uint64_t)line.truncated);
    dnn64_print("");
    dnn64_print("end");
    dnn64_done();
    return 0;
}
