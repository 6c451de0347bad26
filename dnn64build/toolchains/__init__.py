"""Toolchains: argv lists that build a dnn64 program for host, bare N64 or libdragon.

``find_toolchain("auto")`` picks libdragon when $N64_INST is set, else bare
(it never silently falls back to host: a host binary is not a ROM).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from dnn64build.errors import UserError
from dnn64build.toolchains.bare import BareToolchain
from dnn64build.toolchains.base import Toolchain
from dnn64build.toolchains.host import HostToolchain
from dnn64build.toolchains.libdragon import LibdragonToolchain
from dnn64build.toolchains.tools import FoundTool, find_tool

TOOLCHAINS = ("auto", "bare", "host", "libdragon")


def find_toolchain(name: str, *, env: Mapping[str, str] | None = None) -> Toolchain:
    """The toolchain called ``name``, its tools located; UserError if missing."""
    env = os.environ if env is None else env
    if name == "auto":
        name = "libdragon" if env.get("N64_INST") else "bare"
    if name == "bare":
        return BareToolchain(env=env)
    if name == "host":
        return HostToolchain(env=env)
    if name == "libdragon":
        return LibdragonToolchain(env=env)
    raise UserError(f"unknown toolchain {name!r}", hint="use one of " + ", ".join(TOOLCHAINS))


__all__ = [
    "BareToolchain",
    "FoundTool",
    "HostToolchain",
    "LibdragonToolchain",
    "TOOLCHAINS",
    "Toolchain",
    "find_tool",
    "find_toolchain",
]
