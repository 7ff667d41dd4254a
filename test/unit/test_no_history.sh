#!/usr/bin/env bash
# The tree speaks to users: no development history in a tracked file (session or issue numbers, a
# build nickname, commit ids); history lives in git. Scans the files git tracks (every file under
# the source root when there is no .git, as in a tarball).
set -u
src=$1
fail() { echo "test_no_history: $*" >&2; exit 1; }
cd "$src" || fail "no source tree at $src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files)
else
    mapfile -t files < <(find . -type f ! -path './.git/*' ! -path './build*' ! -path './.carry/*' ! -path './.bench/*' | sed 's|^\./||')
fi
self=test/unit/test_no_history.sh
hits=0
for f in "${files[@]}"; do
    [ "$f" = "$self" ] && continue
    [ -f "$f" ] || continue
    grep -Iq . "$f" 2>/dev/null || continue # binary or empty
    # session and issue numbers, and the nickname a past build went by
    if out=$(grep -n -i -E '\bsessions? [0-9]|\bissues? #?[0-9]|\br25\b' "$f"); then
        echo "$f: $out" | head -3 >&2
        hits=$((hits + 1))
    fi
    # a commit id: 7 to 40 hex digits with a letter and a digit, a word of its own (not a 0x
    # constant, not part of a number); two hex alphabets of the code are allowed (a digit table,
    # the PNG signature)
    ids=""
    while read -r tok; do
        tok=${tok//[^0-9a-f]/}
        [[ $tok =~ [a-f] && $tok =~ [0-9] ]] || continue
        case $tok in 0123456789abcdef | 89504e470d0a1a0a) continue ;; esac
        ids+="$tok "
    done < <(grep -o -E '(^|[^0-9A-Za-z_x.])[0-9a-f]{7,40}([^0-9A-Za-z_.]|$)' "$f")
    if [ -n "$ids" ]; then
        echo "$f: a commit id? $ids" >&2
        hits=$((hits + 1))
    fi
done
[ $hits = 0 ] || fail "$hits file(s) hold development history (above); it belongs in git"
echo "test_no_history: ${#files[@]} files, no session or issue number and no commit id"
