"""A PIF boot ROM of dnn64's own for cen64 (the console's is copyrighted).

cen64 starts the CPU at 0xBFC00000, the start of the 2 KiB PIF ROM, and accepts
any image (N64-NOTES.md, "cen64"). Ours does what IPL2 does for a bare ROM: copy
cart 0x40..0x1000 (the IPL3 area) word by word into SP DMEM at the same offset,
leave $sp and $s3..$s7 as IPL2 does (ROM type 0 = cartridge, TV type 1 = NTSC,
reset type 0 = cold, CIC seed 0x3F = CIC-6102, version 0), and jump to the
IPL3 at 0xA4000040. The few MIPS instructions are encoded here, so a cen64 run
needs no cross assembler.
"""

from __future__ import annotations

import struct

PIF_ROM_SIZE = 2048
CART_IPL3 = 0xB0000040  # KSEG1 cartridge: ROM offset 0x40
CART_IPL3_END = 0xB0001000
DMEM_IPL3 = 0xA4000040  # KSEG1 SP DMEM at the same offset; the IPL3 runs there
STACK_TOP = 0xA4001FF0  # where IPL2 leaves $sp: the top of SP memory
ROM_TYPE, TV_TYPE, RESET_TYPE, CIC_SEED, VERSION = 0, 1, 0, 0x3F, 0

# MIPS register numbers.
ZERO, T0, T1, T2, T3, S3, S4, S5, S6, S7, SP = 0, 8, 9, 10, 11, 19, 20, 21, 22, 23, 29
_LUI, _ORI, _ADDIU, _LW, _SW, _BNE = 0x0F, 0x0D, 0x09, 0x23, 0x2B, 0x05
_JR = 0x08  # SPECIAL function


def _i_type(op: int, rs: int, rt: int, imm: int) -> int:
    return op << 26 | rs << 21 | rt << 16 | (imm & 0xFFFF)


def _load_address(reg: int, value: int) -> list[int]:
    """lui + ori: a 32-bit constant into ``reg``."""
    return [_i_type(_LUI, ZERO, reg, value >> 16), _i_type(_ORI, reg, reg, value & 0xFFFF)]


def _li(reg: int, value: int) -> int:
    """addiu reg, $zero, value (a small constant)."""
    return _i_type(_ADDIU, ZERO, reg, value)


def pif_program() -> list[int]:
    """The boot code as 32-bit instruction words."""
    code = [*_load_address(T0, CART_IPL3), *_load_address(T1, DMEM_IPL3),
            *_load_address(T2, CART_IPL3_END)]
    loop = len(code)
    code += [
        _i_type(_LW, T0, T3, 0),  # copy: lw $t3, 0($t0)
        _i_type(_ADDIU, T0, T0, 4),
        _i_type(_SW, T1, T3, 0),
    ]
    # bne $t0, $t2, copy (offset counted from the delay slot), then the delay slot.
    code.append(_i_type(_BNE, T0, T2, loop - (len(code) + 1)))
    code.append(_i_type(_ADDIU, T1, T1, 4))
    code += [*_load_address(SP, STACK_TOP), _li(S3, ROM_TYPE), _li(S4, TV_TYPE),
             _li(S5, RESET_TYPE), _li(S6, CIC_SEED), _li(S7, VERSION)]
    code += [*_load_address(T0, DMEM_IPL3), T0 << 21 | _JR, 0]  # jr $t0; nop
    return code


def pif_rom() -> bytes:
    """The 2 KiB PIF ROM image, big-endian, zero-padded."""
    code = pif_program()
    return struct.pack(f">{len(code)}I", *code).ljust(PIF_ROM_SIZE, b"\0")
