"""Run a host-built dnn64 program, its asset area read from a file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dnn64build.emulator.process import RunResult, run_until
from dnn64build.errors import UserError
from dnn64build.run_protocol import DONE_LINE, FAIL_PREFIX, ends_program


def run_host(
    program: Path,
    assets: Path | None = None,
    *,
    timeout: float = 60.0,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Run ``program`` with DNN64_ASSETS=``assets`` (an asset image or a .z64).

    Returns its lines before DNN64-DONE; UserError on DNN64-FAIL, a crash, or
    the time limit.
    """
    program = Path(program)
    run_env = dict(os.environ if env is None else env)
    if assets is not None:
        run_env["DNN64_ASSETS"] = str(Path(assets).resolve())
    capture = run_until(
        [str(program.resolve())],
        stop=ends_program,
        timeout=timeout,
        env=run_env,
    )
    lines = capture.lines
    if capture.timed_out:
        raise UserError(
            f"no {DONE_LINE} line within the {timeout:g} s time limit", where=str(program)
        )
    if not capture.stopped:
        raise UserError(
            f"program exited (status {capture.returncode}) before {DONE_LINE}",
            where=str(program),
            hint="last output:\n" + "\n".join("    " + line for line in lines[-15:]),
        )
    if lines[-1].startswith(FAIL_PREFIX):
        raise UserError(f"the program failed: {lines[-1]}", where=str(program))
    return RunResult(tuple(lines[:-1]), capture.seconds)
