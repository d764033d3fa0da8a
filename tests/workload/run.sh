#!/usr/bin/env bash
# The workload benchmark of issue 26, on the GPU machine, from nothing: real FP32 programs that know nothing of
# gemmtune (a transformer training step at GPT-2 small and BERT-base sizes, an MLP's inference at batch 1-64, and
# third-party cuBLAS programs in C) run without gemmtune, then through `gemmtune exec` after record -> tune, served
# FP32 and served tf32x3. A table comes last (tests/workload/compare.py); logs go to $OUT.
#   bash tests/workload/run.sh [record,tune,measure]        (default: all three, in order)
# Needs a build (carry build/, libcjson.so.1 in build/lib), PyTorch at $PY, and for the third-party programs their
# sources in $THIRDPARTY (fetched on a machine with a network, never committed: see docs/BENCHMARKS.md):
# llm.c's dev/cuda/matmul_backward.cu and darknet. MODELS, STEPS, TUNE_ARGS adjust it.
set -uo pipefail
B=$(cd "${BUILD:-build}" && pwd)
out=${OUT:-workload-out}
PY=${PY:-/opt/torch/.venv/bin/python3}
W=tests/workload
TP=${THIRDPARTY:-.thirdparty}
phases=${1:-record,tune,measure}
models=${MODELS-gpt2 bert}
steps=${STEPS:-50}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export GEMMTUNE_DB=$out/workload.db PYTHONUNBUFFERED=1 # a fresh database: the record loop starts from nothing
rec=$out/calls.txt
gt() { "$B/gemmtune" "$@"; }

# The third-party programs, built once: llm.c's matmul_backward (GPT-2's MLP backward, checked against its own CPU
# reference) and darknet (a C framework whose layers call cublasSgemm), when their sources are there.
build_thirdparty() {
  if [ -f "$TP/dev/cuda/matmul_backward.cu" ] && [ ! -x "$out/matmul_backward" ]; then
    (cd "$TP/dev/cuda" && nvcc -O3 -arch=sm_90 -std=c++17 -Xcompiler -fopenmp matmul_backward.cu -lcublas -lcublasLt \
       -o "$out/matmul_backward") > "$out/build_llmc.log" 2>&1 || echo "workload: llm.c did not build (build_llmc.log)"
  fi
  if [ -f "$TP/darknet/Makefile" ] && [ ! -x "$TP/darknet/darknet" ]; then
    (cd "$TP/darknet" && make -j16 GPU=1 CUDNN=0 OPENCV=0 ARCH="-gencode arch=compute_90,code=sm_90" \
       OPTS="-Ofast -DcudaThreadSynchronize=cudaDeviceSynchronize" NVCC=nvcc COMMON="-Iinclude/ -Isrc/ -I/usr/local/cuda/include" \
       LDFLAGS="-lm -pthread -L/usr/local/cuda/lib64 -lcuda -lcudart -lcublas -lcurand -lstdc++") > "$out/build_darknet.log" 2>&1 \
       || echo "workload: darknet did not build (build_darknet.log)"
  fi
}

# Each program as one command line (run from the repo root); the timed runs add their own arguments.
transformer() { echo "$PY $W/transformer.py --model $1"; }
llmc() { echo "env OMP_NUM_THREADS=16 $out/matmul_backward 1"; }
# darknet reads its cfg/ from its own folder; how: base, record, fp32 or tf32x3.
darknet() {
  local how=$1 n=$2 pre=()
  case $how in
    record) pre=("$B/gemmtune" exec --record "$rec" --) ;;
    fp32) pre=("$B/gemmtune" exec --) ;;
    tf32x3) pre=("$B/gemmtune" exec --math tf32x3 --) ;;
  esac
  (cd "$TP/darknet" && "${pre[@]}" ./darknet speed cfg/vgg-16.cfg "$n")
}

record() {
  build_thirdparty
  for m in $models; do
    gt exec --record "$rec" --log "$out/record_$m.log" -- $(transformer "$m") --steps 2 --warmup 1 > /dev/null
  done
  gt exec --record "$rec" --log "$out/record_mlp.log" -- "$PY" "$W/mlp.py" --reps 2 > /dev/null
  [ -x "$out/matmul_backward" ] && gt exec --record "$rec" -- $(llmc) > /dev/null
  [ -x "$TP/darknet/darknet" ] && darknet record 3 > /dev/null
  echo "workload: recorded $(grep -vc '^#' "$rec") shapes into $rec"
}

tune() {
  local t0=$SECONDS
  gt tune --sizes @"$rec" --math all --no-progress ${TUNE_ARGS:-} > "$out/tune.log" 2>&1
  echo "workload: tune --math all took $((SECONDS - t0)) s ($(tail -1 "$out/tune.log"))"
}

# One program three ways: alone, served FP32, served tf32x3; its JSON results and exec's summaries kept.
measure_one() {
  local name=$1; shift
  "$@" --out "$out/${name}_base.json" > "$out/${name}_base.txt" 2>&1
  gt exec -- "$@" --out "$out/${name}_fp32.json" > "$out/${name}_fp32.txt" 2>&1
  gt exec --math tf32x3 -- "$@" --out "$out/${name}_tf32x3.json" > "$out/${name}_tf32x3.txt" 2>&1
}

measure() {
  for m in $models; do measure_one "$m" $(transformer "$m") --steps "$steps"; done
  measure_one mlp "$PY" "$W/mlp.py"
  if [ -x "$out/matmul_backward" ]; then
    $(llmc) > "$out/llmc_base.txt" 2>&1
    gt exec -- $(llmc) > "$out/llmc_fp32.txt" 2>&1
    gt exec --math tf32x3 -- $(llmc) > "$out/llmc_tf32x3.txt" 2>&1
  fi
  if [ -x "$TP/darknet/darknet" ]; then
    for how in base fp32 tf32x3; do darknet $how 200 > "$out/darknet_$how.txt" 2>&1; done
  fi
  "$PY" "$W/compare.py" "$out" | tee "$out/table.md"
}

for p in ${phases//,/ }; do
  case $p in
    record) record ;;
    tune) tune ;;
    measure) measure ;;
    *) echo "workload: unknown phase $p (record, tune, measure)"; exit 2 ;;
  esac
done
