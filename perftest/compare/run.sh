#!/usr/bin/env bash
# gshmem against NVIDIA NVSHMEM and NCCL, on this host, in one command:
#   perftest/compare/run.sh [-n N] [--quick] [--json FILE] [--csv FILE] [--plots DIR] [--bench a,b,...]
#                           [--build-only] [--keep]
# Builds perftest/compare/nvshmem_bench.cu twice (against gshmem's NVSHMEM compatibility headers and
# against NVIDIA NVSHMEM) and nccl_bench.cu against NCCL, runs the three on N PEs (default 2) and
# prints per row each library's time (and GB/s) and gshmem's speed relative to the fastest other
# one. More PEs than GPUs: the PEs share GPUs under a private MPS daemon (the GPU's compute mode
# is never changed) and NCCL, which needs a GPU per rank, is skipped with the reason.
#   gshmem:  GSHMEM_PREFIX (an install holding gshmem-nvshmem-compat.pc), else this tree, built in
#            GSHMEM_BUILD_DIR (default build-compare) and installed into a scratch folder
#   NVSHMEM: NVSHMEM_HOME, else the nvidia-nvshmem-cu13 Python package
#   NCCL:    NCCL_HOME, else the system (nccl.h, libnccl.so)
# A library that cannot be found or built is skipped with the reason; the run fails (exit 1) if a
# benchmark that ran failed, or if gshmem could not run. --build-only builds (no GPU needed) and stops;
# --keep leaves the scratch folder (binaries, build logs, each rank's output) and says where.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

npes=2 quick=0 json="" csv="" plots="" bench="" build_only=0 keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    -n) npes=${2:?-n needs a number}; shift 2 ;;
    --quick) quick=1; shift ;;
    --build-only) build_only=1; shift ;;
    --keep) keep=1; shift ;;
    --json) json=${2:?--json needs a file}; shift 2 ;;
    --csv) csv=${2:?--csv needs a file}; shift 2 ;;
    --plots) plots=${2:?--plots needs a folder}; shift 2 ;;
    --bench) bench=${2:?--bench needs a list}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$npes" in ''|*[!0-9]*) echo "compare: -n '$npes' is not a number" >&2; exit 2 ;; esac
[ "$npes" -ge 2 ] || { echo "compare: -n $npes: the benchmarks need 2 or more PEs" >&2; exit 2; }
# the jobs: groups of benchmarks that run in one job (--bench: one job each)
colls="allreduce fcollect alltoall broadcast"
groups_nvshmem="first_use put_bw,get_bw put_lat,get_lat p_lat amo barrier barrier_on_stream $colls"
groups_nccl=$colls
for b in ${bench//,/ }; do
    case " ${groups_nvshmem//,/ } " in *" $b "*) ;; *)
        echo "compare: --bench: unknown benchmark '$b' (known: ${groups_nvshmem//,/ })" >&2; exit 2 ;; esac
done

for d in /opt/torch/.venv/bin /usr/local/cuda/bin; do
    [ -d "$d" ] && case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac
done
export PATH
ngpus=0
command -v nvidia-smi >/dev/null 2>&1 && ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${ngpus:-0}" -lt 1 ] && [ $build_only = 0 ]; then
    echo "compare: no NVIDIA GPU on this host (nvidia-smi finds none); the comparison needs GPUs (--build-only builds without)" >&2
    exit 1
fi
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
arch=sm_${CUDA_ARCH:-${cc:-90}}
nvcc=${NVCC:-nvcc}

