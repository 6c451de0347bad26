"""What every stage needs: its parsed command line, its config, and atomic outputs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dnn64build.atomic_write import write_atomic, write_if_changed
from dnn64build.build_outputs import load_json


@dataclass(frozen=True)
class StageArgs:
    """A stage's config (the target attributes it uses) and its named input/output paths."""

    config: dict[str, Any]
    inputs: dict[str, list[Path]]
    outputs: dict[str, Path]
    depfile: Path | None = None  # given to stages that list the files they read

    def input(self, name: str) -> Path:
        """The one file given for input ``name``."""
        (path,) = self.inputs[name]
        return path

    def optional_input(self, name: str) -> Path | None:
        return self.input(name) if name in self.inputs else None

    def write(self, name: str, data: bytes) -> None:
        """Write output ``name`` atomically, leaving it untouched if unchanged."""
        write_if_changed(self.outputs[name], data)

    def write_text(self, name: str, text: str) -> None:
        self.write(name, text.encode("utf-8"))

    def write_json(self, name: str, value: Any) -> None:
        self.write_text(name, json.dumps(value, indent=1, sort_keys=True) + "\n")

    def write_depfile(self, read: list[Path]) -> None:
        """Tell ninja every file this run read (Makefile syntax, as gcc -MD writes it)."""
        assert self.depfile is not None, "the stage's StageSpec must name its reads"
        write_depfile(self.depfile, list(self.outputs.values()), read)


def parse_stage_args(argv: list[str]) -> StageArgs:
    """``--config FILE --in NAME=PATH ... --out NAME=PATH ...`` (names may repeat for --in)."""
    config: dict[str, Any] = {}
    inputs: dict[str, list[Path]] = {}
    outputs: dict[str, Path] = {}
    depfile: Path | None = None
    it = iter(argv)
    for flag in it:
        value = next(it)
        if flag == "--config":
            config = load_json(value)  # a damaged config is a clean error naming it
        elif flag == "--in":
            name, _, path = value.partition("=")
            inputs.setdefault(name, []).append(Path(path))
        elif flag == "--out":
            name, _, path = value.partition("=")
            outputs[name] = Path(path)
        elif flag == "--depfile":
            depfile = Path(value)
        else:
            raise SystemExit(f"stage: unknown argument {flag!r}")
    return StageArgs(config, inputs, outputs, depfile)


def write_depfile(depfile: Path, outputs: list[Path], read: list[Path]) -> None:
    """A depfile saying that ``outputs`` were made from the files ``read``."""
    targets = " ".join(_depfile_escape(str(p)) for p in sorted(outputs))
    deps = " ".join(_depfile_escape(str(p)) for p in read)
    write_atomic(depfile, f"{targets}: {deps}\n".encode())


def _depfile_escape(path: str) -> str:
    """A path as ninja's depfile parser reads it back: spaces and '#' backslashed, '$'
    doubled; a newline cannot be written."""
    if "\n" in path:
        raise ValueError(f"a path with a newline cannot go into a depfile: {path!r}")
    return path.replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")
