#!/usr/bin/env bash
# Runs the test binary's tests in N parts at once (gt_tests --shard I/N; N = the cores, 1 to 4, or $GT_SHARDS):
# part 0 prints as it goes, the others' output follows once all are done, then one line sums them up:
# "N passed, N failed, N skipped". Exits 1 when any part failed.
#   tests/shards.sh BUILD/gt_tests --cpu [name filters...]
set -u
bin=$1 kind=$2
shift 2
n=${GT_SHARDS:-$(nproc)}
((n > 4)) && n=4
((n < 1)) && n=1
dir=$(mktemp -d "${TMPDIR:-/tmp}/gt_shards.XXXXXX") || exit 1
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for ((i = 1; i < n; ++i)); do
    "$bin" "$kind" --shard "$i/$n" "$@" > "$dir/$i.log" 2>&1 &
    pids+=($!)
done
"$bin" "$kind" --shard "0/$n" "$@" 2>&1 | tee "$dir/0.log"
rc=${PIPESTATUS[0]}
for ((i = 1; i < n; ++i)); do
    wait "${pids[i - 1]}" || rc=1
    echo "---- part $i of $n ----"
    cat "$dir/$i.log"
done
pids=()
total=(0 0 0)
for ((i = 0; i < n; ++i)); do
    read -r p f s < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$dir/$i.log" | tail -1)
    [ -z "${p:-}" ] && { echo "tests/shards.sh: part $i of $n ended without its summary line"; rc=1; continue; }
    total=($((total[0] + p)) $((total[1] + f)) $((total[2] + s)))
    unset p f s
done
((total[1] > 0)) && rc=1
echo "${total[0]} passed, ${total[1]} failed, ${total[2]} skipped"
exit $((rc != 0))
