/* library_rows_probe.c - a host program of the test suite's own that links the
 * n64_library //models:rowlib (model cnn, planned with planner: {input: stream})
 * through its public header only. The input comes from the game's rows callback, which
 * serves it from IN0 (library_rows_probe_input.h, written by the test) and records the
 * rows it was asked for. Prints the output in the line protocol ("OUT <symbol> 0 ..."),
 * "CHECK <name> <0|1>" for each API check and "ROWS <rows served>". */
#include "dnn64_platform.h"
#include "probe_check.h"
#include "rowlib.h"

#include "library_rows_probe_input.h"

static uint8_t DNN64_ALIGNED(arena[ROWLIB_ARENA_BYTES]);

static uint32_t served, next_row, in_order = 1;

/* Rows [row0, row0 + rows) of every channel of IN0 (float, NCHW). */
static void read_rows(void *user, uint32_t input, uint32_t row0, uint32_t rows, uint8_t *dst,
                      uint32_t plane_bytes)
{
    const float *x = (const float *)user;
    uint32_t c, i;
    in_order &= input == 0 && row0 == next_row;
    next_row = row0 + rows;
    served += rows;
    for (c = 0; c < IN0_CHANNELS; c++)
        for (i = 0; i < rows * IN0_WIDTH; i++)
            ((float *)(dst + c * plane_bytes))[i] = x[(c * IN0_HEIGHT + row0) * IN0_WIDTH + i];
}

int main(void)
{
    dnn64_line line;

    check("init", rowlib_init(arena, ROWLIB_ARENA_BYTES) == ROWLIB_OK);
    check("streamed_input_has_no_pointer", rowlib_cnn_input(0) == 0);
    check("run_without_rows_fails", rowlib_cnn_run() == ROWLIB_E_RUN);
    rowlib_cnn_set_input_rows(read_rows, (void *)IN0);
    check("run", rowlib_cnn_run() == ROWLIB_OK);
    check("rows_in_order", in_order);
    dnn64_print_f32_hex("OUT m_models_cnn 0", rowlib_cnn_output(0), ROWLIB_CNN_OUT0_BYTES / 4u);
    dnn64_line_begin(&line, "ROWS");
    dnn64_line_i32(&line, (int32_t)served);
    dnn64_line_end(&line);
    dnn64_done();
    return 0;
}
