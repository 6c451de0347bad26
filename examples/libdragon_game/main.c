/* main.c - a libdragon game skeleton that runs a dnn64build library (digits_lib.h).
 *
 * Each frame it classifies one 8x8 digit image and logs the class with debugf. The model
 * runs on a static arena the game owns; the weights are the DragonFS file the library's
 * make fragment adds to the game's filesystem. */
#include <libdragon.h>
#include <stdint.h>

#include "digits_lib.h"

/* The library's memory: a compile-time size, aligned as the header asks. */
static uint8_t arena[DIGITS_LIB_ARENA_BYTES] __attribute__((aligned(DIGITS_LIB_ARENA_ALIGN)));

/* A stand-in for the game's own input: a vertical bar, which reads as a 1. */
static void draw_digit(float *pixels, uint32_t count)
{
    uint32_t i;
    for (i = 0; i < count; i++)
        pixels[i] = (i % 8 == 3 || i % 8 == 4) ? 16.0f : 0.0f;
}

/* The index of the largest of `count` logits. */
static uint32_t argmax(const float *logits, uint32_t count)
{
    uint32_t best = 0, i;
    for (i = 1; i < count; i++)
        if (logits[i] > logits[best])
            best = i;
    return best;
}

int main(void)
{
    debug_init_isviewer();
    if (dfs_init(DFS_DEFAULT_LOCATION) != DFS_ESUCCESS) {
        debugf("no DragonFS image\n");
        return 1;
    }
    if (digits_lib_init(arena, sizeof arena) != DIGITS_LIB_OK) {
        debugf("digits_lib: %s\n", digits_lib_error());
        return 1;
    }
    for (;;) {
        float *pixels = digits_lib_digits_input(0);
        const float *logits;
        draw_digit(pixels, DIGITS_LIB_DIGITS_IN0_BYTES / sizeof(float));
        if (digits_lib_digits_run() != DIGITS_LIB_OK) {
            debugf("digits_lib: %s\n", digits_lib_error());
            return 1;
        }
        logits = digits_lib_digits_output(0);
        debugf("digit %lu\n", (unsigned long)argmax(logits, DIGITS_LIB_DIGITS_OUT0_BYTES
                                                          / sizeof(float)));
    }
}
