#!/usr/bin/env bash
# 3xTF32 study: tests/perf/tf32x3.cu, a tensor-core SGEMM that keeps FP32 accuracy (operands split into two TF32
# halves, three MMAs, the big*big chunk folded into an FP32 accumulator every KC k-values), timed and checked
# against cuBLAS SGEMM (pedantic) and TF32 cuBLAS with DGEMM as the reference. Standalone: needs only nvcc and
# cuBLAS, not `make`. Build where nvcc is (no GPU needed), run on the GPU machine:
#   bash tests/perf/tf32x3.sh build                          # -> build-perf/tf32x3
#   [INPUTS=uniform|wide|both] bash tests/perf/tf32x3.sh run [M N K ...]   # default 2048^3 4096^3 8192^3
# The binary prints registers and local memory (spills) per variant, then small exact checks, then one line per
# (shape, inputs, method) and a summary table; it exits 1 if any check fails.
set -euo pipefail
dir=${BUILD_PERF:-build-perf}
case "${1:-run}" in
build)
    mkdir -p "$dir"
    nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo tests/perf/tf32x3.cu -o "$dir/tf32x3" -lcublas
    ;;
run)
    shift || true
    # Clocks and power state first: the timings mean little without them.
    nvidia-smi --format=csv --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit \
        || true
    "$dir/tf32x3" "$@"
    ;;
*) echo "usage: $0 build|run [M N K ...]" >&2; exit 2 ;;
esac
