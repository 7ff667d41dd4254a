#!/usr/bin/env bash
# compute-sanitizer over the GPU functional tests, 2 PEs on one GPU:
#   run-sanitizer.sh BUILD_DIR [tool ...]          (tools: memcheck racecheck [synccheck initcheck]; default memcheck racecheck)
# Each PE runs under its own sanitizer:
#   gshmemrun -n 2 --gpus G --timeout T compute-sanitizer --tool TOOL --error-exitcode 99 BUILD_DIR/test/test_X
# with GSHMEM_TEST_QUICK=1 (fewer sizes and rounds, every data check kept). Prints, per test and
# tool, each PE's "ERROR SUMMARY" (racecheck: also "RACECHECK SUMMARY") line and PASS/FAIL/TIMEOUT, then one summary line; exits 0 only
# when every run passed. Full logs go to $SAN_LOGDIR (default $OUT/sanitizer if $OUT is set, else
# ./sanitizer-logs).
#
# Settings (environment): SAN_TESTS (default "rma typed amo signal heap barrier modules coll
# init_loop"), SAN_GPU (default 0), SAN_TIMEOUT seconds per run (default 300), SAN_BUDGET seconds
# for the whole script (default 560, to fit a 10-minute slot): a run gets at most what is left of
# the budget, and with less than 60 s left the remaining runs are reported as SKIPPED; split the
# tools or tests (SAN_TESTS) over several calls to cover everything.
#
# No MPS: the two PEs' kernels are time-sliced on the GPU, hence the quick mode. NVIDIA's
# compute-sanitizer and MPS documentation that we could search says nothing about running the
# sanitizer under MPS clients, so this script does not rely on it; it starts no MPS daemon, and
# warns if one seems to be running (then the PEs become MPS clients anyway).
set -uo pipefail
if [ $# -lt 1 ]; then
    echo "usage: run-sanitizer.sh BUILD_DIR [tool ...]" >&2
    exit 2
fi
build=$1
shift
tools=("$@")
[ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck)
read -r -a tests <<<"${SAN_TESTS:-rma typed amo signal heap barrier modules coll init_loop}"
gpu=${SAN_GPU:-0} limit=${SAN_TIMEOUT:-300} budget=${SAN_BUDGET:-560}
if [ -n "${SAN_LOGDIR:-}" ]; then logdir=$SAN_LOGDIR
elif [ -n "${OUT:-}" ]; then logdir=$OUT/sanitizer
else logdir=./sanitizer-logs; fi

export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-2G} GSHMEM_TEST_QUICK=1 GSHMEM_TEST_SANITIZER=1
# The sanitizer slows every wait on the other PE: gshmem's own limits stay below the run's, so a
# hang is reported by gshmem (naming the wait) before gshmemrun kills the job.
wait_s=$(( limit * 3 / 4 ))
export GSHMEM_DEVICE_WAIT_TIMEOUT=${GSHMEM_DEVICE_WAIT_TIMEOUT:-$wait_s} GSHMEM_PEER_TIMEOUT=${GSHMEM_PEER_TIMEOUT:-$wait_s} \
    GSHMEM_BOOTSTRAP_TIMEOUT=${GSHMEM_BOOTSTRAP_TIMEOUT:-$wait_s}

san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
run=$build/runtime/tools/gshmemrun
[ -x "$san" ] || { echo "run-sanitizer: compute-sanitizer not found (PATH or /usr/local/cuda/bin)" >&2; exit 2; }
[ -x "$run" ] || { echo "run-sanitizer: $run not found; build first" >&2; exit 2; }
if ! nvidia-smi -L >/dev/null 2>&1; then echo "run-sanitizer: no GPU" >&2; exit 77; fi
if pgrep -x nvidia-cuda-mps-control >/dev/null 2>&1 || pgrep -x nvidia-cuda-mps-server >/dev/null 2>&1; then
    echo "run-sanitizer: warning: an MPS daemon is running; the PEs may run as MPS clients" >&2
fi
mkdir -p "$logdir" || exit 2
echo "run-sanitizer: $("$san" --version 2>/dev/null | tail -1); tests: ${tests[*]}; tools: ${tools[*]}; 2 PEs on GPU $gpu, no MPS, quick mode; $limit s per run, $budget s in all; logs in $logdir"

start_all=$(date +%s)
pass=0 fail=0 skipped=0 failed_runs=()
for tool in "${tools[@]}"; do
    for t in "${tests[@]}"; do
        exe=$build/test/test_$t
        log=$logdir/$t.$tool.log
        left=$(( budget - ($(date +%s) - start_all) ))
        if [ "$left" -lt 60 ]; then
            echo "run-sanitizer: SKIPPED $t $tool (budget: $left s left of $budget s)"
            skipped=$((skipped + 1))
            continue
        fi
        run_limit=$(( left - 10 < limit ? left - 10 : limit ))
        if [ ! -x "$exe" ]; then
            echo "run-sanitizer: FAIL $t $tool: $exe not built"
            fail=$((fail + 1)) failed_runs+=("$t/$tool")
            continue
        fi
        t0=$(date +%s)
        timeout -k 5 $((run_limit + 5)) "$run" -n 2 --gpus "$gpu" --timeout "$run_limit" \
            "$san" --tool "$tool" --error-exitcode 99 --print-limit 50 "$exe" >"$log" 2>&1
        rc=$?
        dt=$(( $(date +%s) - t0 ))
        # one "========= ERROR SUMMARY: N errors" per PE (racecheck: "RACECHECK SUMMARY: H hazards
        # displayed (E errors, W warnings)"); a PE that died early prints none
        summaries=$(grep -a -E "(ERROR|RACECHECK) SUMMARY" "$log" || true)
        n_err=$(grep -c "ERROR SUMMARY" <<<"$summaries" || true)
        n_race=$(grep -c "RACECHECK SUMMARY" <<<"$summaries" || true)
        nsum=$(( n_err > n_race ? n_err : n_race ))
        nbad=$(grep -v -E "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: .*\(0 errors" <<<"$summaries" | grep -c . || true)
        if [ $rc -eq 0 ] && [ "$nsum" -eq 2 ] && [ "$nbad" -eq 0 ]; then
            st=PASS pass=$((pass + 1))
        else
            if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then st=TIMEOUT; else st=FAIL; fi
            fail=$((fail + 1)) failed_runs+=("$t/$tool")
        fi
        while IFS= read -r line; do
            [ -n "$line" ] && echo "run-sanitizer:   $t $tool: ${line#=========[[:space:]]}"
        done <<<"$summaries"
        echo "run-sanitizer: $st $t $tool (exit $rc, $nsum of 2 summary lines, ${dt} s of at most $run_limit)"
        if [ $st != PASS ]; then
            # the first sanitizer report or test failure, to paste without fetching the log
            grep -a -v "SUMMARY" "$log" | grep -a -m 8 -E "^========= (Invalid|Race|Error|Program hit|  (at|by) )|check failed|FAILED|error|timed out" |
                sed "s|^|run-sanitizer:     |"
        fi
    done
done
echo "run-sanitizer: $pass passed, $fail failed, $skipped skipped (${tools[*]} over ${#tests[@]} tests, 2 PEs, quick mode, $(( $(date +%s) - start_all )) s)${failed_runs[*]:+; failed: ${failed_runs[*]}}"
[ $fail -eq 0 ] && [ $skipped -eq 0 ]
