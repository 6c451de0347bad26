/* dnn64_assets.c - asset table lookup over dnn64_platform_read (portable, uncounted).
 * Table layout: dnn64_platform.h and docs/rom-format.md. */
#include "dnn64_platform.h"

#define TABLE_HEADER_SIZE 16u
#define TABLE_ENTRY_SIZE 48u
#define TABLE_NAME_SIZE 40u
#define TABLE_VERSION 1u

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int names_equal(const uint8_t *stored, const char *name)
{
    uint32_t i;
    for (i = 0; i < TABLE_NAME_SIZE; i++) {
        if ((char)stored[i] != name[i])
            return 0;
        if (name[i] == '\0')
            return 1;
    }
    return 0; /* name longer than any stored name */
}

int dnn64_asset_find(const char *name, dnn64_asset *out)
{
    static uint8_t DNN64_ALIGNED(buf[TABLE_ENTRY_SIZE]);
    uint32_t count, i, j;

    dnn64_platform_read(buf, 0, TABLE_HEADER_SIZE);
    if (buf[0] != 'D' || buf[1] != 'N' || buf[2] != '6' || buf[3] != '4'
        || be32(buf + 4) != TABLE_VERSION)
        dnn64_fail("asset area has no dnn64 asset table (wrong magic or version)");
    count = be32(buf + 8);
    for (i = 0; i < count; i++) {
        dnn64_platform_read(buf, TABLE_HEADER_SIZE + i * TABLE_ENTRY_SIZE, TABLE_ENTRY_SIZE);
        if (names_equal(buf, name)) {
            for (j = 0; j < TABLE_NAME_SIZE - 1u && buf[j] != 0; j++)
                out->name[j] = (char)buf[j];
            out->name[j] = '\0';
            out->offset = be32(buf + TABLE_NAME_SIZE);
            out->size = be32(buf + TABLE_NAME_SIZE + 4u);
            return 1;
        }
    }
    return 0;
}

dnn64_asset dnn64_asset_get(const char *name)
{
    dnn64_asset asset;
    if (!dnn64_asset_find(name, &asset)) {
        dnn64_line line;
        dnn64_line_begin(&line, "missing asset: ");
        dnn64_line_str(&line, name);
        dnn64_fail(line.text);
    }
    return asset;
}
