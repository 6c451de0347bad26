#!/bin/sh
# tools/setup.sh - set up a fresh Debian machine for dnn64build (run as root).
#
# Installs the host C compiler (the `host` toolchain and the exact allocator's
# compiled core), the MIPS cross compiler (the `bare` toolchain), mupen64plus (runs
# ROMs headless), cen64 with xvfb and xauth (cycle-accurate runs under a virtual
# X server) and qemu-user (big-endian MIPS unit tests), then installs
# dnn64build itself, editable, with its test extras. Idempotent: apt is
# skipped when every package is already installed. Tool descriptors: third_party/.
#
# Environment: PYTHON (default: python3) picks the interpreter to install into;
# on Debian's own python3 (PEP 668) use a virtual environment's python.
set -eu

PACKAGES="make gcc gcc-mips-linux-gnu binutils-mips-linux-gnu mupen64plus-ui-console mupen64plus-rsp-z64 qemu-user cen64 xvfb xauth nginx"
PYTHON="${PYTHON:-python3}"
REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)

. "$(dirname "$0")/debian_packages.sh"
# shellcheck disable=SC2086  # word splitting of the package list is intended
install_missing "setup.sh" $PACKAGES

cd "$REPO_ROOT"
"$PYTHON" -m pip install -q -e '.[test]'
echo "setup.sh: done"
