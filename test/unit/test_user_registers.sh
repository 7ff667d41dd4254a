#!/usr/bin/env bash
# docs/transports.md promises what a user's kernel costs in registers: a loop of any one device
# RMA, AMO, signal or wait form (thread, warp or block scope), through gshmem.h or through the
# NVSHMEM compatibility headers, remote path included, at most LIMIT registers a thread on sm_90,
# so that 1024-thread blocks (64 registers at most) launch with room for the user's own code.
# ptxas reports each kernel of user_registers.cu and user_registers_nvshmem.cu; the table (kernel,
# registers, stack frame) is printed, and any kernel above its limit fails the test. The kernels
# that carry a P2P copy loop keep UNROLL 16-byte loads in flight a thread (device/memops.cuh) and
# fit; a kernel whose own loop keeps more values live across the remote call than the far
# functions' callee-saved registers hold gets registers above theirs: such kernels are listed in
# over_limit with their count now, so that they do not grow; one
# that fits 48 fails the test until it leaves the list. The helper kernels of the compatibility
# header (nvshmemi_compat_*, launched with one block for the on-stream forms) and the module anchor
# are not counted.
#
# The same ptxas report holds the device stack of the remote path (device/layout.h): the far
# functions' frames (each at most once in a chain: none recurses) within GSHMEMI_REMOTE_STACK_PROXY
# (the proxy's) and GSHMEMI_REMOTE_STACK_IBGDA (all) less GSHMEMI_REMOTE_STACK_KERNEL, and every
# kernel's own frame, its direct calls included, within GSHMEMI_REMOTE_STACK_KERNEL. (The library's
# collective kernels call the remote path directly, so ptxas sizes their stack: collectives/coll_kernels.cuh.)
# Usage: test_user_registers.sh SOURCE_DIR GPU_ARCH
set -euo pipefail
src=$(cd "$1" && pwd) arch=$2 limit=48
# kernel=bound for the kernels that do not fit $limit yet (see above)
over_limit=""
stack_of() { sed -n "s/^#define $1 \([0-9]*\).*/\1/p" "$src/device/layout.h"; }
kernel=$(stack_of GSHMEMI_REMOTE_STACK_KERNEL) proxy=$(stack_of GSHMEMI_REMOTE_STACK_PROXY) ibgda=$(stack_of GSHMEMI_REMOTE_STACK_IBGDA)
[ -n "$kernel" ] && [ -n "$proxy" ] && [ -n "$ibgda" ] || { echo "test_user_registers: GSHMEMI_REMOTE_STACK_* not found in device/layout.h" >&2; exit 1; }
status=0
for file in user_registers.cu user_registers_nvshmem.cu; do
    kernels=$(cat "$src/test/unit/user_registers_kernels.h" "$src/test/unit/$file" | grep -c '^USER_KERNEL(')
    out=$("${NVCC:-nvcc}" -arch="sm_$arch" --std=c++17 -O3 -I"$src/include" -I"$src/include/nvshmem-compat" -I"$src" \
          --resource-usage -c "$src/test/unit/$file" -o /dev/null 2>&1) ||
        { echo "$out" >&2; echo "test_user_registers: $file: compile failed" >&2; exit 1; }
    echo "== $file (limit $limit)"
    printf '%-28s %9s %11s\n' kernel registers "stack (B)"
    echo "$out" | awk -v limit=$limit -v kernels="$kernels" -v file="$file" -v over="$over_limit" '
        BEGIN {
            n = split(over, o, /[ \n]+/)
            for (i = 1; i <= n; i++) {
                split(o[i], kv, "="); bound[kv[1]] = kv[2]
            }
        }
        /Compiling entry function/ { match($0, /\x27[^\x27]+\x27/); fn = substr($0, RSTART + 1, RLENGTH - 2); entry = 1 }
        /Function properties for/ { cur = $NF }
        /bytes stack frame/ { if (cur == fn) stack = $1 }
        /Used [0-9]+ registers/ {
            if (!entry) next
            entry = 0
            if (fn ~ /gshmemi_module_anchor|nvshmemi_compat_/) next
            for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i + 1)
            name = fn
            if (match(name, /^_Z[0-9]+/)) { len = substr(name, 3, RLENGTH - 2) + 0; name = substr(name, RLENGTH + 1, len) }
            seen++
            max = name in bound ? bound[name] : limit
            printf "%-28s %9d %11d\n", name, regs, stack
            if (regs > max) { printf "test_user_registers: %s: %s uses %d registers, more than %d\n", file, name, regs, max; bad++ }
            else if (name in bound && regs <= limit) {
                printf "test_user_registers: %s: %s now fits %d registers: take it off over_limit\n", file, name, limit; bad++
            }
        }
        END {
            if (seen != kernels) { printf "test_user_registers: ptxas reported %d kernels, %s has %d\n", seen, file, kernels; exit 1 }
            exit bad > 0
        }' || status=1
    echo "$out" | awk -v file="$file" -v kernel="$kernel" -v proxy="$proxy" -v ibgda="$ibgda" '
        /Function properties for/ { fn = $NF; next }
        /bytes stack frame/ && fn != "" { frame[fn] = $1; fn = ""; next }
        /Compiling entry function/ { match($0, /\x27[^\x27]+\x27/); entry[substr($0, RSTART + 1, RLENGTH - 2)] = 1 }
        /cumulative stack size/ { for (i = 1; i <= NF; i++) if ($i == "cumulative") own = $(i - 2); if (own + 0 > most) most = own + 0 }
        END {
            for (f in frame) if (!(f in entry) && f ~ /gshmemi_/) { all += frame[f]; if (f !~ /ibgda/) px += frame[f] }
            printf "%s: far frames %d B (the proxy%ss %d B), largest kernel frame %d B\n", file, all, "\x27", px, most
            if (px + kernel > proxy) { printf "test_user_registers: %s: the proxy path needs %d B of stack, more than %d\n", file, px + kernel, proxy; bad++ }
            if (all + kernel > ibgda) { printf "test_user_registers: %s: the IBGDA path needs %d B of stack, more than %d\n", file, all + kernel, ibgda; bad++ }
            if (most > kernel) { printf "test_user_registers: %s: a kernel frame of %d B, more than %d\n", file, most, kernel; bad++ }
            if (all == 0) { printf "test_user_registers: %s: no far function reported\n", file; bad++ }
            exit bad > 0
        }' || status=1
done
exit $status
