#!/usr/bin/env bash
# SASS of the same candidates from two trees, compiled as the product compiles them (gt_render + NVRTC for the
# family's arch, tests/perf/sass_cubin.c linked against each tree's libgemmtune.a), disassembled and diffed: for
# template changes that must not change the kernels. No GPU needed; needs nvdisasm (PATH, $CUDA/bin, $NVDISASM,
# or pip's nvidia-cuda-nvdisasm).
#   bash tests/perf/sass_diff.sh [-j N] [-c CONFIGS] BASE [HEAD]
# BASE and HEAD: a git revision of this repository or a tree's directory; HEAD defaults to this working tree.
# CONFIGS: lines "FAMILY PARAMS [LAYOUTS]" (default tests/perf/sass_configs.txt). One line per candidate and
# layout: "same", or "DIFF" with instruction counts, registers and spills of both sides, the opcodes whose counts
# moved, and whether the loops differ (tests/perf/sass_loops.py: a kernel's main loop the same to the letter, or
# not); the disassemblies and rendered sources stay in $SASS_WORK (default /tmp/gt_sass). Exit 1 on any DIFF.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
jobs=2
configs=$here/tests/perf/sass_configs.txt
while getopts "j:c:" o; do
    case $o in
    j) jobs=$OPTARG ;;
    c) configs=$(realpath "$OPTARG") ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,11p' "$0"; exit 2; }
CUDA=${CUDA:-/usr/local/cuda}
work=${SASS_WORK:-/tmp/gt_sass}
mkdir -p "$work"

find_nvdisasm()
{
    local p
    for p in "${NVDISASM:-}" "$(command -v nvdisasm || true)" "$CUDA/bin/nvdisasm"; do
        [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return; }
    done
    p=$(python3 -c 'import nvidia, glob; print(*glob.glob(nvidia.__path__[0] + "/cu*/bin/nvdisasm")[:1])' 2>/dev/null || true)
    [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return; }
    echo "sass_diff: no nvdisasm (pip install nvidia-cuda-nvdisasm, or set NVDISASM)" >&2
    exit 2
}
nvdisasm=$(find_nvdisasm)

# side NAME SPEC: the tree of SPEC (a directory as it is, or a revision exported) under $work/NAME, its library
# built there, and the driver linked against it.
side()
{
    local name=$1 spec=$2 dir
    if [ -d "$spec" ]; then
        dir=$(realpath "$spec")
    else
        dir=$work/$name/src
        rm -rf "$dir" && mkdir -p "$dir"
        git -C "$here" archive "$(git -C "$here" rev-parse --verify "$spec^{commit}")" | tar -x -C "$dir"
    fi
    make -s -C "$dir" -j"$jobs" BUILD="$work/$name/build" "$work/$name/build/libgemmtune.a" >&2
    cc -std=c11 -O1 -I"$dir/kernels" -I"$dir/src/lib" -isystem "$CUDA/include" -o "$work/$name/sass_cubin" \
        "$here/tests/perf/sass_cubin.c" "$work/$name/build/libgemmtune.a" -L"$CUDA/lib64" \
        -Wl,-rpath,"$CUDA/lib64" -lnvrtc -lpthread -ldl -lm
    mkdir -p "$work/$name/out"
}
side base "$1"
side head "${2:-$here}"

# One candidate in one layout, both sides: its verdict, one line (a DIFF's details after tabs, for the sort).
one()
{
    local fam=$1 params=$2 lay=$3 s key=$1-$3-$(echo "$2" | tr -d ',=')
    for s in base head; do
        local o=$work/$s/out/$key
        if ! "$work/$s/sass_cubin" "$fam" "$params" "$lay" "$o.cubin" > "$o.res" 2> "$o.err"; then
            echo "FAIL $fam $lay $params ($s): $(head -c 300 "$o.err" | tr '\n' ' ')"
            return
        fi
        # Offsets and the disassembler's comments aside, the text is the kernel.
        "$nvdisasm" -c "$o.cubin" | sed 's@/\*[0-9a-f]*\*/@@; s@ *;.*@;@' > "$o.sass"
    done
    local b=$work/base/out/$key h=$work/head/out/$key
    if cmp -s "$b.sass" "$h.sass"; then
        echo "same $fam $lay $params (regs/spill/stack $(cat "$h.res"))"
        return
    fi
    printf 'DIFF %s %s %s: instructions %d -> %d, regs/spill/stack %s -> %s\topcodes moved: %s\t%s\tdiff %s %s\n' \
        "$fam" "$lay" "$params" "$(grep -c ';' "$b.sass")" "$(grep -c ';' "$h.sass")" "$(cat "$b.res")" \
        "$(cat "$h.res")" "$(diff <(ops "$b.sass") <(ops "$h.sass") | grep '^[<>]' | tr -s ' \n' ' ')" \
        "$(python3 "$here/tests/perf/sass_loops.py" "$b.sass" "$h.sass")" "$b.sass" "$h.sass"
}
# Opcode histogram of a disassembly (predicates and modifiers dropped).
ops()
{
    grep ';' "$1" | sed 's/^ *//; s/^@!*U*P[0-9T] *//; s/;.*//' | awk '{print $1}' | sed 's/\..*//' | sort | uniq -c
}
export -f one ops
export work nvdisasm here

grep -v '^\s*\(#\|$\)' "$configs" | while read -r fam params lays; do
    for lay in ${lays//,/ }; do echo "$fam $params $lay"; done
    [ -n "$lays" ] || printf "$fam $params %s\n" nn nt tn tt
done | xargs -P "$jobs" -L 1 bash -c 'one "$0" "$1" "$2"' | sort -k2,4 | sed 's/\t/\n     /g' | tee "$work/verdicts.txt"
! grep -q '^\(DIFF\|FAIL\)' "$work/verdicts.txt"
