"""The C emitter (codegen/emit.py) against hand-written text."""

from __future__ import annotations

import pytest

from dnn64build.codegen.emit import (
    CTemplate,
    CWriter,
    array_decl,
    const_decl,
    hex_bytes,
    struct_decl,
    table_decl,
)


def test_blocks_indent_four_spaces_a_level_and_blank_lines_stay_empty() -> None:
    w = CWriter()
    w.comment("f */ runs")
    with w.block("void f(void)", "{"):
        w.line("int32_t k;", "")
        with w.block("for (k = 0; k < 2; ++k) {"):
            w.line("if (k)")
            with w.indented():
                w.code("g(k);\nh(k);")
    assert w.source() == ("/* f *_/ runs */\nvoid f(void)\n{\n    int32_t k;\n\n"
                          "    for (k = 0; k < 2; ++k) {\n        if (k)\n"
                          "            g(k);\n            h(k);\n    }\n}\n")


def test_code_wraps_after_commas_at_the_width_but_comments_never() -> None:
    w = CWriter(width=20)
    with w.block("{"):
        w.code("f(aaaa, bbbb, cccc, dddd);")
        w.comment("a, b, c, d, e, f, g, h")
    assert w.source(end="") == ("{\n    f(aaaa, bbbb,\n        cccc, dddd);\n"
                                "    /* a, b, c, d, e, f, g, h */\n}")


def test_declarations() -> None:
    assert const_decl("int8_t", "v", "-3") == "static const int8_t v = -3;"
    assert const_decl("s", "p", "{1, 2}", "a, b") == "static const s p = {1, 2};  /* a, b */"
    assert array_decl("int32_t", "t", ["1", "2", "3"]) == "static const int32_t t[3] = {1, 2, 3};"
    assert array_decl("int32_t", "t", ["1", "2", "3"], per_line=2) == (
        "static const int32_t t[3] = {1, 2,\n    3};")
    rows = [["1", "2"], ["3", "4"]]
    assert table_decl("int16_t", "f", [2, 2], rows) == (
        "static const int16_t f[2][2] = {\n    {1, 2},\n    {3, 4}\n};")
    assert table_decl("r", "g", [2, 2], rows, ["tile 0", "tile 1"]) == (
        "static const r g[2][2] = {\n    {1, 2}, /* tile 0 */\n    {3, 4}, /* tile 1 */\n};")


def test_a_struct_wraps_its_fields_before_92_characters() -> None:
    fields = {f"field_{k:02d}": k for k in range(8)}  # 13 characters an item, 15 with ", "
    assert struct_decl("geom", "g", fields) == (  # 6 items: 88 characters; 7: 103
        "static const geom g = {\n"
        "    .field_00 = 0, .field_01 = 1, .field_02 = 2, .field_03 = 3, .field_04 = 4, "
        ".field_05 = 5,\n    .field_06 = 6, .field_07 = 7\n};")


def test_hex_bytes_are_sixteen_a_line() -> None:
    assert hex_bytes(bytes(range(18))) == (
        "    " + " ".join(f"0x{b:02x}," for b in range(16)) + "\n    0x10, 0x11,")


def test_a_macro_and_its_comment() -> None:
    w = CWriter()
    w.define("M_STREAMED", 1, "rows */ here")
    w.define("M_BYTES", "12u")
    assert w.source() == "#define M_STREAMED 1  /* rows *_/ here */\n#define M_BYTES 12u\n"


def test_templates_fill_only_braced_holes() -> None:
    template = CTemplate("@{name}.o: $< ; @echo $@ @@{name} ${name} @name")
    assert template.fill({"name": "lib"}) == "lib.o: $< ; @echo $@ @lib ${name} @name"
    with pytest.raises(KeyError):
        template.fill({})
