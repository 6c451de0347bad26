"""What a linked program occupies in memory, read from its ELF section headers.

Only the section header table is read (struct, no ELF library): the allocated sections
(SHF_ALLOC), their addresses and sizes. ELF32 and ELF64, either byte order. The sections
are summed by kind as ``size`` (binutils) does: code, read-only data, initialised data and
zero-initialised data (.bss, which holds the static arena).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from dnn64build.errors import UserError

SHF_ALLOC = 0x2
SHT_NOBITS = 8
# (header: shoff, shentsize/shnum/shstrndx offsets), (section: type, flags, addr, size)
_LAYOUT = {
    1: ("I", 0x20, 0x2E, "IIIIII"),  # ELF32: name type flags addr offset size
    2: ("Q", 0x28, 0x3A, "IIQQQQ"),  # ELF64
}


@dataclass(frozen=True)
class ProgramSize:
    """Bytes of each kind of allocated section, and the address range they span."""

    text: int
    rodata: int
    data: int
    bss: int
    start: int  # lowest allocated address
    end: int  # one past the highest allocated byte (alignment gaps included)


def program_size(path: Path) -> ProgramSize:
    """The allocated sections of the ELF file ``path``, summed by kind."""
    blob = Path(path).read_bytes()
    if blob[:4] != b"\x7fELF" or blob[4] not in _LAYOUT or blob[5] not in (1, 2):
        raise UserError("not an ELF file", where=str(path))
    order = "<" if blob[5] == 1 else ">"
    word, shoff_at, counts_at, section = _LAYOUT[blob[4]]
    (shoff,) = struct.unpack_from(order + word, blob, shoff_at)
    entsize, count, names_index = struct.unpack_from(order + "HHH", blob, counts_at)
    headers = [struct.unpack_from(order + section, blob, shoff + i * entsize)
               for i in range(count)]
    names_offset = headers[names_index][4]
    sums = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    spans = []
    for name_at, kind, flags, addr, _, size in headers:
        if not flags & SHF_ALLOC or size == 0:
            continue
        end = blob.index(b"\0", names_offset + name_at)
        name = blob[names_offset + name_at:end].decode("ascii", "replace")
        sums[_kind(name, kind)] += size
        spans.append((addr, addr + size))
    if not spans:
        raise UserError("the linked program has no allocated sections", where=str(path))
    return ProgramSize(**sums, start=min(s for s, _ in spans), end=max(e for _, e in spans))


def _kind(name: str, section_type: int) -> str:
    if section_type == SHT_NOBITS:
        return "bss"
    if name.startswith(".text") or name in (".init", ".fini"):
        return "text"
    if name.startswith((".rodata", ".lit")):
        return "rodata"
    return "data"
