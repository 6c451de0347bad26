"""No unused code in the tool: vulture over dnn64build/ and rules/, with tools/ read as
users of it (the benchmarks and doc generators call into the package), at 60% confidence,
vulture's lowest: unused functions, methods, classes, properties, attributes, variables and
imports. Tests are not read, so code only tests call counts as unused (a helper tests need
lives in the tests). A name vulture cannot see used goes in tests/dead_code_allow.txt, with
the reason."""

from __future__ import annotations

from pathlib import Path

from vulture import Vulture

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("dnn64build", "rules")
USERS = ("tools",)
ALLOW_LIST = Path(__file__).with_name("dead_code_allow.txt")


def allowed_names() -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in ALLOW_LIST.read_text().splitlines())
    return [name for name in lines if name]


def test_allow_list_names_one_identifier_a_line() -> None:
    names = allowed_names()
    assert names and all(name.isidentifier() for name in names)
    assert len(set(names)) == len(names)


def test_no_unused_code() -> None:
    scan = Vulture(ignore_names=allowed_names())
    scan.scavenge([str(ROOT / d) for d in CHECKED + USERS])
    unused = [item.get_report().replace(f"{ROOT}/", "")
              for item in scan.get_unused_code(min_confidence=60)
              if Path(item.filename).resolve().relative_to(ROOT).parts[0] in CHECKED]
    assert not unused, ("unused code (remove it; if it is used where vulture cannot see, add "
                        "its name and why to tests/dead_code_allow.txt):\n" + "\n".join(unused))
