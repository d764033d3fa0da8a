#!/usr/bin/env bash
# The CPU emulator, one entry point for every family (no GPU): builds tests/emu/driver.cpp against the family's
# template for each candidate and layout with ASan and UBSan, and runs it on odd shapes, padded, rounded and
# misaligned operands, beta 0 over NaN C and beta 0.5, checked with the test toolkit's validator (the product's
# rule). A template with cp.async (multistage) runs twice: copies done at wait_group (lazy: a missing wait reads
# NaN-poisoned shared memory) and at issue (EMU_EAGER: a missing barrier overwrites a stage in use).
# Usage, after `make` (needs g++ >= 11):
#   tests/emu/run.sh [quick] [FAMILY | FAMILY:PARAMS]...      (no family: multistage)
# A FAMILY runs its first and last candidates and $SAMPLE (default 2) more spread over `gemmtune candidates`;
# ozaki (or ozaki:NMOD) runs tests/emu/ozaki_driver.cpp, the backend's whole sequence, for 7, 8 and 9 moduli;
# multistage adds its key configurations (pipeline depths, rasters, split-K, stream-K, 16-wide tiles, MINB,
# TN=8). quick: a family's first and last candidates only, and of multistage's key configurations the first, a
# split-K and a stream-K one. Every run takes every case (tests/emu/driver.cpp). $JOBS builds and runs at once
# (default: the cores).
# Slow: a minute or more per candidate and layout. Logs in build/emu/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUT=$BUILD/emu
SAN="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all"
quick=""
[ "${1:-}" = quick ] && quick=quick && shift
[ $# -gt 0 ] || set -- multistage
for f in "$BUILD/gemmtune" "$BUILD/libgemmtune.a"; do
    [ -e "$f" ] || { echo "emulator: $f is missing: run make first" >&2; exit 2; }
done
mkdir -p "$OUT"
gcc $SAN -std=c11 -c -I"$ROOT/kernels" -o "$OUT/toolkit.o" "$ROOT/tests/toolkit.c"

# Multistage's key configurations, in its parameter order.
ms_keys=(
"BM=256,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=8,SPLITK=1"
"BM=128,BN=256,BK=8,WM=64,WN=64,WNITER=4,TM=4,TN=4,STAGES=3,MINB=1,RASTER=8,SPLITK=1"
"BM=128,BN=128,BK=8,WM=64,WN=32,WNITER=2,TM=4,TN=4,STAGES=2,MINB=2,RASTER=2,SPLITK=1"
"BM=128,BN=128,BK=16,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=4,MINB=1,RASTER=8,SPLITK=1"
"BM=128,BN=128,BK=8,WM=64,WN=32,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=4"
"BM=64,BN=64,BK=8,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=16"
"BM=256,BN=128,BK=8,WM=64,WN=32,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=3,SPLITK=1"
"BM=256,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=8,STAGES=3,MINB=1,RASTER=1,SPLITK=1"
"BM=64,BN=128,BK=32,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=1,RASTER=1,SPLITK=3"
"BM=64,BN=64,BK=8,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=2,RASTER=1,SPLITK=1,SK=2"
"BM=128,BN=128,BK=8,WM=64,WN=32,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=8,SPLITK=1,SK=1"
"BM=16,BN=128,BK=8,WM=16,WN=64,WNITER=1,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=1,SK=2"
"BM=128,BN=16,BK=8,WM=64,WN=16,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=4"
"BM=128,BN=128,BK=8,WM=64,WN=32,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=2,EDGE=1"
"BM=64,BN=96,BK=8,WM=64,WN=32,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=4,EDGE=1"
"BM=128,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=1,SK=2,KT=1"
"BM=128,BN=96,BK=8,WM=64,WN=48,WNITER=3,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=1,SK=2"
"BM=96,BN=128,BK=8,WM=48,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=4"
)

# A family's template, as its descriptor names it (.template_name in kernels/*.c): a family may share another's
# (skinny3 runs skinny.cu).
template_of()
{
    awk -v f="^const gt_family gt_family_$1 = " 'FNR == 1 || /^};/ { on = 0 } $0 ~ f { on = 1 }
        on && /\.template_name = "/ { sub(/.*\.template_name = "/, ""); sub(/\.cu".*/, ""); print; exit }' \
        "$ROOT"/kernels/*.c
}

# The template as host C++: multistage's inline PTX swapped for the emulator's calls (tests/emu/emu.h, which also
# stands in for templates/async.cuh, stream.cuh and tf32.cuh).
emulable()
{
    sed -e '/^ *: "memory");$/d' \
        -e 's/^.*ld\.shared\.v4\.f32.*$/    v = emu_lds128(addr);/' \
        -e 's/^.*st\.shared\.f32.*$/    emu_sts32(addr, v);/' \
        -e 's/^.*ld\.global\.nc\.L2::128B\.v4\.f32.*$/    v = emu_ld128((const float4 *)src);/' \
        -e '/^ *: "l"(src));$/d' \
        -e '/^ *: "=f"(v\.x), "=f"(v\.y), "=f"(v\.z), "=f"(v\.w)$/d' \
        -e '/^ *: "r"(addr)$/d' \
        -e 's/extern __shared__ float4 smem4\[\];/float4 *smem4 = emu_smem;/' \
        "$ROOT/templates/$1.cu" > "$OUT/$1.cu"
    if grep -q 'asm' "$OUT/$1.cu"; then echo "emulator: inline PTX left in $1.cu" >&2; exit 2; fi
}

# Candidates of a family: first, last and $SAMPLE spread between (plus multistage's key configurations).
pick()
{
    local fam=$1 sample=${SAMPLE:-2}
    [ -n "$quick" ] && sample=0
    "$BUILD/gemmtune" candidates --family "$fam" | awk -v s="$sample" '{p[NR] = $2}
        END { if (!NR) exit 1; print p[1]; for (i = 1; i <= s; ++i) { k = int(1 + i * (NR - 1) / (s + 1));
              if (k > 1 && k < NR) print p[k] } if (NR > 1) print p[NR] }'
    if [ "$fam" = multistage ]; then
        if [ -n "$quick" ]; then printf '%s\n' "${ms_keys[0]}" "${ms_keys[4]}" "${ms_keys[9]}"; else printf '%s\n' "${ms_keys[@]}"; fi
    fi
}

# Build and run one candidate of a family (and its template) in one layout; prints its verdict and writes it to
# <exe>.verdict.
one()
{
    local fam=$1 tmpl=$2 params=$3 ta=$4 tb=$5 exe log lay rc=0
    exe=$OUT/$fam-$(echo "$params" | md5sum | cut -c1-8)-$ta$tb
    log=$exe.log
    lay=$([ "$ta" = 1 ] && echo t || echo n)$([ "$tb" = 1 ] && echo t || echo n)
    # shellcheck disable=SC2046
    g++ -std=c++20 $SAN -w -I"$OUT" -I"$ROOT/templates" -I"$ROOT/kernels" -I"$ROOT/tests" -I"$ROOT/tests/emu" \
        -DTEMPLATE="\"$tmpl.cu\"" -DGT_EMU_FAMILY="\"$fam\"" -DGT_EMU_PARAMS="\"$params\"" -DGT_TA="$ta" \
        -DGT_TB="$tb" $(echo "$params" | tr ',' '\n' | sed 's/^/-D/') "$ROOT/tests/emu/driver.cpp" \
        "$OUT/toolkit.o" "$BUILD/libgemmtune.a" -lm -pthread -o "$exe" > "$log" 2>&1 || rc=1
    for eager in "" $(grep -q gt_cp_async "$OUT/$tmpl.cu" && echo 1); do
        [ $rc = 0 ] || break
        echo "== EMU_EAGER=$eager" >> "$log"
        ASAN_OPTIONS=detect_leaks=0 EMU_EAGER=$eager "$exe" >> "$log" 2>&1 || rc=1
    done
    if [ $rc = 0 ]; then echo "ok $fam $params $lay" | tee "$exe.verdict"; return; fi
    { echo "FAIL $fam $params $lay (log: $log)"; grep -v ' ok$' "$log" | head -20; } | tee "$exe.verdict"
}

# Family ozaki (a library family: its kernels around cuBLASLt's products, not a gt_gemm) has its own driver,
# tests/emu/ozaki_driver.cpp, which runs the backend's whole sequence for one moduli count.
one_ozaki()
{
    local nmod=$1 exe=$OUT/ozaki-$1 rc=0
    g++ -std=c++20 $SAN -w -I"$ROOT/templates" -I"$ROOT/kernels" -I"$ROOT/tests" -I"$ROOT/tests/emu" -DNMOD="$nmod" \
        "$ROOT/tests/emu/ozaki_driver.cpp" "$BUILD/libgemmtune.a" -lm -pthread -o "$exe" > "$exe.log" 2>&1 || rc=1
    [ $rc = 0 ] && { ASAN_OPTIONS=detect_leaks=0 "$exe" >> "$exe.log" 2>&1 || rc=1; }
    if [ $rc = 0 ]; then echo "ok ozaki NMOD=$nmod" | tee "$exe.verdict"; return; fi
    { echo "FAIL ozaki NMOD=$nmod (log: $exe.log)"; grep -v ' 0 wrong, 0 padding' "$exe.log" | head -20; } |
        tee "$exe.verdict"
}

rm -f "$OUT"/*.verdict
jobs_max=${JOBS:-$(nproc)}
runs=0
declare -A made # each family's template rewritten once: a second rewrite would race with its running builds
for spec in "$@"; do
    fam=${spec%%:*}
    if [ "$fam" = ozaki ]; then # ozaki:N runs N moduli; ozaki the space's 7 and 8 and the most legal, 9
        if [ "$spec" != ozaki ]; then counts=${spec#ozaki:}; elif [ -n "$quick" ]; then counts=8; else counts="7 8 9"; fi
        for nmod in $counts; do
            while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
            one_ozaki "$nmod" &
            runs=$((runs + 1))
        done
        continue
    fi
    tmpl=$(template_of "$fam")
    [ -n "$tmpl" ] || { echo "emulator: no template for family $fam" >&2; exit 2; }
    [ -n "${made[$tmpl]:-}" ] || { emulable "$tmpl"; made[$tmpl]=1; }
    if [ "$spec" != "$fam" ]; then cands=${spec#*:}; else cands=$(pick "$fam"); fi
    for params in $cands; do
        for lay in "0 0" "0 1" "1 0" "1 1"; do
            while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
            # shellcheck disable=SC2086
            one "$fam" "$tmpl" "$params" $lay &
            runs=$((runs + 1))
        done
    done
done
wait
fails=$(cat "$OUT"/*.verdict 2>/dev/null | grep -c '^FAIL' || true)
echo "emulator: $fails of $runs candidate layouts failing"
[ "$fails" = 0 ] && [ "$(cat "$OUT"/*.verdict | grep -c '^ok')" = "$runs" ]
