#!/usr/bin/env bash
# Issue-7 analysis: time compile-time variants of the multistage kernel (and what is left of it with parts
# removed, GT_ABLATE) against cuBLAS in one process per variant, each validated with the test toolkit. Build
# where nvcc is, after `make` (no GPU needed), run on the GPU machine:
#   [REF=<commit>] bash tests/perf/ablate.sh build   # -> build-perf/ablate-<variant>
#   bash tests/perf/ablate.sh run [SIZES]            # SIZES: "M N K M N K ..." (default 4096^3 and 8192^3)
# Each variant line below: name and -D flags on top of the 4096^3 winner (128x256x8, 64x64 warps, 2 stages).
# REF adds a variant "ref": the base flags on the template as it was at that commit, for before/after.
set -euo pipefail
dir=${BUILD_PERF:-build-perf}
variants=(
    "base|"
    "noload|-DGT_ABLATE=1"
    "noload-nosync|-DGT_ABLATE=3"
    "s3|-DSTAGES=3"
    "s4|-DSTAGES=4"
    "bk16-s3|-DBK=16 -DSTAGES=3"
    "wniter4-s3|-DWNITER=4 -DSTAGES=3"
    "256x128|-DBM=256 -DBN=128"
    "256x128-s3|-DBM=256 -DBN=128 -DSTAGES=3"
    "256x128-s4|-DBM=256 -DBN=128 -DSTAGES=4"
    "128x128-s3|-DBM=128 -DBN=128 -DSTAGES=3"
)
if [ "${1:-run}" = build ] && [ -n "${REF:-}" ]; then
    mkdir -p "$dir/ref"
    git show "$REF:templates/multistage.cu" > "$dir/ref/multistage.cu"
    for h in $(git ls-tree --name-only "$REF" templates/ | grep '\.cuh$'); do # its headers as they were too
        git show "$REF:$h" > "$dir/ref/${h#templates/}"
    done
    variants=("ref|-I $dir/ref" "${variants[@]}")
elif [ "${1:-run}" = run ] && [ -x "$dir/ablate-ref" ]; then
    variants=("ref|" "${variants[@]}")
fi
# The base values, each overridden by a variant flag of the same name.
defs()
{
    local flags=" $1 " out="$1" kv
    for kv in BM=128 BN=256 BK=8 WM=64 WN=64 WNITER=2 TM=4 TN=4 STAGES=2 MINB=1 RASTER=1; do
        [[ $flags == *" -D${kv%%=*}="* ]] || out+=" -D$kv"
    done
    echo "$out"
}
case "${1:-run}" in
build)
    mkdir -p "$dir"
    fails=0
    gcc -O2 -c -Ikernels -o "$dir/toolkit.o" tests/toolkit.c
    for v in "${variants[@]}"; do
        name=${v%%|*}
        # shellcheck disable=SC2046
        nvcc -O3 -std=c++17 -arch=sm_90 $(defs "${v#*|}") -I templates -I tests -I kernels tests/perf/ablate.cu \
            "$dir/toolkit.o" "${BUILD:-build}/libgemmtune.a" -o "$dir/ablate-$name" -lcublas &
        while [ "$(jobs -r | wc -l)" -ge "${JOBS:-2}" ]; do wait -n || fails=$((fails + 1)); done
    done
    while [ "$(jobs -r | wc -l)" -gt 0 ]; do wait -n || fails=$((fails + 1)); done
    [ "$fails" = 0 ] || { echo "ablate: $fails variants failed to build" >&2; exit 1; }
    ;;
run)
    sizes=${2:-"4096 4096 4096 8192 8192 8192"}
    for v in "${variants[@]}"; do
        name=${v%%|*}
        # shellcheck disable=SC2086
        "$dir/ablate-$name" "$name" $sizes
    done
    ;;
*) echo "usage: $0 build|run [SIZES]" >&2; exit 2 ;;
esac
