"""The ``dnn64build`` command line.

Every command starts by importing this module: what only one command needs is imported in
that command's function, so that a no-op build stays a few milliseconds over Python's own
start-up."""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
from pathlib import Path

from dnn64build import __version__
from dnn64build.commands.platforms import EMULATOR, PLATFORMS
from dnn64build.errors import UserError, machine_error


def _cmd_build(args: argparse.Namespace) -> int:
    from dnn64build.commands.build import CacheFlags, build

    build(args.targets, jobs=args.jobs, verbose=args.verbose, cache=CacheFlags(
        args.remote_cache, args.remote_cache_read_only or None, args.remote_cache_timeout,
        args.explain, args.remote_header,
    ))
    return 0


def _seconds(text: str) -> float:
    """argparse's type for a timeout: one clear message for inf, nan, -5 or abc."""
    from dnn64build.remote_cache.settings import seconds

    try:
        return seconds(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _bandwidth(text: str) -> float:
    """argparse's type for --cartridge-mbps: a positive, finite number."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"not a positive number of MB/s: {text!r}")
    return value


def _cmd_query(args: argparse.Namespace) -> int:
    from dnn64build.graph.runner import current_index
    from dnn64build.workspace.query import evaluate_query

    _, index = current_index(Path.cwd())
    for label in evaluate_query(args.expression, index["targets"], index["kinds"]):
        print(label)
    return 0


def _cmd_clean(args: argparse.Namespace) -> int:
    import shutil
    import subprocess

    from dnn64build.graph.runner import ninja_binary, workspace_lock
    from dnn64build.workspace.root import OUTPUT_BASE, find_root, output_base_problem

    root = find_root(Path.cwd())
    out = root / OUTPUT_BASE
    with workspace_lock(root):  # held until dnn64-out/ is gone: no build sees it half-deleted
        if not out.exists() and not out.is_symlink():
            return 0
        if args.expunge:  # also the way out when dnn64-out is a file or a dangling link
            try:
                if out.is_dir() and not out.is_symlink():
                    shutil.rmtree(out)
                else:
                    out.unlink()
            except OSError as e:
                raise UserError(f"cannot remove {e.filename or out}: {e.strerror}") from None
        elif problem := output_base_problem(root):
            raise UserError(f"cannot clean: {problem}",
                            hint=f"dnn64build clean --expunge removes {OUTPUT_BASE} whole")
        elif (out / "build.ninja").exists():
            subprocess.run([ninja_binary(), "-C", str(out), "-t", "clean"], check=True,
                           stdout=subprocess.DEVNULL)
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from dnn64build.commands.plan import plan_command

    return plan_command(args.target, as_json=args.json)


def _cmd_plan_buffers(args: argparse.Namespace) -> int:
    from dnn64build.commands.plan import plan_buffers_command

    return plan_buffers_command(args.problem, args.algorithm, args.capacity, args.output,
                                budget=args.budget, timeout=args.timeout,
                                first_fit=args.first_fit)


def _cmd_run(args: argparse.Namespace) -> int:
    from dnn64build.commands.run import run_command

    return run_command(args.target, platform=args.platform, input_path=args.input,
                       output_path=args.output, timeout=args.timeout,
                       cartridge_bytes_per_s=args.cartridge_mbps * 1e6)


def _cmd_test(args: argparse.Namespace) -> int:
    from dnn64build.commands.run import test_command

    return test_command(args.targets, platform=args.platform, timeout=args.timeout)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dnn64build",
        description="Compile ONNX neural networks into Nintendo 64 ROMs.",
    )
    p.add_argument("--version", action="version", version=f"dnn64build {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("build", help="build targets (labels or patterns such as //...)")
    b.add_argument("targets", nargs="+", metavar="LABEL_OR_PATTERN")
    b.add_argument("-j", "--jobs", type=int, help="parallel actions (default: ninja's)")
    b.add_argument("-v", "--verbose", action="store_true", help="show every command")
    b.add_argument("--remote-cache", metavar="URL",
                   help="share action results through this Bazel-protocol HTTP cache "
                   "(default: $DNN64_REMOTE_CACHE)")
    b.add_argument("--remote-cache-read-only", action="store_true",
                   help="use the cache's results but upload nothing "
                   "(default: $DNN64_REMOTE_CACHE_READ_ONLY)")
    b.add_argument("--remote-cache-timeout", type=_seconds, metavar="SECONDS",
                   help="give up on a cache request after this long in all (default 10)")
    b.add_argument("--remote-header", action="append", metavar="NAME=VALUE",
                   help="send this header to the cache, e.g. Authorization=Bearer TOKEN; "
                   "repeatable (default: $DNN64_REMOTE_HEADER, one per line)")
    b.add_argument("--explain", action="store_true",
                   help="say why each action ran (what changed; remote cache hit or miss)")
    b.set_defaults(func=_cmd_build)

    q = sub.add_parser("query", help="list targets: //..., deps(X), rdeps(X), kind(RULE, X)")
    q.add_argument("expression")
    q.set_defaults(func=_cmd_query)

    c = sub.add_parser("clean", help="remove build outputs")
    c.add_argument("--expunge", action="store_true", help="remove the whole dnn64-out/")
    c.set_defaults(func=_cmd_clean)

    pl = sub.add_parser("plan", help="build a model up to its memory plan and report it")
    pl.add_argument("target", metavar="LABEL")
    pl.add_argument("--json", action="store_true", help="print plan.json")
    pl.set_defaults(func=_cmd_plan)

    pb = sub.add_parser("plan-buffers", help="plan a standalone CSV problem (id,lower,upper,size)")
    pb.add_argument("problem", type=Path)
    pb.add_argument("--algorithm", default="auto")
    pb.add_argument("--capacity", type=int, help="fail if the arena exceeds this many bytes")
    pb.add_argument("-o", "--output", type=Path, help="where to write the CSV with offsets "
                    "(default: PROBLEM with .out.csv)")
    pb.add_argument("--budget", type=int, help="work units for the exact search (exact, auto; "
                    "default 6000000, under a second); the result depends only on it")
    pb.add_argument("--timeout", type=float, default=60.0, help="seconds before the exact "
                    "search stops with the best plan found (default 60)")
    pb.add_argument("--first-fit", action="store_true", help="with --capacity: stop the "
                    "exact search at the first plan that fits instead of minimising the arena "
                    "(the decision problem, as MiniMalloc's benchmarks pose it)")
    pb.set_defaults(func=_cmd_plan_buffers)

    for name, helptext, func in (
        ("run", "build a target and run it on the host or in the emulator", _cmd_run),
        ("test", "run every target that declares test inputs and compare outputs", _cmd_test),
    ):
        r = sub.add_parser(name, help=helptext)
        if name == "run":
            r.add_argument("target", metavar="LABEL")
            r.add_argument("--input", type=Path, help=".npz keyed by the model's input names")
            r.add_argument("--output", type=Path, help="write the outputs here (.npz)")
            r.add_argument("--cartridge-mbps", type=_bandwidth, default=5.0, metavar="MB/S",
                           help="Game Pak bandwidth of the cartridge-aware time "
                           "(--platform cen64; default 5, the PI's documented average)")
        else:
            r.add_argument("targets", nargs="+", metavar="LABEL_OR_PATTERN")
        r.add_argument("--platform", choices=PLATFORMS, default=EMULATOR,
                       help="host: native build; emulator: mupen64plus (fast); "
                       "cen64: cycle-accurate, reports CPU cycles; ares: accurate, needs a "
                       "signed ipl3: (tools/setup-ares.sh builds it)")
        r.add_argument("--timeout", type=float, default=300.0,
                       help="seconds before an emulator run is stopped")
        r.set_defaults(func=func)
    return p


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised like Ctrl-C's KeyboardInterrupt so that the same cleanup
    runs: emulators and ninja stopped, temporary directories removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, _frame: object) -> None:
    for sig in _TERMINATING:  # a second signal must not cut the cleanup short
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signum)


_TERMINATING = (signal.SIGTERM, signal.SIGHUP)


# numpy's BLAS starts a thread per core in every stage, and they fight ninja's parallel
# actions for the cores: under load a Conv of the reference ran 5x slower with them.
# One each (inherited by ninja, the worker and every action) unless the user set them.
ONE_THREAD_MATH = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    for name, value in ONE_THREAD_MATH.items():
        os.environ.setdefault(name, value)
    for sig in _TERMINATING:
        if signal.getsignal(sig) == signal.SIG_DFL:  # nohup's SIG_IGN stays
            signal.signal(sig, _terminate)
    try:
        return args.func(args)
    except UserError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dnn64build: interrupted", file=sys.stderr)
        return 130
    except Terminated as e:
        print(f"dnn64build: stopped by {signal.Signals(e.signum).name}", file=sys.stderr)
        return 128 + e.signum
    except Exception as e:
        if (machine := machine_error(e)) is not None:  # a full disk, ...
            print(f"ERROR: {machine}", file=sys.stderr)
            return 1
        import traceback

        traceback.print_exc()
        print("dnn64build: internal error: this is a bug in dnn64build, please report it with "
              "the traceback above", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
