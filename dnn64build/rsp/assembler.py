"""A small assembler for the N64 RSP: its scalar MIPS subset plus the COP2 vector unit.

binutils knows the scalar instructions but not the vector ones, so the project
assembles its RSP microcode itself. Two passes: the first sizes every line and
records labels, the second encodes. Output: big-endian 32-bit words for IMEM.

Syntax (one statement a line; ``#`` or ``;`` starts a comment):

- ``label:`` (may share a line with an instruction); ``.equ NAME, value``.
- ``.include "file"`` puts that file's lines in place of the directive. The path is
  relative to the including file's directory (``assemble``'s ``name``; ``assemble_file``
  passes the path). Included lines share the program's one label and ``.equ`` namespace,
  as in GNU as: an ``.equ`` before the include feeds the included lines, and an include
  file that defines labels (a subroutine such as ``dma_in``) is included once a program;
  a second definition is the usual "defined twice" error. There are no macros or
  per-include local labels: the kernels' shared sequences are the same to the register.
  A missing file or an include cycle is an error naming the ``.include`` line; an error
  inside an included file names that file's line and the include lines that led there.
- GPRs: ``$0``..``$31`` or ABI names (``$zero $at $v0 $v1 $a0..$a3 $t0..$t9
  $s0..$s7 $k0 $k1 $gp $sp $fp $ra``).
- Vector registers: ``$v00``..``$v31`` (always two digits, so ``$v0``/``$v1`` stay
  the GPRs). Computational ops take an element suffix on vt: ``.e0``..``.e7``
  (one lane broadcast), ``.h0``..``.h3``, ``.q0``, ``.q1``; none means the whole
  vector. Loads/stores and mtc2/mfc2 take a byte element ``.b0``..``.b15``
  (``.eN`` is byte 2N for mtc2/mfc2).
- Loads/stores: ``lqv $v02, 16($t0)``; the offset is in bytes and must be a
  multiple of the access size (16 for quad, 8 double, 4 long, 2 short, 1 byte).
- ``vsar $v03, ACC_HI`` (``ACC_MD``, ``ACC_LO``) reads an accumulator slice.
- Pseudo-instructions: ``nop``, ``move``, ``li`` (one instruction for a 16-bit
  value, else lui+ori), ``b``, ``beqz``, ``bnez``.

Encodings (facts checked against libdragon's include/rsp.inc):
- vector op: COP2 ``0x12 << 26 | 1 << 25 | e << 21 | vt << 16 | vs << 11 | vd << 6 | funct``
- vector load/store: LWC2 (``0x32``) / SWC2 (``0x3A``) ``<< 26 | base << 21 | vt << 16 |
  op << 11 | element << 7 | (offset / size) & 0x7F``
- mfc2/mtc2: ``0x12 << 26 | (0 | 4) << 21 | rt << 16 | vs << 11 | element << 7``
The RSP has delay slots (branches and jumps); this assembler never reorders or
fills them: write the delay-slot instruction yourself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dnn64build.errors import UserError

GPR_NAMES = {
    "zero": 0, "at": 1, "v0": 2, "v1": 3, "a0": 4, "a1": 5, "a2": 6, "a3": 7,
    "t0": 8, "t1": 9, "t2": 10, "t3": 11, "t4": 12, "t5": 13, "t6": 14, "t7": 15,
    "s0": 16, "s1": 17, "s2": 18, "s3": 19, "s4": 20, "s5": 21, "s6": 22, "s7": 23,
    "t8": 24, "t9": 25, "k0": 26, "k1": 27, "gp": 28, "sp": 29, "fp": 30, "s8": 30, "ra": 31,
}  # fmt: skip

# funct fields of the computational vector ops (rsp.inc makeOpInstruction).
VECTOR_OPS = {
    "vmulf": 0b000000, "vmulu": 0b000001, "vmudl": 0b000100, "vmudm": 0b000101,
    "vmudn": 0b000110, "vmudh": 0b000111, "vmacf": 0b001000, "vmacu": 0b001001,
    "vmadl": 0b001100, "vmadm": 0b001101, "vmadn": 0b001110, "vmadh": 0b001111,
    "vadd": 0b010000, "vsub": 0b010001, "vabs": 0b010011, "vaddc": 0b010100,
    "vsubc": 0b010101, "vlt": 0b100000, "veq": 0b100001, "vne": 0b100010,
    "vge": 0b100011, "vcl": 0b100100, "vch": 0b100101, "vcr": 0b100110,
    "vmrg": 0b100111, "vand": 0b101000, "vnand": 0b101001, "vor": 0b101010,
    "vnor": 0b101011, "vxor": 0b101100, "vnxor": 0b101101,
}  # fmt: skip
VSAR_FUNCT = 0b011101
VNOP_FUNCT = 0b110111
ACC_SLICES = {"ACC_HI": 8, "ACC_MD": 9, "ACC_LO": 10}

# Vector loads/stores: name -> (op field, access size in bytes) (rsp.inc makeLs*).
VECTOR_LOADS = {
    "lbv": (0b00000, 1), "lsv": (0b00001, 2), "llv": (0b00010, 4), "ldv": (0b00011, 8),
    "lqv": (0b00100, 16), "lrv": (0b00101, 16), "lpv": (0b00110, 8), "luv": (0b00111, 8),
    "lhv": (0b01000, 16), "lfv": (0b01001, 16), "ltv": (0b01011, 16),
}  # fmt: skip
VECTOR_STORES = {
    "sbv": (0b00000, 1), "ssv": (0b00001, 2), "slv": (0b00010, 4), "sdv": (0b00011, 8),
    "sqv": (0b00100, 16), "srv": (0b00101, 16), "spv": (0b00110, 8), "suv": (0b00111, 8),
    "shv": (0b01000, 16), "sfv": (0b01001, 16), "swv": (0b01010, 16), "stv": (0b01011, 16),
}  # fmt: skip
LWC2, SWC2, COP2 = 0x32, 0x3A, 0x12

# Scalar instructions: R-type funct codes and I-type opcodes (MIPS I).
R3 = {"add": 0x20, "addu": 0x21, "sub": 0x22, "subu": 0x23, "and": 0x24, "or": 0x25,
      "xor": 0x26, "nor": 0x27, "slt": 0x2A, "sltu": 0x2B}  # fmt: skip
SHIFT_IMM = {"sll": 0x00, "srl": 0x02, "sra": 0x03}
SHIFT_VAR = {"sllv": 0x04, "srlv": 0x06, "srav": 0x07}
ALU_IMM = {"addi": 0x08, "addiu": 0x09, "slti": 0x0A, "sltiu": 0x0B}
LOGIC_IMM = {"andi": 0x0C, "ori": 0x0D, "xori": 0x0E}  # zero-extended immediates
MEMORY = {"lb": 0x20, "lh": 0x21, "lw": 0x23, "lbu": 0x24, "lhu": 0x25,
          "sb": 0x28, "sh": 0x29, "sw": 0x2B}  # fmt: skip
BRANCH2 = {"beq": 0x04, "bne": 0x05}
BRANCH1 = {"blez": 0x06, "bgtz": 0x07}
REGIMM = {"bltz": 0x00, "bgez": 0x01, "bltzal": 0x10, "bgezal": 0x11}
JUMPS = {"j": 0x02, "jal": 0x03}
# Instructions of MIPS the RSP lacks: named so the error says so.
UNSUPPORTED = {
    "mult", "multu", "div", "divu", "mfhi", "mflo", "mthi", "mtlo", "ld", "sd", "lwl",
    "lwr", "swl", "swr", "ll", "sc", "syscall", "sync", "beql", "bnel", "blezl", "bgtzl",
    "bltzl", "bgezl", "lwu", "dadd", "daddu", "daddi", "daddiu", "dsll", "dsrl", "dsra",
    "dmult", "ddiv",
}  # fmt: skip

_LABEL = re.compile(r"^([A-Za-z_.][\w.]*)\s*:")
_SYMBOL = re.compile(r"^[A-Za-z_][\w.]*$")
_MEM = re.compile(r"^(.*)\((\$\w+)\)$")
_VREG = re.compile(r"^\$v(\d\d)(?:\.([ehqb])(\d+))?$")
_INCLUDE = re.compile(r'^\.include\s+"([^"]+)"$', re.IGNORECASE)


class AsmError(UserError):
    """A line of RSP source that cannot be assembled: names the line and why."""


@dataclass(frozen=True)
class Microcode:
    """Assembled code: IMEM words in order and the label -> byte offset map."""

    words: tuple[int, ...]
    labels: dict[str, int]


@dataclass(frozen=True)
class _Line:
    where: str  # file:line, and the includes that led there
    mnemonic: str
    operands: tuple[str, ...]
    address: int


class _Encoder:
    def __init__(self, line: _Line, labels: dict[str, int], equates: dict[str, int]):
        self.line, self.labels, self.equates = line, labels, equates

    def fail(self, message: str) -> AsmError:
        text = f"{self.line.mnemonic} {', '.join(self.line.operands)}".strip()
        return AsmError(f"{message} (in `{text}`)", where=self.line.where)

    def count(self, n: int) -> None:
        if len(self.line.operands) != n:
            raise self.fail(f"{self.line.mnemonic} takes {n} operands")

    def gpr(self, text: str) -> int:
        name = text[1:] if text.startswith("$") else None
        if name is not None and name.isdigit() and int(name) < 32:
            return int(name)
        if name in GPR_NAMES:
            return GPR_NAMES[name]
        raise self.fail(f"expected a scalar register, got {text!r}")

    def value(self, text: str) -> int:
        text = text.strip()
        negative = text.startswith("-")
        body = text[1:].strip() if negative else text
        if body in self.equates:
            v = self.equates[body]
        elif body in self.labels:
            v = self.labels[body]
        else:
            try:
                v = int(body, 0)
            except ValueError:
                raise self.fail(f"expected a number, label or .equ name, got {text!r}") from None
        return -v if negative else v

    def imm(self, text: str, lo: int, hi: int) -> int:
        v = self.value(text)
        if not lo <= v <= hi:
            raise self.fail(f"immediate {v} out of range [{lo}, {hi}]")
        return v

    def vreg(self, text: str, kinds: str) -> tuple[int, int]:
        """(register, element field) for a vector operand; kinds: allowed suffix letters."""
        m = _VREG.match(text)
        if not m or int(m.group(1)) > 31:
            raise self.fail(f"expected a vector register $v00..$v31, got {text!r}")
        reg, kind, index = int(m.group(1)), m.group(2), m.group(3)
        if kind is None:
            return reg, 0
        if kind not in kinds:
            raise self.fail(f"element .{kind}{index} not allowed here")
        n = int(index)
        limits = {"e": 7, "h": 3, "q": 1, "b": 15}
        if n > limits[kind]:
            raise self.fail(f"element .{kind}{n} out of range")
        if kind == "e":
            return reg, (2 * n if "b" in kinds else 8 + n)
        return reg, {"h": 4 + n, "q": 2 + n, "b": n}[kind]

    def branch_offset(self, text: str) -> int:
        target = self.value(text)
        delta = target - (self.line.address + 4)
        if delta % 4 or not -(2**17) <= delta < 2**17:
            raise self.fail(f"branch target {text} unreachable")
        return (delta // 4) & 0xFFFF

    def memory(self, text: str) -> tuple[int, int]:
        m = _MEM.match(text.replace(" ", ""))
        if not m:
            raise self.fail(f"expected offset($base), got {text!r}")
        return (self.value(m.group(1)) if m.group(1) else 0), self.gpr(m.group(2))


def _itype(op: int, rs: int, rt: int, imm: int) -> int:
    return op << 26 | rs << 21 | rt << 16 | (imm & 0xFFFF)


def _rtype(rs: int, rt: int, rd: int, shamt: int, funct: int) -> int:
    return rs << 21 | rt << 16 | rd << 11 | shamt << 6 | funct


def _encode(e: _Encoder) -> list[int]:  # noqa: C901 - one branch per instruction class
    m, ops = e.line.mnemonic, e.line.operands
    if m in UNSUPPORTED:
        raise e.fail(f"{m} does not exist on the RSP")
    if m in VECTOR_OPS:
        e.count(3)
        vd, _ = e.vreg(ops[0], "")
        vs, _ = e.vreg(ops[1], "")
        vt, el = e.vreg(ops[2], "ehq")
        return [COP2 << 26 | 1 << 25 | el << 21 | vt << 16 | vs << 11 | vd << 6 | VECTOR_OPS[m]]
    if m == "vsar":
        e.count(2)
        vd, _ = e.vreg(ops[0], "")
        if ops[1] not in ACC_SLICES:
            raise e.fail(f"vsar reads one of {', '.join(ACC_SLICES)}")
        return [COP2 << 26 | 1 << 25 | ACC_SLICES[ops[1]] << 21 | vd << 6 | VSAR_FUNCT]
    if m == "vnop":
        e.count(0)
        return [COP2 << 26 | 1 << 25 | VNOP_FUNCT]
    if m in VECTOR_LOADS or m in VECTOR_STORES:
        e.count(2)
        field, size = VECTOR_LOADS[m] if m in VECTOR_LOADS else VECTOR_STORES[m]
        vt, el = e.vreg(ops[0], "b")
        offset, base = e.memory(ops[1])
        if offset % size:
            raise e.fail(f"{m} offset {offset} is not a multiple of {size}")
        scaled = offset // size
        if not -64 <= scaled <= 63:
            raise e.fail(f"{m} offset {offset} out of range [{-64 * size}, {63 * size}]")
        op = LWC2 if m in VECTOR_LOADS else SWC2
        return [op << 26 | base << 21 | vt << 16 | field << 11 | el << 7 | (scaled & 0x7F)]
    if m in ("mfc2", "mtc2"):
        e.count(2)
        rt = e.gpr(ops[0])
        vs, el = e.vreg(ops[1], "eb")
        return [COP2 << 26 | (4 if m == "mtc2" else 0) << 21 | rt << 16 | vs << 11 | el << 7]
    if m in ("mfc0", "mtc0"):
        e.count(2)
        rd = e.imm(ops[1].lstrip("$"), 0, 31)
        return [0x10 << 26 | (4 if m == "mtc0" else 0) << 21 | e.gpr(ops[0]) << 16 | rd << 11]
    if m in R3:
        e.count(3)
        return [_rtype(e.gpr(ops[1]), e.gpr(ops[2]), e.gpr(ops[0]), 0, R3[m])]
    if m in SHIFT_IMM:
        e.count(3)
        return [_rtype(0, e.gpr(ops[1]), e.gpr(ops[0]), e.imm(ops[2], 0, 31), SHIFT_IMM[m])]
    if m in SHIFT_VAR:
        e.count(3)
        return [_rtype(e.gpr(ops[2]), e.gpr(ops[1]), e.gpr(ops[0]), 0, SHIFT_VAR[m])]
    if m in ALU_IMM:
        e.count(3)
        return [_itype(ALU_IMM[m], e.gpr(ops[1]), e.gpr(ops[0]), e.imm(ops[2], -32768, 32767))]
    if m in LOGIC_IMM:
        e.count(3)
        return [_itype(LOGIC_IMM[m], e.gpr(ops[1]), e.gpr(ops[0]), e.imm(ops[2], 0, 0xFFFF))]
    if m == "lui":
        e.count(2)
        return [_itype(0x0F, 0, e.gpr(ops[0]), e.imm(ops[1], 0, 0xFFFF))]
    if m in MEMORY:
        e.count(2)
        offset, base = e.memory(ops[1])
        if not -32768 <= offset <= 32767:
            raise e.fail(f"offset {offset} out of range")
        return [_itype(MEMORY[m], base, e.gpr(ops[0]), offset)]
    if m in BRANCH2:
        e.count(3)
        return [_itype(BRANCH2[m], e.gpr(ops[0]), e.gpr(ops[1]), e.branch_offset(ops[2]))]
    if m in BRANCH1:
        e.count(2)
        return [_itype(BRANCH1[m], e.gpr(ops[0]), 0, e.branch_offset(ops[1]))]
    if m in REGIMM:
        e.count(2)
        return [_itype(0x01, e.gpr(ops[0]), REGIMM[m], e.branch_offset(ops[1]))]
    if m in JUMPS:
        e.count(1)
        target = e.value(ops[0])
        if target % 4 or not 0 <= target < 2**28:
            raise e.fail(f"jump target {ops[0]} is not a word address")
        return [JUMPS[m] << 26 | target >> 2]
    if m == "jr":
        e.count(1)
        return [_rtype(e.gpr(ops[0]), 0, 0, 0, 0x08)]
    if m == "jalr":
        if len(ops) == 1:
            return [_rtype(e.gpr(ops[0]), 0, 31, 0, 0x09)]
        e.count(2)
        return [_rtype(e.gpr(ops[1]), 0, e.gpr(ops[0]), 0, 0x09)]
    if m == "break":
        e.count(0)
        return [0x0D]
    return _pseudo(e)


def _pseudo(e: _Encoder) -> list[int]:
    m, ops = e.line.mnemonic, e.line.operands
    if m == "nop":
        e.count(0)
        return [0]
    if m == "move":
        e.count(2)
        return [_rtype(e.gpr(ops[1]), 0, e.gpr(ops[0]), 0, R3["or"])]  # as GNU as
    if m == "b":
        e.count(1)
        return [_itype(BRANCH2["beq"], 0, 0, e.branch_offset(ops[0]))]
    if m in ("beqz", "bnez"):
        e.count(2)
        op = BRANCH2["beq" if m == "beqz" else "bne"]
        return [_itype(op, e.gpr(ops[0]), 0, e.branch_offset(ops[1]))]
    if m == "li":
        e.count(2)
        rt, v = e.gpr(ops[0]), e.imm(ops[1], -(2**31), 2**32 - 1) & 0xFFFFFFFF
        if v < 0x8000 or v >= 0xFFFF8000:
            return [_itype(ALU_IMM["addiu"], 0, rt, v)]
        if v <= 0xFFFF:
            return [_itype(LOGIC_IMM["ori"], 0, rt, v)]
        return [_itype(0x0F, 0, rt, v >> 16), _itype(LOGIC_IMM["ori"], rt, rt, v & 0xFFFF)]
    raise e.fail(f"unknown instruction {m!r}")


def _size(line: _Line, equates: dict[str, int]) -> int:
    """Bytes a statement takes (only li varies, by its value, which must be known now)."""
    if line.mnemonic != "li":
        return 4
    return 4 * len(_encode(_Encoder(line, {}, equates)))


def _split(text: str) -> tuple[str, tuple[str, ...]]:
    parts = text.split(None, 1)
    operands = tuple(o.strip() for o in parts[1].split(",")) if len(parts) > 1 else ()
    return parts[0].lower(), operands


def _expand(
    source: str, name: str, open_files: tuple[Path, ...] = (), context: str = ""
) -> list[tuple[str, str]]:
    """(where, text) of every line, comments stripped, each ``.include`` replaced by its
    file's lines. ``open_files``: the files including this one (a cycle if it recurs);
    ``context``: the include lines that led here, for error messages."""
    open_files = (*open_files, Path(name).resolve())
    lines: list[tuple[str, str]] = []
    for number, raw in enumerate(source.splitlines(), 1):
        where = f"{name}:{number}{context}"
        text = re.split(r"[#;]", raw, maxsplit=1)[0].strip()
        if not text.lower().startswith(".include"):
            lines.append((where, text))
            continue
        m = _INCLUDE.match(text)
        if m is None:
            raise AsmError('.include takes a "quoted" file name', where=where)
        path = Path(name).parent / m.group(1)
        if path.resolve() in open_files:
            cycle = " -> ".join(f.name for f in (*open_files, path))
            raise AsmError(f"include cycle: {cycle}", where=where)
        if not path.is_file():
            raise AsmError(f'.include "{m.group(1)}": no file {path}', where=where)
        inner = f" (included from {name}:{number}){context}"
        lines.extend(_expand(path.read_text(), str(path), open_files, inner))
    return lines


def assemble_file(path: Path, *, origin: int = 0) -> Microcode:
    """Assemble an .rsp file; its ``.include`` paths are relative to its directory."""
    return assemble(path.read_text(), name=str(path), origin=origin)


def assemble(source: str, *, name: str = "<rsp>", origin: int = 0) -> Microcode:
    """Assemble RSP source into IMEM words; AsmError names the line of any mistake.

    ``name`` is the file the source came from: errors name it, and ``.include`` paths
    are relative to its directory."""
    labels: dict[str, int] = {}
    equates: dict[str, int] = {}
    lines: list[_Line] = []
    address = origin
    for where, text in _expand(source, name):
        while (m := _LABEL.match(text)) is not None:
            label = m.group(1)
            if label in labels or label in equates:
                raise AsmError(f"label {label!r} defined twice", where=where)
            labels[label] = address
            text = text[m.end() :].strip()
        if not text:
            continue
        mnemonic, operands = _split(text)
        if mnemonic == ".equ":
            if len(operands) != 2 or not _SYMBOL.match(operands[0]):
                raise AsmError(".equ takes NAME, value", where=where)
            line = _Line(where, mnemonic, operands, address)
            equates[operands[0]] = _Encoder(line, labels, equates).value(operands[1])
            continue
        line = _Line(where, mnemonic, operands, address)
        lines.append(line)
        address += _size(line, equates)
    if address - origin > 4096:
        raise AsmError(f"code is {address - origin} bytes; IMEM holds 4096", where=name)
    words: list[int] = []
    for line in lines:
        words.extend(_encode(_Encoder(line, labels, equates)))
    return Microcode(tuple(words), labels)
