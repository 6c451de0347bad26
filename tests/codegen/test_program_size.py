"""The plan stage's program-size estimate (dnn64build.codegen.program_size): its kernel table
holds what the bare toolchain builds now, and on real builds the estimate is at least the
linked program (what the pack stage's post-link check reads from the ELF) and within a
stated factor of it."""

from __future__ import annotations

import pytest

from dnn64build.codegen.program_size import kernel_table
from dnn64build.errors import UserError
from dnn64build.toolchains import BareToolchain
from tests.tool_required import missing_tool

MAX_FACTOR = 1.5  # the estimate / linked-program ratio docs/planner.md states (measured <= 1.4)


@pytest.fixture(scope="module")
def bare() -> BareToolchain:
    try:
        return BareToolchain()
    except UserError as exc:
        missing_tool(exc)


def test_kernel_table_is_not_below_the_objects_built_now(bare, tmp_path) -> None:
    """Compiles every kernel and platform source with the bare toolchain: no object is
    bigger than the table says, and the functions and calls between objects agree (rerun
    tools/kernel_sizes.py after changing a kernel)."""
    from tools.kernel_sizes import measure

    now, table = measure(tmp_path), kernel_table()
    assert now["platform_bytes"] <= table["platform_bytes"]
    assert sorted(now["kernels"]) == sorted(table["kernels"])
    for name, entry in now["kernels"].items():
        stored = table["kernels"][name]
        assert entry["bytes"] <= stored["bytes"], name
        assert (entry["defines"], entry["needs"]) == (stored["defines"], stored["needs"]), name


@pytest.mark.slow
def test_estimate_covers_the_linked_program(bare, tmp_path) -> None:
    """Builds small zoo models for bare through the CLI, as tools/bench/bench_program_size.py
    does: the plan's estimate is >= the linked program and at most MAX_FACTOR times it."""
    from tools.bench.bench_program_size import measure, write_workspace

    entries = [("mlp_mnist", "fp32"), ("mlp_mnist", "int8"), ("squeezenet", "int8")]
    write_workspace(tmp_path, entries)
    for name, mode in entries:
        row = measure(tmp_path, name, mode)
        assert row["real"] <= row["estimate_bytes"] <= MAX_FACTOR * row["real"], (name, mode)