work=$(mktemp -d "${TMPDIR:-/tmp}/gshmem-compare.XXXXXX")
mps=0
cleanup() {
    [ $mps = 1 ] && echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
    if [ $keep = 1 ]; then echo "compare: kept the binaries, logs and rows in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
declare -A skip=() libdirs=()
say() { echo "compare: $*" >&2; }

# ---- builds (in parallel; each one's log in $work) ----
build_gshmem() {
    local pcdir flags libs sysroot=""
    if [ -n "${GSHMEM_PREFIX:-}" ]; then
        pcdir=$(find "$GSHMEM_PREFIX" -name gshmem-nvshmem-compat.pc -printf '%h\n' 2>/dev/null | head -n 1 || true)
    else
        source test/install-deps.sh --perftests >/dev/null || return 1
        source test/build.sh
        local b=${GSHMEM_BUILD_DIR:-build-compare}
        gshmem_build "$b" --buildtype=release -Dtests=false -Dperftests=false || return 1
        meson install -C "$b" --destdir "$work/inst" --no-rebuild >/dev/null || return 1
        pcdir=$(find "$work/inst" -name gshmem-nvshmem-compat.pc -printf '%h\n' | head -n 1 || true)
        sysroot=$work/inst
    fi
    [ -n "$pcdir" ] || { echo "no gshmem-nvshmem-compat.pc in ${GSHMEM_PREFIX:-the install of this tree}"; return 1; }
    flags=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$sysroot pkg-config --cflags gshmem-nvshmem-compat) || return 1
    libs=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$sysroot pkg-config --libs gshmem-nvshmem-compat) || return 1
    echo "$libs" | tr ' ' '\n' | sed -n 's/^-L//p' | tr '\n' ':' > "$work/gshmem.libpath"
    # shellcheck disable=SC2086
    "$nvcc" -O2 -std=c++17 -arch="$arch" $flags perftest/compare/nvshmem_bench.cu -o "$work/bench_gshmem" $libs
}
nvshmem_home() {
    if [ -n "${NVSHMEM_HOME:-}" ]; then echo "$NVSHMEM_HOME"; return; fi
    local py # the package may be in a venv's python rather than the system's
    for py in python3 /opt/torch/.venv/bin/python3 /usr/bin/python3; do
        command -v "$py" >/dev/null 2>&1 && "$py" -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null && return
    done
}
build_nvshmem() {
    local nvs
    nvs=$(nvshmem_home)
    [ -n "$nvs" ] && [ -f "$nvs/include/nvshmem.h" ] || {
        echo "NVIDIA NVSHMEM not found (set NVSHMEM_HOME, or pip install nvidia-nvshmem-cu13)"; return 1; }
    mkdir -p "$work/nvslib"
    # the wheel ships libnvshmem_host.so.3 only: an unversioned name for the linker
    [ -e "$nvs/lib/libnvshmem_host.so" ] || ln -sf "$nvs/lib/libnvshmem_host.so.3" "$work/nvslib/libnvshmem_host.so"
    echo "$nvs/lib" > "$work/nvshmem.libpath"
    "$nvcc" -O2 -std=c++17 -rdc=true -arch="$arch" -I"$nvs/include" perftest/compare/nvshmem_bench.cu \
        -o "$work/bench_nvshmem" -L"$work/nvslib" -L"$nvs/lib" -lnvshmem_host -lnvshmem_device -lcuda
}
build_nccl() {
    local inc=() lib=()
    if [ -n "${NCCL_HOME:-}" ]; then
        inc=(-I"$NCCL_HOME/include") lib=(-L"$NCCL_HOME/lib")
        echo "$NCCL_HOME/lib" > "$work/nccl.libpath"
    fi
    "$nvcc" -O2 -std=c++17 -arch="$arch" "${inc[@]}" perftest/compare/nccl_bench.cu -o "$work/bench_nccl" "${lib[@]}" -lnccl
}

libs=(gshmem nvshmem nccl)
t0=$(date +%s)
declare -A bpid=()
for l in "${libs[@]}"; do
    ( "build_$l" ) > "$work/build_$l.log" 2>&1 &
    bpid[$l]=$!
done
for l in "${libs[@]}"; do
    if ! wait "${bpid[$l]}"; then
        skip[$l]="build failed: $(grep -v '^\s*$' "$work/build_$l.log" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
    fi
    [ -f "$work/$l.libpath" ] && libdirs[$l]=$(cat "$work/$l.libpath")
done
say "built in $(( $(date +%s) - t0 )) s for $arch"
if [ $build_only = 1 ]; then
    for l in "${libs[@]}"; do
        if [ -n "${skip[$l]:-}" ]; then say "$l: ${skip[$l]}"; else say "$l: built"; fi
    done
    [ -z "${skip[gshmem]:-}" ]
    exit
fi

# ---- the run environment ----
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-2G} GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-2G}
export NVSHMEM_REMOTE_TRANSPORT=${NVSHMEM_REMOTE_TRANSPORT:-none}
shared=""
if [ "$npes" -gt "$ngpus" ]; then
    per_gpu=$(( (npes + ngpus - 1) / ngpus ))
    shared="$npes PEs on $ngpus GPU(s), $per_gpu per GPU under MPS ($(( 100 / per_gpu ))% of the SMs each)"
    # NVSHMEM's on-stream collectives go through NCCL, which refuses two ranks on one GPU
    export NVSHMEM_DISABLE_NCCL=1
    export CUDA_MPS_PIPE_DIRECTORY=$work/mps-pipe CUDA_MPS_LOG_DIRECTORY=$work/mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if ! nvidia-cuda-mps-control -d; then
        say "cannot start an MPS daemon; PEs sharing a GPU would be time-sliced"
        exit 1
    fi
    mps=1
    export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$(( 100 / per_gpu ))
    [ -z "${skip[nccl]:-}" ] && skip[nccl]="NCCL needs a GPU per rank ($npes ranks, $ngpus GPU(s))"
    say "$shared"
fi

# ---- runs: each group of benchmarks is a job of its own (N ranks of one binary), so that one
# failing benchmark costs only its rows; a rank that fails ends the others ----
limit=$([ $quick = 1 ] && echo 40 || echo 60)   # one job
budget=300                                      # every job together, seconds
if [ -n "$bench" ]; then
    groups_nvshmem=${bench//,/ } groups_nccl=""
    for b in $groups_nvshmem; do case " $colls " in *" $b "*) groups_nccl+=" $b" ;; esac; done
