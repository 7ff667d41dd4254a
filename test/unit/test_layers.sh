#!/usr/bin/env bash
# The layers call only downwards (docs/architecture.md). Every #include of
# the library's folders that names a file of the tree is checked against the order, top down:
#   runtime/            the orchestration (init, teams, host API, modules; tools/)        5
#   collectives/        the on-stream collectives                                           4
#   transports/NAME/    one transport each (p2p, proxy, ibgda); none includes another      4
#   transports/common/  what the transports share, with transports/'s own files (the ops
#                       table, the route rule)                                              3
#   heap/               the symmetric heap                                                 2
#   device/             the inline device code                                              1
#   runtime/base/       log, env table, CUDA driver entry points, clock, bootstrap          0
# A file may include a file of its own layer or of a lower one; two layers of one rank do not
# include each other. include/ (the public API: types, the family lists) may be included by
# every layer, and includes only include/ and device/ (the header-only device API).
# test/ and perftest/ are not checked. Usage: test_layers.sh SOURCE_ROOT
set -u
src=${1:?usage: test_layers.sh SOURCE_ROOT}
cd "$src" || { echo "test_layers: no source tree at $src" >&2; exit 1; }

folders=(include runtime collectives heap transports device)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -- "${folders[@]}" | grep -E '\.(c|h|cu|cuh)$')
else
    mapfile -t files < <(find "${folders[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
fi

# The layer and rank of a path of the tree (lay, rank); lay empty outside the checked folders.
layer() {
    lay="" rank=""
    case $1 in
    include/*) lay=include rank=9 ;;
    runtime/base/*) lay=runtime/base rank=0 ;;
    runtime/*) lay=runtime rank=5 ;;
    collectives/*) lay=collectives rank=4 ;;
    transports/common/*) lay=transports/common rank=3 ;;
    transports/*/*) local t=${1#transports/}; lay=transports/${t%%/*} rank=4 ;;
    transports/*) lay=transports/common rank=3 ;;
    heap/*) lay=heap rank=2 ;;
    device/*) lay=device rank=1 ;;
    esac
}

# a/b/../c -> a/c
normalize() {
    local IFS=/ part out=()
    for part in $1; do
        case $part in
        "" | .) ;;
        ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
        *) out+=("$part") ;;
        esac
    done
    norm="${out[*]}"
}

# The file of the tree an include names (target): beside the includer, then the include
# directories (include/, the root), as the build searches them; empty for a system header.
resolve() {
    local from=$1 name=$2 quoted=$3 c
    local cands=("include/$name" "$name")
    [ "$quoted" = 1 ] && cands=("${from%/*}/$name" "${cands[@]}")
    target=""
    for c in "${cands[@]}"; do
        if [ -f "$c" ]; then
            normalize "$c"
            target=$norm
            return
        fi
    done
}

bad=0 checked=0
for f in "${files[@]}"; do
    layer "$f"
    from_layer=$lay from_rank=$rank
    [ -n "$from_layer" ] || continue
    while IFS= read -r hit; do
        line=${hit%%:*}
        text=${hit#*:}
        if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
            resolve "$f" "${BASH_REMATCH[1]}" 1
        elif [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
            resolve "$f" "${BASH_REMATCH[1]}" 0
        else
            continue
        fi
        [ -n "$target" ] || continue
        layer "$target"
        to_layer=$lay to_rank=$rank
        if [ -z "$to_layer" ]; then
            echo "$f:$line: includes $target, outside the library's folders" >&2
            bad=$((bad + 1))
            continue
        fi
        checked=$((checked + 1))
        why=""
        if [ "$from_layer" = include ]; then
            [ "$to_layer" = include ] || [ "$to_layer" = device ] || why="the public headers include only include/ and device/"
        elif [ "$to_layer" = include ] || [ "$to_layer" = "$from_layer" ]; then
            :
        elif [[ $from_layer == transports/* && $to_layer == transports/* && $to_rank == "$from_rank" ]]; then
            why="a transport includes another transport's folder (what they share belongs in transports/common/)"
        elif [ "$to_rank" -ge "$from_rank" ]; then
            why="$from_layer may not include $to_layer (a layer includes only the layers below it)"
        fi
        if [ -n "$why" ]; then
            echo "$f:$line: includes $target: $why" >&2
            bad=$((bad + 1))
        fi
    done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include' "$f")
done

if [ $bad != 0 ]; then
    echo "test_layers: $bad include(s) against the layers (above); docs/architecture.md says who may include whom" >&2
    exit 1
fi
echo "test_layers: ${#files[@]} files, $checked includes of the tree, none against the layers"
