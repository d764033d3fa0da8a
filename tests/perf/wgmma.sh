#!/usr/bin/env bash
# Builds tests/perf/wgmma.cu for a list of tf32x3wg variants (where nvcc is; no GPU needed) and runs them on the
# GPU machine: exact and FP64 checks in the given layout, then time against SGEMM (env ONLY_TIME=1: timing only,
# PAD=n: leading dimensions n past the matrix).
#   bash tests/perf/wgmma.sh build [VARIANT ...]     # -> build-perf/wg_<name>
#   bash tests/perf/wgmma.sh run [M N K ...]          # every built variant; a table of TIME lines last
# (env ONLY_BIG=1: only the given shapes, checked on uniform and wide inputs, then timed; a variant built with
# -DGT_BATCHED=1 times BATCH=n matrices of M / n rows, each with a B of its own or, with SHAREB=1, one B for all)
# A variant is "name:-DBM=128 -DBN=128 ..." (defaults below); -DTEMPLATE='"tf32x3ws.cu"' builds another template
# (default tf32x3wg.cu), found in templates/ or tests/perf/ (the host-launch studies: blas3.cu, ozaki_study.cu
# with -DNMOD=7..9; OZ_PHASES=1 times each step of the latter).
set -euo pipefail
dir=${BUILD_PERF:-build-perf}
variants=(
    "b1nn:-DBM=128 -DBN=128 -DBK=32 -DSTAGES=3 -DPF=1"
    "b1nt:-DBM=128 -DBN=128 -DBK=32 -DSTAGES=3 -DPF=1 -DGT_TB=1"
    "b1tn:-DBM=128 -DBN=128 -DBK=32 -DSTAGES=3 -DPF=1 -DGT_TA=1"
    "b1tt:-DBM=128 -DBN=128 -DBK=32 -DSTAGES=3 -DPF=1 -DGT_TA=1 -DGT_TB=1"
    "b2nn:-DBM=128 -DBN=128 -DBK=32 -DSTAGES=2 -DPF=1"
    "b3nn:-DBM=128 -DBN=96 -DBK=32 -DSTAGES=3 -DPF=1"
    "b4nn:-DBM=128 -DBN=128 -DBK=32 -DSTAGES=3 -DPF=0"
)
case "${1:-run}" in
build)
    shift || true
    [ $# -gt 0 ] && variants=("$@")
    mkdir -p "$dir"
    for v in "${variants[@]}"; do
        name=${v%%:*} defs=${v#*:}
        # shellcheck disable=SC2086
        case $defs in *TEMPLATE*) tpl=() ;; *) tpl=(-DTEMPLATE='"tf32x3wg.cu"') ;; esac
        nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Itemplates -Itests/perf "${tpl[@]}" $defs \
            -Xptxas -v tests/perf/wgmma.cu -o "$dir/wg_$name" -lcublas 2>&1 | grep -E "registers|spill|error|warn" || true &
    done
    wait
    ;;
run)
    shift || true
    nvidia-smi --format=csv --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit || true
    for b in "$dir"/wg_*; do
        echo "== $b"
        timeout "${TIMEOUT:-300}" "$b" "$@" || echo "FAILED: $b"
    done 2>&1 | tee "$dir/run.log"
    grep -E "^== |^TIME|FAIL" "$dir/run.log"
    ;;
*) echo "usage: $0 build [variant ...] | run [M N K ...]" >&2; exit 2 ;;
esac
