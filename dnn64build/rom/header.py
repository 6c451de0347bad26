"""The 64-byte cartridge header (big-endian; N64-NOTES.md "ROM layout")."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from dnn64build.errors import UserError
from dnn64build.rom import layout

TITLE_SIZE = 20


def title_problem(title: str) -> str | None:
    """What is wrong with ``title`` as a cartridge title, or None."""
    if len(title) > TITLE_SIZE or not all(" " <= c <= "~" for c in title):
        return f"ROM title {title!r} must be at most {TITLE_SIZE} printable ASCII characters"
    return None


@dataclass(frozen=True)
class RomHeader:
    """Header fields a user may choose. CRCs are filled in by the packer."""

    title: str = "DNN64"
    game_id: str = "DN"
    region: str = "E"
    version: int = 0

    def validate(self, where: str | None = None) -> None:
        problem = title_problem(self.title)
        if problem:
            raise UserError(problem, where=where)
        if len(self.game_id) != 2 or not self.game_id.isascii() or not self.game_id.isalnum():
            raise UserError(
                f"game id {self.game_id!r} must be 2 ASCII letters or digits", where=where
            )
        if len(self.region) != 1 or not self.region.isascii() or not self.region.isalpha():
            raise UserError(
                f"region {self.region!r} must be one ASCII letter (e.g. E, J, P)", where=where
            )
        if not 0 <= self.version <= 255:
            raise UserError(f"ROM version {self.version} must be 0..255", where=where)

    @classmethod
    def decode(cls, data: bytes) -> RomHeader:
        """The user-chosen fields of a packed ROM's header (the inverse of ``encode``)."""
        *_, title, _media, game_id, region, version = struct.unpack(
            ">IIII II 8x 20s 7x c 2s c B", data[: layout.HEADER_SIZE]
        )
        return cls(title.decode("ascii").rstrip(" "), game_id.decode("ascii"),
                   region.decode("ascii"), version)

    def encode(self, crc1: int = 0, crc2: int = 0) -> bytes:
        """The 64 header bytes, with the given CRCs."""
        self.validate()
        return struct.pack(
            ">IIII II 8x 20s 7x c 2s c B",
            layout.PI_CONFIG,
            layout.CLOCK_RATE,
            layout.BOOT_ADDRESS,
            0,  # libultra version: none
            crc1,
            crc2,
            self.title.ljust(TITLE_SIZE).encode("ascii"),
            b"N",
            self.game_id.encode("ascii"),
            self.region.encode("ascii"),
            self.version,
        )
