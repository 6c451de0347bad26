"""The RSP assembler against independent facts.

Scalar instructions: GNU as (binutils-mips-linux-gnu) assembles the same text.
Vector instructions: the bit fields written out by hand from the documented formats
(COP2 computational, LWC2/SWC2 loads/stores, MFC2/MTC2), not from the assembler's tables.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.rsp.assembler import AsmError, assemble
from tests.tool_required import missing_tool

SCALAR = """
start:
    addu $t0, $t1, $t2
    subu $s0, $s1, $s2
    add $1, $2, $3
    sub $4, $5, $6
    and $a0, $a1, $a2
    or $v0, $v1, $ra
    xor $t7, $t8, $t9
    nor $k0, $k1, $gp
    slt $t0, $zero, $t1
    sltu $t0, $t1, $zero
    sll $t0, $t1, 4
    srl $t2, $t3, 31
    sra $t4, $t5, 1
    sllv $t0, $t1, $t2
    srlv $t0, $t1, $t2
    srav $t0, $t1, $t2
    addiu $t0, $t0, -16
    addi $sp, $sp, 32767
    slti $t0, $t1, -32768
    sltiu $t0, $t1, 100
    andi $t0, $t1, 0xFFFF
    ori $t0, $t1, 0x8000
    xori $t0, $t1, 1
    lui $t0, 0xA404
    lb $t0, -4($s0)
    lbu $t0, 0($s0)
    lh $t0, 2($s0)
    lhu $t0, 6($zero)
    lw $t0, 0x7FF0($s0)
    sb $t0, 1($s0)
    sh $t0, 2($s0)
    sw $t0, -8($sp)
loop:
    beq $t0, $t1, start
    bne $t0, $zero, loop
    blez $t0, done
    bgtz $t0, loop
    bltz $t0, start
    bgez $t0, done
    jr $ra
    jalr $t0
    j done
    jal start
    mfc0 $t0, $4
    mtc0 $t1, $0
    nop
    move $t0, $s3
    b loop
    beqz $t0, done
    bnez $t0, start
    li $t0, 1000
    li $t0, -5
    li $t0, 0xFFFF
    li $t0, 0x12345678
done:
    break
