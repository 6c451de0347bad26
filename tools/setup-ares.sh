#!/bin/sh
# tools/setup-ares.sh - build ares (the accurate N64 emulator libdragon recommends) for
# `--platform ares` and the `libdragon` test tier.
#
# Usage: tools/setup-ares.sh ARES_CHECKOUT [PREFIX]
#
# ARES_CHECKOUT is a checkout of the public repository ares-emulator/ares with the GNU make
# build (tag v141 is known to work; later releases build with CMake). Only the N64 core is
# built, without Vulkan, librashader or LTO. Debian's own ares package has no N64 core.
# PREFIX (default: ${XDG_CACHE_HOME:-$HOME/.cache}/dnn64build/ares) receives bin/ares with
# the Database/ and Shaders/ directories ares reads beside its executable, and a link to
# xvfb-run; point DNN64_ARES_BINDIR at PREFIX/bin.
#
# Idempotent: apt is skipped when every package is installed and make rebuilds only what
# changed. Missing Debian packages are installed when run as root.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 ARES_CHECKOUT [PREFIX]" >&2
    exit 2
fi
CHECKOUT=$(cd "$1" && pwd)
PREFIX="${2:-${XDG_CACHE_HOME:-$HOME/.cache}/dnn64build/ares}"

if [ ! -f "$CHECKOUT/desktop-ui/GNUmakefile" ]; then
    echo "setup-ares.sh: $CHECKOUT has no desktop-ui/GNUmakefile; give a checkout of" \
         "ares-emulator/ares with the GNU make build (e.g. tag v141)" >&2
    exit 1
fi

# Headers and libraries the desktop UI links against, the compiler, and the virtual X
# server ares runs under when headless.
PACKAGES="make g++ pkg-config libgtk-3-dev libsdl2-dev libasound2-dev libgl-dev libxv-dev \
libao-dev libopenal-dev libpulse-dev libudev-dev xvfb xauth"

. "$(dirname "$0")/debian_packages.sh"
# shellcheck disable=SC2086  # word splitting of the package list is intended
install_missing "setup-ares.sh: [1/3]" $PACKAGES

JOBS=$(nproc 2>/dev/null || echo 1)
echo "setup-ares.sh: [2/3] building the N64 core in $CHECKOUT/desktop-ui ($JOBS jobs; minutes)"
start=$(date +%s)
nice -n 10 make -C "$CHECKOUT/desktop-ui" -j"$JOBS" build=optimized local=false lto=false \
    vulkan=false librashader=false cores=n64 compiler=g++
echo "setup-ares.sh: built in $(( $(date +%s) - start )) s"

echo "setup-ares.sh: [3/3] installing into $PREFIX/bin"
mkdir -p "$PREFIX/bin"
cp -R "$CHECKOUT/desktop-ui/out/." "$PREFIX/bin/"
# DNN64_ARES_BINDIR replaces PATH in the search (third_party/ares.yaml): xvfb-run goes beside.
ln -sf "$(command -v xvfb-run)" "$PREFIX/bin/xvfb-run"
echo "setup-ares.sh: done: $PREFIX/bin/ares"
echo "setup-ares.sh: use it with: export DNN64_ARES_BINDIR=$PREFIX/bin"
