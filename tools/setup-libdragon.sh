#!/bin/sh
# tools/setup-libdragon.sh - build a libdragon toolchain (mips64-elf binutils, gcc, newlib,
# libdragon and its host tools) from Debian's source packages, for `toolchain: libdragon`
# and the `libdragon` test tier.
#
# Usage: tools/setup-libdragon.sh LIBDRAGON_CHECKOUT [PREFIX]
#
# LIBDRAGON_CHECKOUT is a checkout of the public repository DragonMinded/libdragon (commit
# 535d75170238 is known to work). PREFIX (default:
# ${XDG_CACHE_HOME:-$HOME/.cache}/dnn64build/libdragon-toolchain) receives the toolchain;
# it is the N64_INST libdragon's n64.mk reads. Debian's binary cross compilers cannot serve:
# their libgcc is o32 MIPS32r2 code, libdragon links o64 objects for the VR4300.
#
# Sources: binutils-source (2.40), gcc-12-source (12.2), newlib-source (3.3.0). gcc is built
# for C and C++: libdragon.a holds a C++ object and n64.mk links with mips64-elf-g++, which
# needs libstdc++. One ABI only (o64, mips64-elf's default), tuned for the VR4300.
#
# Resumable: each finished step leaves a stamp in PREFIX/.stamps and a second run skips it
# (delete a stamp to redo its step); a failed step resumes its make where it stopped.
# Sources and build trees are under PREFIX/build, logs under PREFIX/logs. Missing Debian packages are installed when run as root.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 LIBDRAGON_CHECKOUT [PREFIX]" >&2
    exit 2
fi
CHECKOUT=$(cd "$1" && pwd)
TOOLS_DIR=$(cd "$(dirname "$0")" && pwd)
PREFIX="${2:-${XDG_CACHE_HOME:-$HOME/.cache}/dnn64build/libdragon-toolchain}"

if [ ! -f "$CHECKOUT/n64.mk" ] || [ ! -f "$CHECKOUT/Makefile" ]; then
    echo "setup-libdragon.sh: $CHECKOUT has no n64.mk; give a checkout of" \
         "DragonMinded/libdragon" >&2
    exit 1
fi

mkdir -p "$PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
BUILD="$PREFIX/build"
STAMPS="$PREFIX/.stamps"
LOGS="$PREFIX/logs"
mkdir -p "$BUILD" "$STAMPS" "$LOGS"
TARGET=mips64-elf
JOBS=$(nproc 2>/dev/null || echo 1)
export PATH="$PREFIX/bin:$PATH"
export N64_INST="$PREFIX"
START=$(date +%s)

# step NAME DESCRIPTION FUNCTION: runs FUNCTION once (stamped), its output in LOGS/NAME.log.
step() {
    if [ -f "$STAMPS/$1" ]; then
        echo "setup-libdragon.sh: [$1] already done ($(cat "$STAMPS/$1"))"
        return 0
    fi
    echo "setup-libdragon.sh: [$1] $2 (log: $LOGS/$1.log)"
    began=$(date +%s)
    # A subshell outside any condition, so that set -e stops the step at its first failure.
    set +e
    (set -e; "$3") > "$LOGS/$1.log" 2>&1
    status=$?
    set -e
    if [ $status -ne 0 ]; then
        echo "setup-libdragon.sh: [$1] failed after $(( $(date +%s) - began )) s;" \
             "last lines of $LOGS/$1.log:" >&2
        tail -n 20 "$LOGS/$1.log" >&2
        exit 1
    fi
    echo "$(( $(date +%s) - began )) s" > "$STAMPS/$1"
    echo "setup-libdragon.sh: [$1] done in $(cat "$STAMPS/$1")" \
         "(total $(( $(date +%s) - START )) s)"
}

