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

/* The hex lines of dnn64_print_i8_hex / _f32_hex / _hex_piece: `size` bytes an element
 * (1: int8, 4: float32, 4-byte aligned), 32 bytes a line, "<prefix> <first + index>
 * [<values on the line>] <words>"; int8 four to a word, the last padded with 00. */
static void print_hex(const char *prefix, uint32_t first, const uint8_t *data,
                      uint32_t count, uint32_t size, int with_count)
{
    const uint32_t per_line = 32u / size;
    uint32_t start, i, b;
    for (start = 0; start < count; start += per_line) {
        const uint32_t n = count - start < per_line ? count - start : per_line;
        dnn64_line line;
        dnn64_line_begin(&line, prefix);
        dnn64_line_u32(&line, first + start);
        if (with_count)
            dnn64_line_u32(&line, n);
        for (i = 0; i < n * size; i += 4u) {
            const uint8_t *p = data + start * size + i;
            uint32_t word = 0;
            if (size == 4u) {
                word = dnn64_f32_bits(*(const float *)p);
            } else {
                for (b = 0; b < 4u; b++)
                    word = (word << 8) | (i + b < n ? p[b] : 0u);
            }
            dnn64_line_hex32(&line, word);
        }
        dnn64_line_end(&line);
    }
}

void dnn64_print_i8_hex(const char *prefix, const int8_t *data, uint32_t count)
{
    print_hex(prefix, 0, (const uint8_t *)data, count, 1u, 0);
}

void dnn64_print_f32_hex(const char *prefix, const float *data, uint32_t count)
{
    print_hex(prefix, 0, (const uint8_t *)data, count, 4u, 0);
}

void dnn64_print_hex_piece(const char *prefix, uint32_t first, const void *data,
                           uint32_t count, uint32_t size)
{
    print_hex(prefix, first, (const uint8_t *)data, count, size, 1);
}
