"""`.include`: the included lines stand in place of the directive (checked against the
same program written out in one file), paths are relative to the including file, and
a missing file, a cycle or a label defined twice is an error naming file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnn64build.rsp.assembler import AsmError, assemble, assemble_file


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


STAGE = "    vadd $v15, $v15, $v30.e0\n    vlt $v15, $v15, $v30.e2\n"
SUB = "sub:\n    mtc0 $a0, $0\n    jr $ra\n    nop\n"


def test_include_stands_in_place_of_the_directive(tmp_path):
    write(tmp_path / "stage.inc", STAGE)
    write(tmp_path / "sub.inc", SUB)
    main = write(
        tmp_path / "main.rsp",
        'start:\n    jal sub\n    nop\n.include "stage.inc"\n    b start\n    nop\n'
        '.include "sub.inc"\n',
    )
    inline = "start:\n    jal sub\n    nop\n" + STAGE + "    b start\n    nop\n" + SUB
    got, want = assemble_file(main), assemble(inline)
    assert got.words == want.words
    assert got.labels == want.labels == {"start": 0, "sub": 24}


def test_nested_include_is_relative_to_the_including_file(tmp_path):
    write(tmp_path / "lib" / "outer.inc", '    nop\n.include "inner.inc"\n')
    write(tmp_path / "lib" / "inner.inc", "    break\n")
    write(tmp_path / "inner.inc", "    jr $ra\n")  # beside main: must not be the one taken
    main = write(tmp_path / "main.rsp", '.include "lib/outer.inc"\n    nop\n')
    assert assemble_file(main).words == assemble("nop\nbreak\nnop\n").words


def test_equ_before_the_include_feeds_the_included_lines(tmp_path):
    write(tmp_path / "load.inc", "    lhu $t0, FIELD($gp)\n")
    main = write(tmp_path / "main.rsp", '.equ FIELD, 6\n.include "load.inc"\n')
    assert assemble_file(main).words == assemble("lhu $t0, 6($gp)\n").words


def test_missing_file_names_the_include_line(tmp_path):
    main = write(tmp_path / "main.rsp", '    nop\n.include "nowhere.inc"\n')
    with pytest.raises(AsmError, match=r'\.include "nowhere\.inc": no file .*nowhere\.inc') as err:
        assemble_file(main)
    assert err.value.where == f"{main}:2"


def test_include_cycle_is_an_error(tmp_path):
    write(tmp_path / "a.inc", '.include "b.inc"\n')
    write(tmp_path / "b.inc", '    nop\n.include "a.inc"\n')
    main = write(tmp_path / "main.rsp", '.include "a.inc"\n')
    with pytest.raises(
        AsmError, match=r"include cycle: main\.rsp -> a\.inc -> b\.inc -> a\.inc"
    ) as err:
        assemble_file(main)
    assert err.value.where == (
        f"{tmp_path / 'b.inc'}:2 (included from {tmp_path / 'a.inc'}:1) (included from {main}:1)"
    )


def test_file_including_itself_is_a_cycle(tmp_path):
    main = write(tmp_path / "main.rsp", 'nop\n.include "main.rsp"\n')
    with pytest.raises(AsmError, match="include cycle") as err:
        assemble_file(main)
    assert err.value.where == f"{main}:2"


def test_label_of_an_include_defined_twice_collides(tmp_path):
    # Labels are one namespace for the whole program (as in GNU as): a subroutine file
    # is included once; including it again, or defining its label, collides.
    write(tmp_path / "sub.inc", SUB)
    main = write(tmp_path / "main.rsp", '.include "sub.inc"\n    nop\n.include "sub.inc"\n')
    with pytest.raises(AsmError, match="label 'sub' defined twice") as err:
        assemble_file(main)
    assert err.value.where == f"{tmp_path / 'sub.inc'}:1 (included from {main}:3)"
    clash = write(tmp_path / "clash.rsp", 'sub:\n    nop\n.include "sub.inc"\n')
    with pytest.raises(AsmError, match="label 'sub' defined twice"):
        assemble_file(clash)


@pytest.mark.parametrize(
    ("inner", "message"),
    [
        ("    nop\n    mult $t0, $t1\n", "mult does not exist"),
        ('    nop\n.include "gone.inc"\n', r'\.include "gone\.inc": no file'),
    ],
)
def test_error_inside_an_include_names_its_line_and_the_chain(tmp_path, inner, message):
    write(tmp_path / "lib" / "inner.inc", inner)
    write(tmp_path / "lib" / "outer.inc", 'nop\n.include "inner.inc"\n')
    main = write(tmp_path / "main.rsp", 'nop\nnop\n.include "lib/outer.inc"\n')
    with pytest.raises(AsmError, match=message) as err:
        assemble_file(main)
    lib = tmp_path / "lib"
    assert err.value.where == (
        f"{lib / 'inner.inc'}:2 (included from {lib / 'outer.inc'}:2) (included from {main}:3)"
    )


@pytest.mark.parametrize("directive", [".include stage.inc", '.include "a.inc" extra', ".include"])
def test_include_needs_one_quoted_name(tmp_path, directive):
    main = write(tmp_path / "main.rsp", directive + "\n")
    with pytest.raises(AsmError, match="quoted"):
        assemble_file(main)
