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
from dnn64build.toolchains.tools import FoundTool, find_tool, selecting_variables

TOOLCHAINS = ("auto", "bare", "host", "libdragon")
_CLASSES = {cls.name: cls for cls in (BareToolchain, HostToolchain, LibdragonToolchain)}


def auto_toolchain(n64_inst: str | None) -> str:
    """What ``auto`` means: libdragon where $N64_INST is set, else the SDK-free bare one."""
    return "libdragon" if n64_inst else "bare"


def toolchain_variables(name: str) -> tuple[str, ...]:
    """The environment variables that decide which executables toolchain ``name`` runs."""
    return selecting_variables(_CLASSES[name].tools)


def toolchain_executables(name: str, env: Mapping[str, str]) -> dict[str, str]:
    """The executables toolchain ``name`` would run under ``env`` (role -> path; empty when
    one is missing: the action that needs it says so when it runs)."""
    try:
        found = find_tool(_CLASSES[name].tools, env=env, check_version=False)
    except UserError:
        return {}
    return {role: str(path) for role, path in sorted(found.paths.items())}


def find_toolchain(name: str, *, env: Mapping[str, str] | None = None) -> Toolchain:
    """The toolchain called ``name``, its tools located; UserError if missing."""
    env = os.environ if env is None else env
    if name == "auto":
        name = auto_toolchain(env.get("N64_INST"))
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
    "auto_toolchain",
    "find_tool",
    "find_toolchain",
]
