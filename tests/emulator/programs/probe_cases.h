/* probe_cases.h - the "cases" asset reader shared by the RSP test probes: the asset is
 * read whole into data[] and parsed as big-endian int32 words and 4-byte padded int8 runs.
 * Define DATA_MAX (bytes) before including; include after dnn64_platform.h. */
#ifndef PROBE_CASES_H
#define PROBE_CASES_H

static uint8_t DNN64_ALIGNED(data[DATA_MAX]);
static uint32_t pos;

static int32_t word(void)
{
    const uint8_t *p = data + pos;
    pos += 4u;
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

static const int8_t *bytes(int32_t count)
{
    const int8_t *p = (const int8_t *)data + pos;
    pos += ((uint32_t)count + 3u) & ~3u;
    return p;
}

/* Reads the "cases" asset into data[] and returns its case count (the first word);
 * fails naming `too_big` when the asset does not fit. */
static int32_t read_cases(const char *too_big)
{
    const dnn64_asset cases = dnn64_asset_get("cases");
    if (cases.size > DATA_MAX)
        dnn64_fail(too_big);
    dnn64_asset_read(data, cases.offset, cases.size);
    pos = 0;
    return word();
}

#endif