# unpack TARBALL DIR [PATCH]: extracts TARBALL into BUILD/DIR (its top directory renamed),
# then applies PATCH (-p2); kept when a former run got that far.
unpack() {
    if [ -f "$BUILD/$2/.dnn64-unpacked" ]; then
        return 0
    fi
    rm -rf "$BUILD/$2" "$BUILD/unpack"
    mkdir -p "$BUILD/unpack"
    tar -xf "$1" -C "$BUILD/unpack"
    mv "$BUILD/unpack/"* "$BUILD/$2"
    rmdir "$BUILD/unpack"
    if [ $# -gt 2 ]; then
        patch -d "$BUILD/$2" -p2 < "$3"
    fi
    touch "$BUILD/$2/.dnn64-unpacked"
}

# configure DIR SOURCE ARGS...: enters the build directory BUILD/DIR and runs SOURCE's
# configure there once; a rerun after a failed make resumes the make.
configure() {
    mkdir -p "$BUILD/$1"
    cd "$BUILD/$1"
    if [ ! -f .dnn64-configured ]; then
        source="$BUILD/$2"
        shift 2
        "$source/configure" "$@"
        touch .dnn64-configured
    fi
}

packages() {
    . "$TOOLS_DIR/debian_packages.sh"
    install_missing "setup-libdragon.sh: [packages]" binutils-source gcc-12-source \
        newlib-source build-essential libgmp-dev libmpfr-dev libmpc-dev zlib1g-dev texinfo \
        flex bison
}

binutils() {
    unpack /usr/src/binutils/binutils-2.40.tar.xz binutils-src
    configure binutils-build binutils-src --prefix="$PREFIX" --target=$TARGET \
        --with-cpu=mips64vr4300 --disable-werror --disable-nls
    make -j"$JOBS"
    make install-strip
}

gcc_stage1() {
    # The dfsg tarball lacks the GFDL texinfo sources; Debian's patch stubs out their use.
    unpack /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz gcc-src \
        /usr/src/gcc-12/debian/patches/gcc-gfdl-build.diff
    # The compiler itself is built -O1 without debug information and without LTO support
    # (n64.mk uses none), to shorten the longest step; its code is the same.
    export CFLAGS="-O1 -g0" CXXFLAGS="-O1 -g0"
    configure gcc-build gcc-src --prefix="$PREFIX" \
        --target=$TARGET --with-arch=vr4300 --with-tune=vr4300 --enable-languages=c,c++ \
        --without-headers --with-newlib --disable-multilib --disable-shared \
        --disable-libssp --disable-libquadmath --disable-lto --disable-nls --disable-werror \
        --with-system-zlib
    make -j"$JOBS" all-gcc
    make install-strip-gcc
    make -j"$JOBS" all-target-libgcc
    make install-target-libgcc
}

newlib() {
    unpack /usr/src/newlib/newlib-3.3.0.tar.xz newlib-src
    # libdragon provides the locks and the assert hook newlib calls.
    export CFLAGS_FOR_TARGET="-DHAVE_ASSERT_FUNC -O2"
    configure newlib-build newlib-src --prefix="$PREFIX" --target=$TARGET \
        --with-cpu=mips64vr4300 --disable-libssp --disable-werror --enable-newlib-multithread --enable-newlib-retargetable-locking
    make -j"$JOBS"
    make install
}

libstdcxx() {
    cd "$BUILD/gcc-build"
    make -j"$JOBS" all-target-libstdc++-v3
    make install-target-libstdc++-v3
}

libdragon() {
    make -C "$CHECKOUT" install-mk
    make -C "$CHECKOUT" -j"$JOBS" libdragon
    make -C "$CHECKOUT" install
}

# The host tools n64.mk calls to make a ROM (the graphics and audio converters are not
# needed by dnn64build; `make -C LIBDRAGON_CHECKOUT tools-install` adds them).
tools() {
    make -C "$CHECKOUT/tools" -j"$JOBS" n64tool-install n64sym-install \
        n64elfcompress-install mkdfs-install mkasset-install
}

step packages "Debian source packages and build dependencies" packages
step binutils "binutils 2.40 for $TARGET (minutes)" binutils
step gcc "gcc 12.2 (C, C++) and libgcc for $TARGET (about an hour on 2 cores)" gcc_stage1
step newlib "newlib 3.3.0" newlib
step libstdcxx "libstdc++ for $TARGET" libstdcxx
step libdragon "libdragon from $CHECKOUT" libdragon
step tools "libdragon's host tools (n64tool, n64sym, n64elfcompress, mkdfs, mkasset)" tools

echo "setup-libdragon.sh: done in $(( $(date +%s) - START )) s: $PREFIX"
echo "setup-libdragon.sh: use it with: export N64_INST=$PREFIX"
