/* dnn64_format.c - exact, printf-free line formatting over dnn64_print.
 * Portable: used unchanged by every platform. */
#include "dnn64_platform.h"

static void put_char(dnn64_line *line, char c)
{
    if (line->len < DNN64_LINE_MAX) {
        line->text[line->len++] = c;
        line->text[line->len] = '\0';
    } else {
        line->truncated = 1;
    }
}

static void put_sep(dnn64_line *line)
{
    if (line->len > 0)
        put_char(line, ' ');
}

void dnn64_line_begin(dnn64_line *line, const char *prefix)
{
    line->len = 0;
    line->truncated = 0;
    line->text[0] = '\0';
    dnn64_line_str(line, prefix);
}

void dnn64_line_str(dnn64_line *line, const char *text)
{
    while (*text)
        put_char(line, *text++);
}

static void put_decimal(dnn64_line *line, uint64_t magnitude)
{
    char digits[20];
    uint32_t n = 0;
    do {
        digits[n++] = (char)('0' + (uint32_t)(magnitude % 10u));
        magnitude /= 10u;
    } while (magnitude != 0);
    while (n > 0)
        put_char(line, digits[--n]);
}

void dnn64_line_u64(dnn64_line *line, uint64_t value)
{
    put_sep(line);
    put_decimal(line, value);
}

void dnn64_line_u32(dnn64_line *line, uint32_t value)
{
    dnn64_line_u64(line, value);
}

void dnn64_line_i32(dnn64_line *line, int32_t value)
{
    put_sep(line);
    if (value < 0) {
        put_char(line, '-');
        /* Negate in unsigned arithmetic so INT32_MIN is exact. */
        put_decimal(line, 0u - (uint32_t)value);
    } else {
        put_decimal(line, (uint32_t)value);
    }
}

static void put_hex_digits(dnn64_line *line, uint32_t value, uint32_t ndigits)
{
    static const char hex[] = "0123456789abcdef";
    while (ndigits > 0) {
        ndigits--;
        put_char(line, hex[(value >> (4u * ndigits)) & 0xFu]);
    }
}

void dnn64_line_hex32(dnn64_line *line, uint32_t value)
{
    put_sep(line);
    put_hex_digits(line, value, 8);
}

uint32_t dnn64_f32_bits(float value)
{
    union {
        float f;
        uint32_t u;
    } pun;
    pun.f = value;
    return pun.u;
}

void dnn64_line_f32(dnn64_line *line, float value)
{
    dnn64_line_hex32(line, dnn64_f32_bits(value));
}

void dnn64_line_end(dnn64_line *line)
{
    dnn64_print(line->text);
}

void dnn64_print_u64(const char *prefix, uint64_t value)
{
    dnn64_line line;
    dnn64_line_begin(&line, prefix);
    dnn64_line_u64(&line, value);
    dnn64_line_end(&line);
}

void dnn64_print_i8_hex(const char *prefix, const int8_t *data, uint32_t count)
{
    uint32_t start;
    for (start = 0; start < count; start += 32u) {
        dnn64_line line;
        uint32_t i;
        dnn64_line_begin(&line, prefix);
        dnn64_line_u32(&line, start);
        for (i = start; i < start + 32u && i < count; i++) {
            if ((i - start) % 4u == 0)
                put_sep(&line);
            put_hex_digits(&line, (uint8_t)data[i], 2);
        }
        for (; (i - start) % 4u != 0; i++)
            put_hex_digits(&line, 0, 2);
        dnn64_line_end(&line);
    }
}

void dnn64_print_f32_hex(const char *prefix, const float *data, uint32_t count)
{
    uint32_t start;
    for (start = 0; start < count; start += 8u) {
        dnn64_line line;
        uint32_t i;
        dnn64_line_begin(&line, prefix);
        dnn64_line_u32(&line, start);
        for (i = start; i < start + 8u && i < count; i++)
            dnn64_line_f32(&line, data[i]);
        dnn64_line_end(&line);
    }
}
