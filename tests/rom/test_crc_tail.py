"""The IPL3-area CRC that cen64 needs, checked with zlib."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from dnn64build.errors import UserError
from dnn64build.rom import pad_boot_stub
from dnn64build.rom.crc_tail import CIC_6102_IPL3_CRC, crc32_tail


@pytest.mark.parametrize("length", [0, 1, 3, 4, 61, 4028])
def test_the_tail_gives_any_chosen_crc(length: int) -> None:
    rng = np.random.default_rng(length)
    prefix = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
    for target in (0, 0xFFFFFFFF, CIC_6102_IPL3_CRC, int(rng.integers(0, 2**32))):
        assert zlib.crc32(prefix + crc32_tail(prefix, target)) == target


def test_the_padded_boot_stub_is_recognised_as_cic_6102() -> None:
    stub = bytes(range(200))
    ipl3 = pad_boot_stub(stub)
    assert len(ipl3) == 0xFC0 and ipl3.startswith(stub)
    assert zlib.crc32(ipl3) == 0x90BB6CB5  # cen64's CIC-6102 value (N64-NOTES.md)


def test_a_stub_must_leave_the_last_word_free() -> None:
    pad_boot_stub(bytes(0xFBC))
    with pytest.raises(UserError, match="boot stub is 4029 bytes"):
        pad_boot_stub(bytes(0xFBD))