fi
args=()
[ $quick = 1 ] && args+=(--quick)
run_job() { # run_job LIB BENCHES: returns the first failing rank's status
    local l=$1 g=$2 r p q rc status=0 alive pids=()
    local -A reaped=()
    rm -f "$work/uid.$l"
    for ((r = 0; r < npes; r++)); do
        COMPARE_RANK=$r COMPARE_NRANKS=$npes COMPARE_UID_FILE=$work/uid.$l \
            LD_LIBRARY_PATH=${libdirs[$l]:-}:${LD_LIBRARY_PATH:-} \
            timeout -k 5 $limit "$work/bench_$l" --lib "$l" --bench "$g" "${args[@]}" \
            > "$work/$l.$g.r$r.out" 2> "$work/$l.$g.r$r.err" &
        pids+=($!)
    done
    while :; do
        alive=0
        for p in "${pids[@]}"; do
            [ -n "${reaped[$p]:-}" ] && continue
            if kill -0 "$p" 2>/dev/null; then alive=1; continue; fi
            wait "$p"
            rc=$?
            reaped[$p]=1
            if [ $rc != 0 ] && [ $status = 0 ]; then
                status=$rc
                for q in "${pids[@]}"; do kill "$q" 2>/dev/null; done
            fi
        done
        [ $alive = 0 ] && break
        sleep 0.2
    done
    return $status
}
t_runs=$(date +%s)
for l in "${libs[@]}"; do
    [ -n "${skip[$l]:-}" ] && { say "$l: skipped: ${skip[$l]}"; continue; }
    t=$(date +%s) failed_jobs=() ran=0
    : > "$work/$l.rows"
    case $l in nccl) groups=$groups_nccl ;; *) groups=$groups_nvshmem ;; esac
    if [ -z "${groups// /}" ]; then skip[$l]="none of --bench $bench is its"; say "$l: skipped: ${skip[$l]}"; continue; fi
    for g in $groups; do
        if [ $(( $(date +%s) - t_runs )) -gt $budget ]; then
            failed_jobs+=("$g: not run, over the ${budget} s budget")
            continue
        fi
        run_job "$l" "$g"
        rc=$?
        # rank 0's rows, also those printed before a failure
        grep -h '^{' "$work/$l.$g.r0.out" >> "$work/$l.rows"
        if [ $rc = 77 ]; then
            skip[$l]=$(grep -h 'skipped' "$work/$l.$g".r*.err | head -n 1)
            break
        elif [ $rc != 0 ]; then
            why="exit $rc"
            [ $rc = 124 ] && why="over the ${limit} s limit"
            failed_jobs+=("$g: $why")
            say "$l: $g FAILED ($why); its stderr:"
            cat "$work/$l.$g".r*.err | grep -v '^\s*$' | tail -n 20 >&2
        else
            ran=$((ran + 1))
        fi
    done
    if [ -n "${skip[$l]:-}" ]; then
        say "$l: ${skip[$l]}"
    elif [ ${#failed_jobs[@]} -gt 0 ]; then
        skip[$l]="FAILED: $(IFS=';'; echo "${failed_jobs[*]}")"
        say "$l: ${skip[$l]} ($ran jobs passed)"
    else
        say "$l: $ran jobs passed in $(( $(date +%s) - t )) s"
    fi
done

# ---- the table, JSON and CSV ----
{
    # a library that failed part-way keeps the rows it printed (its note says what failed)
    for l in "${libs[@]}"; do [ -f "$work/$l.rows" ] && cat "$work/$l.rows"; done
    for l in "${libs[@]}"; do
        [ -n "${skip[$l]:-}" ] && python3 -c 'import json,sys; print(json.dumps({"lib": sys.argv[1], "skipped": sys.argv[2]}))' "$l" "${skip[$l]}"
    done
} > "$work/rows.json"
extra=()
[ -n "$json" ] && extra+=(--json "$json")
[ -n "$csv" ] && extra+=(--csv "$csv")
echo "# gshmem vs NVSHMEM vs NCCL, $npes PEs, $ngpus GPU(s)${shared:+; $shared}; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
python3 perftest/compare/table.py "${extra[@]}" "$work/rows.json" || exit 1
if [ -n "$plots" ]; then
    py=python3 # the first python3 with matplotlib (a venv's may lack it where the system's has it)
    for p in python3 /usr/bin/python3; do "$p" -c 'import matplotlib' 2>/dev/null && { py=$p; break; }; done
    "$py" perftest/plot.py -o "$plots" "$work/rows.json" || say "plots: failed (see above)"
fi
failed=0
for l in "${libs[@]}"; do case "${skip[$l]:-}" in FAILED*) failed=1 ;; esac; done
[ -n "${skip[gshmem]:-}" ] && failed=1
exit $failed
