#!/usr/bin/env bash
# Builds one libFuzzer target with AddressSanitizer and UndefinedBehaviorSanitizer and runs it for a
# bounded time on a fresh corpus.
#   run-fuzzer.sh SECONDS WORKDIR SOURCE.c [more sources or compiler flags...]
# Exit: 0 when the time ran out without a finding; 1 on a crash, leak, sanitizer report or build
# error (the input that did it is saved under WORKDIR and its path printed); 77 (skipped) when no
# clang with libFuzzer is installed. $CLANG picks the compiler; $FUZZ_ARGS adds libFuzzer flags.
set -u
if [ $# -lt 3 ]; then
    echo "usage: run-fuzzer.sh SECONDS WORKDIR SOURCE.c [more sources or flags...]" >&2
    exit 2
fi
seconds=$1 workdir=$2
shift 2
case $seconds in '' | *[!0-9]*) echo "run-fuzzer.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac

clang=${CLANG:-}
if [ -z "$clang" ]; then
    for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
        command -v "$c" >/dev/null 2>&1 && { clang=$c; break; }
    done
fi
if [ -z "$clang" ]; then
    echo "run-fuzzer.sh: no clang found (install clang, which brings libFuzzer); skipped" >&2
    exit 77
fi

mkdir -p "$workdir" || exit 1
name=$(basename "$1" .c)
run=$(mktemp -d "$workdir/$name.XXXXXX") || exit 1
mkdir -p "$run/corpus" "$run/artifacts"
flags=(-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

# A clang without libFuzzer's runtime is a missing tool, not a failing target.
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$run/probe.c"
if ! "$clang" "${flags[@]}" "$run/probe.c" -o "$run/probe" >"$run/probe.log" 2>&1; then
    echo "run-fuzzer.sh: $clang cannot build a libFuzzer target (libFuzzer or the sanitizer runtimes missing); skipped" >&2
    cat "$run/probe.log" >&2
    exit 77
fi
if ! "$clang" "${flags[@]}" "$@" -o "$run/$name"; then
    echo "run-fuzzer.sh: building $name failed" >&2
    exit 1
fi

echo "run-fuzzer.sh: $name for $seconds s, corpus $run/corpus"
# -close_fd_mask=2 keeps the target's own error messages out (libFuzzer and the sanitizers still
# report on their copy of stderr); the outer timeout is a backstop for a hang libFuzzer misses.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    timeout -k 10 $((seconds + 120)) "$run/$name" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=4096 \
    -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="$run/artifacts/" ${FUZZ_ARGS:-} "$run/corpus" >"$run/log" 2>&1
rc=$?
tail -n 25 "$run/log"
found=$(find "$run/artifacts" -type f | sort)
if [ $rc -ne 0 ] || [ -n "$found" ]; then
    echo "run-fuzzer.sh: $name FAILED (exit $rc); full log $run/log" >&2
    for f in $found; do echo "run-fuzzer.sh: input that did it: $f (replay: $run/$name $f)" >&2; done
    [ -n "$found" ] || echo "run-fuzzer.sh: no input was saved (a timeout of the whole run, or a build/start failure)" >&2
    exit 1
fi
echo "run-fuzzer.sh: $name ran $seconds s with no finding ($(grep -c . <(find "$run/corpus" -type f)) corpus inputs)"
rm -rf "$run"
exit 0
