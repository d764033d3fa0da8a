#!/bin/bash
# Host emulation of templates/multistage.cu, for checking indices, edges, split-K and the cp.async group counts
# without a GPU: every CUDA thread is a std::thread, cp.async copies run at wait_group (lazy: a missing wait reads
# NaN-poisoned shared memory) or at issue (EMU_EAGER: a missing barrier lets a copy overwrite a stage in use),
# and ASan catches any access outside an operand. Usage: tests/emu/run.sh [quick]   (needs g++ >= 11)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/emu
mkdir -p "$OUT"
# The template with its inline PTX swapped for the emulator's calls (shim.h).
sed -e 's/^.*cp\.async\.cg\.shared\.global.*$/    emu_cp(dst, src, 16, bytes);/' \
    -e 's/^.*cp\.async\.ca\.shared\.global.*$/    emu_cp(dst, src, 4, bytes);/' \
    -e '/^ *: "memory");$/d' \
    -e 's/^.*ld\.shared\.v4\.f32.*$/    v = emu_lds128(addr);/' \
    -e '/^ *: "=f"(v\.x), "=f"(v\.y), "=f"(v\.z), "=f"(v\.w)$/d' \
    -e '/^ *: "r"(addr)$/d' \
    -e 's/^.*void cp_async_commit().*$/__device__ __forceinline__ void cp_async_commit() { emu_commit(); }/' \
    -e 's/^.*cp\.async\.wait_group.*$/    emu_wait(N);/' \
    -e 's/extern __shared__ float4 smem4\[\];/float4 *smem4 = emu_smem;/' \
    "$ROOT/templates/multistage.cu" > "$OUT/ms_emu.cu"
cp "$ROOT/templates/common.cuh" "$OUT/common.cuh"
SAN="-O1 -g -fsanitize=address,undefined"
gcc $SAN -c -I"$ROOT/kernels" -o "$OUT/ms.o" "$ROOT/kernels/multistage.c"
gcc $SAN -c -I"$ROOT/kernels" -o "$OUT/fam.o" "$ROOT/kernels/family.c"
cfgs=(
"-DBM=256 -DBN=128 -DBK=8 -DWM=64 -DWN=64 -DWNITER=2 -DSTAGES=3 -DRASTER=8"
"-DBM=128 -DBN=256 -DBK=8 -DWM=64 -DWN=64 -DWNITER=4 -DSTAGES=3 -DRASTER=8"
"-DBM=128 -DBN=128 -DBK=8 -DWM=64 -DWN=32 -DWNITER=2 -DSTAGES=2 -DMINB=2 -DRASTER=2"
"-DBM=128 -DBN=128 -DBK=16 -DWM=64 -DWN=64 -DWNITER=2 -DSTAGES=4 -DRASTER=8"
"-DBM=128 -DBN=128 -DBK=8 -DWM=64 -DWN=32 -DWNITER=2 -DSTAGES=3 -DSPLITK=4"
"-DBM=64 -DBN=64 -DBK=8 -DWM=32 -DWN=64 -DWNITER=2 -DSTAGES=3 -DSPLITK=16"
"-DBM=256 -DBN=128 -DBK=8 -DWM=64 -DWN=32 -DWNITER=2 -DSTAGES=3 -DRASTER=3"
"-DBM=256 -DBN=128 -DBK=8 -DWM=64 -DWN=64 -DWNITER=2 -DTN=8 -DSTAGES=3"
"-DBM=64 -DBN=128 -DBK=32 -DWM=64 -DWN=64 -DWNITER=2 -DSTAGES=2 -DSPLITK=3"
)
[ "${1:-}" = quick ] && cfgs=("${cfgs[0]}" "${cfgs[4]}")
fails=0
for c in "${cfgs[@]}"; do
    for l in "0 0" "0 1" "1 0" "1 1"; do
        set -- $l
        echo "== $c GT_TA=$1 GT_TB=$2"
        g++ -std=c++20 $SAN -I"$OUT" -I"$ROOT/kernels" -I"$(dirname "$0")" $c -DGT_TA=$1 -DGT_TB=$2 \
            -o "$OUT/tm" "$ROOT/tests/emu/driver.cpp" "$OUT/ms.o" "$OUT/fam.o" -pthread
        for eager in "" 1; do
            rc=0
            EMU_EAGER=$eager "$OUT/tm" > "$OUT/log" 2>&1 || rc=$?
            grep -v ' ok$' "$OUT/log" || true
            [ $rc = 0 ] || fails=$((fails + 1))
        done
    done
done
echo "emulator: $fails failing runs"
[ $fails = 0 ]
