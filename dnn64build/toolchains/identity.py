"""A toolchain's identity: which compiler, which version. Part of every command's inputs
(a different compiler rebuilds) and of every remote cache key (a different version never
shares results)."""

from __future__ import annotations

import os
import subprocess

from dnn64build.toolchains.base import Toolchain


def identity_text(toolchain: Toolchain) -> str:
    """``name``, the resolved compiler path and its ``--version`` output, one per line."""
    proc = subprocess.run([toolchain.cc, "--version"], capture_output=True, text=True,
                          check=False)
    version = (proc.stdout or proc.stderr).strip()
    return f"toolchain {toolchain.name}\ncompiler {toolchain.cc}\n{version}\n"


def portable_identity(text: str) -> str:
    """``identity_text`` without the machine-specific part (the compiler's directory)."""
    lines = text.splitlines()
    return "\n".join(
        f"compiler {os.path.basename(line.removeprefix('compiler '))}"
        if line.startswith("compiler ") else line
        for line in lines
    ) + "\n"
