# Sourced by test/run.sh and perftest/run.sh: gshmem_build DIR [meson setup options] configures DIR
# once and builds it.
#
# Meson before 1.4 passes nvcc no -MD, so ninja never learns which headers a .cu file includes
# and an edited header (the device API is all headers) rebuilds nothing: the test and perftest
# binaries would keep the old device code. With such a meson, every CUDA object older than the
# newest header of the tree is deleted before the build, so it is compiled again.
gshmem_build() {
    local dir=$1
    shift
    [ -f "$dir/build.ninja" ] || meson setup "$dir" "$@"
    if ! meson --version | awk -F. '{ exit !($1 > 1 || ($1 == 1 && $2 >= 4)) }'; then
        local newest
        newest=$(find include device collectives runtime heap transports perftest test \( -name '*.h' -o -name '*.cuh' \) \
                     -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
        [ -n "$newest" ] && find "$dir" -name '*.cu.o' ! -newer "$newest" -delete
    fi
    # one job a core: ninja's default (cores + 2) builds slower on a host of few cores (docs/architecture.md)
    ninja -j "$(nproc 2>/dev/null || echo 2)" -C "$dir"
}
