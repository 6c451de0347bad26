/* library_probe.c - a bare N64 program of the test suite's own that links the n64_library
 * //models:testlib (models a: fp32, b: int8 in and out) through its public header only,
 * with dnn64's bare platform layer as its own runtime (boot, output, libc).
 *
 * It checks the API's refusals, then runs each model on the inputs in
 * library_probe_inputs.h (written by the test) and prints the outputs in the line
 * protocol ("OUT <symbol> <k> ...", dnn64build.codegen.protocol), b's output quantisation
 * as float bits, and "CHECK <name> <0|1>" for each refusal. */
#include "dnn64_platform.h"
#include "probe_check.h"
#include "testlib.h"

#include "library_probe_inputs.h"

static uint8_t DNN64_ALIGNED(arena[TESTLIB_ARENA_BYTES + 16]);

static void copy(void *dst, const void *src, uint32_t bytes)
{
    uint32_t i;
    for (i = 0; i < bytes; i++)
        ((uint8_t *)dst)[i] = ((const uint8_t *)src)[i];
}

int main(void)
{
    dnn64_line line;

    dnn64_platform_init();
    check("input_before_init", testlib_a_input(0) == 0);
    check("run_before_init", testlib_a_run() == TESTLIB_E_NOT_INITIALISED);
    check("arena_too_small", testlib_init(arena, TESTLIB_ARENA_BYTES - 1) == TESTLIB_E_ARENA);
    check("arena_misaligned", testlib_init(arena + 8, TESTLIB_ARENA_BYTES) == TESTLIB_E_ARENA);
    check("init", testlib_init(arena, TESTLIB_ARENA_BYTES) == TESTLIB_OK);
    check("error_empty", testlib_error()[0] == '\0');
    check("input_out_of_range", testlib_a_input(TESTLIB_A_NUM_INPUTS) == 0);

    copy(testlib_a_input(0), A_IN0, TESTLIB_A_IN0_BYTES);
    check("run_a", testlib_a_run() == TESTLIB_OK);
    dnn64_print_f32_hex("OUT m_models_a 0", testlib_a_output(0), TESTLIB_A_OUT0_BYTES / 4u);

    copy(testlib_b_input(0), B_IN0, TESTLIB_B_IN0_BYTES);
    check("run_b", testlib_b_run() == TESTLIB_OK);
    dnn64_print_i8_hex("OUT m_models_b 0", testlib_b_output(0), TESTLIB_B_OUT0_BYTES);

    dnn64_line_begin(&line, "QUANT");
    dnn64_line_f32(&line, TESTLIB_B_IN0_SCALE);
    dnn64_line_i32(&line, TESTLIB_B_IN0_ZERO_POINT);
    dnn64_line_f32(&line, TESTLIB_B_OUT0_SCALE);
    dnn64_line_i32(&line, TESTLIB_B_OUT0_ZERO_POINT);
    dnn64_line_end(&line);
    dnn64_done();
    return 0;
}
