#!/usr/bin/env bash
# What a user does with an installed gshmem, checked against a fresh install into a temporary
# DESTDIR: README's "Using it" example built with nvcc and `pkg-config gshmem` (shared and
# --static), a C host program built with gcc under -pedantic -Werror (the public header stays
# plain C), and the installed tools. pkg-config sees only the installed gshmem.pc, so it must not
# need PMIx's or CUDA's .pc files. Without a GPU each program must fail cleanly at init, naming
# the missing driver; with one the example runs on 2 PEs under the installed gshmemrun.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_install: FAILED: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "meson install"; }
pc=$(find "$tmp/root" -name gshmem.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no gshmem.pc was installed"
prefix=$(sed -n 's/^prefix=//p' "$pc")
root="$tmp/root$prefix"
pkgc() { PKG_CONFIG_LIBDIR=$(dirname "$pc") PKG_CONFIG_PATH= pkg-config --define-variable=prefix="$root" "$@" gshmem; }
cflags=$(pkgc --cflags) || fail "pkg-config --cflags gshmem"
libs=$(pkgc --libs) || fail "pkg-config --libs gshmem"
static_libs=$(pkgc --static --libs) || fail "pkg-config --static --libs gshmem"
libdir=$(pkgc --variable=libdir)
[ -f "$libdir/libgshmem.so" ] && [ -f "$libdir/libgshmem.a" ] || fail "libgshmem.so/.a not in the .pc's libdir $libdir"
# the static archive by path: -lgshmem alone would pick the shared library
static_libs=${static_libs/-lgshmem/$libdir/libgshmem.a}

# README's example, as written there: the first ```c block after "## Using it"
awk '/^## Using it/ {s = 1} s && /^```c$/ {c = 1; next} c && /^```$/ {exit} c' "$src/README.md" >"$tmp/app.cu"
grep -q 'shmem_init' "$tmp/app.cu" || fail "README.md has no example under '## Using it'"

cat >"$tmp/host.c" <<'EOF'
#include <gshmem.h>
#include <stdio.h>
int main(void)
{
    int rc = shmemx_init_attr(SHMEMX_INIT_DEFAULT, NULL);
    if (rc != 0) return 1; /* the library has logged why */
    printf("PE %d of %d\n", shmem_my_pe(), shmem_n_pes());
    shmem_finalize();
    return 0;
}
EOF

# shellcheck disable=SC2086 # the flags are lists
{
    "${NVCC:-nvcc}" $cflags "$tmp/app.cu" $libs -o "$tmp/app" || fail "README example with pkg-config --libs"
    "${NVCC:-nvcc}" $cflags "$tmp/app.cu" $static_libs -o "$tmp/app_static" ||
        fail "README example with pkg-config --static --libs"
    gcc -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$tmp/host.c" $libs -o "$tmp/host" || fail "C host program"
    gcc -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$tmp/host.c" $static_libs -o "$tmp/host_static" ||
        fail "C host program, static"
}
# NVSHMEM compatibility: the headers sit in their own directory (never beside gshmem.h, where they
# would shadow NVIDIA's), and an NVSHMEM program builds unchanged through the pkg-config module
compat_pc="$(dirname "$pc")/gshmem-nvshmem-compat.pc"
[ -f "$compat_pc" ] || fail "no gshmem-nvshmem-compat.pc beside gshmem.pc"
! find "$tmp/root" -name nvshmem.h -not -path '*/gshmem-nvshmem-compat/*' | grep -q . ||
    fail "an nvshmem.h was installed outside include/gshmem-nvshmem-compat"
compat_cflags=$(PKG_CONFIG_LIBDIR=$(dirname "$pc") PKG_CONFIG_PATH= pkg-config --define-variable=prefix="$root" --cflags \
                gshmem-nvshmem-compat) || fail "pkg-config --cflags gshmem-nvshmem-compat"
compat_libs=$(PKG_CONFIG_LIBDIR=$(dirname "$pc") PKG_CONFIG_PATH= pkg-config --define-variable=prefix="$root" --libs \
              gshmem-nvshmem-compat) || fail "pkg-config --libs gshmem-nvshmem-compat"
compat_inc=$(PKG_CONFIG_LIBDIR=$(dirname "$pc") PKG_CONFIG_PATH= pkg-config --define-variable=prefix="$root" \
             --cflags-only-I gshmem-nvshmem-compat | tr ' ' '\n' | sed -n 's/^-I//p' | head -n 1)
[ -f "$compat_inc/nvshmem.h" ] && [ -f "$compat_inc/nvshmemx.h" ] ||
    fail "the first -I of gshmem-nvshmem-compat ($compat_inc) holds no nvshmem.h and nvshmemx.h"
# shellcheck disable=SC2086
"${NVCC:-nvcc}" $compat_cflags "$src/test/compat/ring_put.cu" $compat_libs -o "$tmp/compat_ring_put" ||
    fail "test/compat/ring_put.cu with pkg-config gshmem-nvshmem-compat"

for exe in app_static host_static; do
    ! ldd "$tmp/$exe" | grep -q libgshmem || fail "$exe links libgshmem.so"
done

"$root/bin/gshmem-info" >"$tmp/info.out" 2>&1 || { cat "$tmp/info.out" >&2; fail "installed gshmem-info"; }
grep -q GSHMEM_SYMMETRIC_SIZE "$tmp/info.out" || fail "gshmem-info does not list GSHMEM_SYMMETRIC_SIZE"

export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
# Runs installed program $1 ($tmp/$1, output in $tmp/$1.out), named $2 in messages: on 2 PEs under
# gshmemrun where there is a GPU (exit 0), else alone, where it must exit $3 ($4 says why).
run_program() {
    local exe=$1 what=$2 want=$3 why=$4 rc=0
    if [ $gpu = 1 ]; then
        "$root/bin/gshmemrun" -n 2 --timeout 120 "$tmp/$exe" >"$tmp/$exe.out" 2>&1 || rc=$?
        [ $rc = 0 ] || { cat "$tmp/$exe.out" >&2; fail "$what on 2 PEs exited with $rc"; }
    else
        "$tmp/$exe" >"$tmp/$exe.out" 2>&1 || rc=$?
        [ $rc = "$want" ] || { cat "$tmp/$exe.out" >&2; fail "$what without a GPU exited with $rc, not $want ($why)"; }
    fi
}
for exe in app app_static host host_static; do
    run_program $exe $exe 1 "a clean init failure"
    if [ $gpu = 0 ] && ! grep -q 'no usable CUDA driver or GPU' "$tmp/$exe.out"; then
        cat "$tmp/$exe.out" >&2
        fail "$exe did not name the missing driver"
    fi
done
run_program compat_ring_put "the NVSHMEM ring program" 77 "skip"
echo "test_install: the installed headers, gshmem.pc (shared and static), gshmem-nvshmem-compat.pc and tools work$([ $gpu = 1 ] && echo '; the example ran on 2 PEs')"
