/* asset_probe.c - exercises the platform layer; tests/emulator/test_asset_probe.py
 * computes every line it prints independently from the same bytes. */
#include "dnn64_platform.h"

#define CHUNK 4096u

static uint8_t DNN64_ALIGNED(stage[CHUNK + 16u]);

static uint32_t fnv1a(uint32_t hash, const uint8_t *p, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        hash = (hash ^ p[i]) * 16777619u;
    return hash;
}

static void print_hash(const char *label, uint32_t hash)
{
    dnn64_line line;
    dnn64_line_begin(&line, label);
    dnn64_line_hex32(&line, hash);
    dnn64_line_end(&line);
}

int main(void)
{
    dnn64_asset blob, tail;
    uint32_t hash = 2166136261u, pos, i;
    float sum = 0.0f, dot = 0.0f;
    dnn64_line line;
    uint64_t t0, t1;

    dnn64_platform_init();
    t0 = dnn64_ticks();
    blob = dnn64_asset_get("blob");
    tail = dnn64_asset_get("tail");

    dnn64_line_begin(&line, "sizes");
    dnn64_line_u32(&line, blob.size);
    dnn64_line_u32(&line, tail.size);
    dnn64_line_end(&line);

    /* Aligned chunks: the direct DMA path. */
    for (pos = 0; pos < blob.size; pos += CHUNK) {
        uint32_t n = blob.size - pos < CHUNK ? blob.size - pos : CHUNK;
        dnn64_asset_read(stage, blob.offset + pos, n);
        hash = fnv1a(hash, stage, n);
        for (i = 0; i < n; i++) {
            float x = (float)(int8_t)stage[i] * 0.03125f;
            sum += x;
            dot += x * (float)((pos + i) % 7u) - 0.5f * x;
        }
    }
    print_hash("blob-fnv", hash);
    dnn64_line_begin(&line, "floats");
    dnn64_line_f32(&line, sum);
    dnn64_line_f32(&line, dot);
    dnn64_line_f32(&line, sum / 3.0f);
    dnn64_line_end(&line);

    /* Odd offset, odd length, odd destination: the bounce-buffer path. */
    dnn64_asset_read(stage + 1, tail.offset + 1u, tail.size - 1u);
    print_hash("tail-fnv", fnv1a(2166136261u, stage + 1, tail.size - 1u));

    dnn64_asset_read(stage, blob.offset, 40u);
    dnn64_print_i8_hex("i8", (const int8_t *)stage, 38u);
    {
        float DNN64_ALIGNED(values[10]);
        for (i = 0; i < 10u; i++)
            values[i] = (float)(int8_t)stage[i] / 7.0f;
        dnn64_print_f32_hex("f32", values, 10u);
    }

    dnn64_line_begin(&line, "ints");
    dnn64_line_i32(&line, -123456);
    dnn64_line_i32(&line, (int32_t)0x80000000u);
    dnn64_line_u32(&line, 4294967295u);
    dnn64_line_u64(&line, 18446744073709551615ull);
    dnn64_line_u64(&line, (uint64_t)blob.size * 1000000007ull / 3u);
    dnn64_line_end(&line);

    t1 = dnn64_ticks();
    dnn64_print_u64("ticks", t1 - t0);
    dnn64_done();
    return 0;
}
