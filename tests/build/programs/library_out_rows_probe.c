/* library_out_rows_probe.c - a host program of the test suite's own that links the
 * n64_library //models:outlib (model fcn, planned with planner: {output: stream})
 * through its public header only. The input is written at its arena pointer; the
 * output comes to the game's rows callback, which copies each band of rows into a
 * whole-output array of its own (library_out_rows_probe_input.h, written by the test,
 * gives the shapes) and records the rows it was given. Prints that output in the line
 * protocol ("OUT <symbol> 0 ..."), "CHECK <name> <0|1>" for each API check and
 * "ROWS <rows handed out>". */
#include "dnn64_platform.h"
#include "outlib.h"
#include "probe_check.h"

#include "library_out_rows_probe_input.h"

static uint8_t DNN64_ALIGNED(arena[OUTLIB_ARENA_BYTES]);
static float y[OUT0_CHANNELS * OUT0_HEIGHT * OUT0_WIDTH];

static uint32_t handed, next_row, in_order = 1;

/* Rows [row0, row0 + rows) of every channel of OUT0 (float, NCHW) into `user`. */
static void write_rows(void *user, uint32_t output, uint32_t row0, uint32_t rows,
                       const uint8_t *src, uint32_t plane_bytes)
{
    float *out = (float *)user;
    uint32_t c, i;
    in_order &= output == 0 && row0 == next_row;
    next_row = row0 + rows;
    handed += rows;
    for (c = 0; c < OUT0_CHANNELS; c++)
        for (i = 0; i < rows * OUT0_WIDTH; i++)
            out[(c * OUT0_HEIGHT + row0) * OUT0_WIDTH + i] =
                ((const float *)(src + c * plane_bytes))[i];
}

int main(void)
{
    dnn64_line line;
    uint32_t i;

    check("init", outlib_init(arena, OUTLIB_ARENA_BYTES) == OUTLIB_OK);
    check("streamed_output_has_no_pointer", outlib_fcn_output(0) == 0);
    for (i = 0; i < OUTLIB_FCN_IN0_BYTES / 4u; i++)
        ((float *)outlib_fcn_input(0))[i] = IN0[i];
    check("run_without_rows_fails", outlib_fcn_run() == OUTLIB_E_RUN);
    outlib_fcn_set_output_rows(write_rows, y);
    check("run", outlib_fcn_run() == OUTLIB_OK);
    check("rows_in_order", in_order);
    dnn64_print_f32_hex("OUT m_models_fcn 0", y, OUTLIB_FCN_OUT0_BYTES / 4u);
    dnn64_line_begin(&line, "ROWS");
    dnn64_line_i32(&line, (int32_t)handed);
    dnn64_line_end(&line);
    dnn64_done();
    return 0;
}