"""


def gnu_words(source: str, tmp_path: Path) -> list[int]:
    """Assemble with GNU as for MIPS I, linked at 0, as big-endian words."""
    tools = {t: shutil.which(f"mips-linux-gnu-{t}") for t in ("as", "ld", "objcopy")}
    if not all(tools.values()):
        missing_tool(UserError("mips-linux-gnu binutils not found (binutils-mips-linux-gnu)"))
    (tmp_path / "x.s").write_text(".set noreorder\n.set noat\n.text\n" + source)
    run = lambda *argv: subprocess.run(argv, check=True, capture_output=True)  # noqa: E731
    run(tools["as"], "-EB", "-march=mips1", "-mno-pdr", "-o", tmp_path / "x.o", tmp_path / "x.s")
    run(tools["ld"], "-EB", "-Ttext=0", "-e", "0", "-o", tmp_path / "x.elf", tmp_path / "x.o")
    run(tools["objcopy"], "-O", "binary", "-j", ".text", tmp_path / "x.elf", tmp_path / "x.bin")
    data = (tmp_path / "x.bin").read_bytes().rstrip(b"\0")  # the section's padding
    return [int.from_bytes(data[i : i + 4], "big") for i in range(0, len(data), 4)]


@pytest.mark.cross
def test_scalar_instructions_match_gnu_as(tmp_path):
    assert list(assemble(SCALAR).words) == gnu_words(SCALAR, tmp_path)


def cop2(e: int, vt: int, vs: int, vd: int, funct: int) -> int:
    """COP2 computational format, written out: 010010 1 eeee ttttt sssss ddddd ffffff."""
    bits = f"010010" f"1" f"{e:04b}" f"{vt:05b}" f"{vs:05b}" f"{vd:05b}" f"{funct:06b}"
    assert len(bits) == 32
    return int(bits, 2)


def lwc2(swc: bool, base: int, vt: int, op: int, el: int, off7: int) -> int:
    """LWC2/SWC2 vector format: 110010|111010 bbbbb ttttt ooooo eeee iiiiiii."""
    bits = ("111010" if swc else "110010") + f"{base:05b}{vt:05b}{op:05b}{el:04b}{off7 & 0x7F:07b}"
    assert len(bits) == 32
    return int(bits, 2)


# (source, expected) with funct codes from the RSP manuals' opcode table.
VECTOR_CASES = [
    ("vmudh $v01, $v02, $v03", cop2(0, 3, 2, 1, 0b000111)),
    ("vmadh $v01, $v02, $v03.e5", cop2(8 + 5, 3, 2, 1, 0b001111)),
    ("vmudn $v31, $v00, $v17.h2", cop2(4 + 2, 17, 0, 31, 0b000110)),
    ("vmadn $v04, $v05, $v06.q1", cop2(3, 6, 5, 4, 0b001110)),
    ("vmudm $v04, $v05, $v06.e0", cop2(8, 6, 5, 4, 0b000101)),
    ("vmadm $v04, $v05, $v06", cop2(0, 6, 5, 4, 0b001101)),
    ("vmudl $v04, $v05, $v06", cop2(0, 6, 5, 4, 0b000100)),
    ("vmadl $v04, $v05, $v06", cop2(0, 6, 5, 4, 0b001100)),
    ("vmulf $v04, $v05, $v06", cop2(0, 6, 5, 4, 0b000000)),
    ("vmacf $v04, $v05, $v06.e7", cop2(15, 6, 5, 4, 0b001000)),
    ("vadd $v10, $v11, $v12", cop2(0, 12, 11, 10, 0b010000)),
    ("vsub $v10, $v11, $v12.e1", cop2(9, 12, 11, 10, 0b010001)),
    ("vge $v10, $v11, $v12", cop2(0, 12, 11, 10, 0b100011)),
    ("vlt $v10, $v11, $v12", cop2(0, 12, 11, 10, 0b100000)),
    ("vch $v10, $v11, $v12", cop2(0, 12, 11, 10, 0b100101)),
    ("vcl $v10, $v11, $v12", cop2(0, 12, 11, 10, 0b100100)),
    ("vand $v10, $v11, $v12", cop2(0, 12, 11, 10, 0b101000)),
    ("vor $v10, $v11, $v12", cop2(0, 12, 11, 10, 0b101010)),
    ("vxor $v00, $v00, $v00", cop2(0, 0, 0, 0, 0b101100)),
    ("vsar $v07, ACC_HI", cop2(8, 0, 0, 7, 0b011101)),
    ("vsar $v07, ACC_MD", cop2(9, 0, 0, 7, 0b011101)),
    ("vsar $v07, ACC_LO", cop2(10, 0, 0, 7, 0b011101)),
    ("vnop", cop2(0, 0, 0, 0, 0b110111)),
    ("lqv $v02, 16($t0)", lwc2(False, 8, 2, 0b00100, 0, 1)),
    ("lqv $v02, -1024($t0)", lwc2(False, 8, 2, 0b00100, 0, -64)),
    ("sqv $v31, 1008($s1)", lwc2(True, 17, 31, 0b00100, 0, 63)),
    ("ldv $v03.b8, 8($a0)", lwc2(False, 4, 3, 0b00011, 8, 1)),
    ("sdv $v03, -8($a0)", lwc2(True, 4, 3, 0b00011, 0, -1)),
    ("lpv $v05, 56($t5)", lwc2(False, 13, 5, 0b00110, 0, 7)),
    ("luv $v05, 8($t5)", lwc2(False, 13, 5, 0b00111, 0, 1)),
    ("spv $v05, 0($t5)", lwc2(True, 13, 5, 0b00110, 0, 0)),
    ("lbv $v01.b15, 63($zero)", lwc2(False, 0, 1, 0b00000, 15, 63)),
    ("lsv $v01.b2, -128($t1)", lwc2(False, 9, 1, 0b00001, 2, -64)),
    ("llv $v01, 252($t1)", lwc2(False, 9, 1, 0b00010, 0, 63)),
    ("ssv $v01.b4, 2($t1)", lwc2(True, 9, 1, 0b00001, 4, 1)),
    ("slv $v01, 4($t1)", lwc2(True, 9, 1, 0b00010, 0, 1)),
    # MFC2/MTC2: 010010 0000|0100 ttttt sssss eeee 0000000, element = byte index.
    ("mtc2 $t0, $v04.e3", int("010010" "00100" "01000" "00100" "0110" "0000000", 2)),
    ("mfc2 $t1, $v05.b2", int("010010" "00000" "01001" "00101" "0010" "0000000", 2)),
]


@pytest.mark.parametrize(("source", "expected"), VECTOR_CASES)
def test_vector_encoding_from_documented_fields(source, expected):
    assert assemble(source).words == (expected,)


def test_labels_and_branch_offsets():
    code = assemble("top:\n  nop\n  bnez $t0, top\n  nop\nend: break\n")
    assert code.labels == {"top": 0, "end": 12}
    assert code.words[1] == 0x1500FFFE  # bne t0, zero, -2


def test_equ_values_feed_immediates():
    assert assemble(".equ SIZE, 48\n addiu $t0, $zero, SIZE\n").words == (0x24080030,)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("mult $t0, $t1", r"mult does not exist on the RSP"),
        ("lqv $v02, 8($t0)", r"not a multiple of 16"),
        ("lqv $v02, 1024($t0)", r"out of range \[-1024, 1008\]"),
        ("vmadh $v01, $v02, $v03.e8", r"out of range"),
        ("vmadh $v1, $v02, $v03", r"expected a vector register"),
        ("addiu $t0, $t0, 40000", r"immediate 40000 out of range"),
        ("beq $t0, $t1, nowhere", r"expected a number, label or .equ name, got 'nowhere'"),
        ("frob $t0", r"unknown instruction 'frob'"),
        ("a: a: nop", r"label 'a' defined twice"),
        ("vsar $v01, ACC_X", r"vsar reads one of"),
        ("addu $t0, $t1", r"addu takes 3 operands"),
    ],
)
def test_mistakes_name_the_line(source, message):
    with pytest.raises(AsmError, match=message) as err:
        assemble("nop\n" + source, name="k.rsp")
    assert err.value.where.startswith("k.rsp:2")


def test_imem_overflow_is_an_error():
    with pytest.raises(AsmError, match="IMEM holds 4096"):
        assemble("nop\n" * 1025)
