#!/usr/bin/env python3
"""A PyTorch program's skinny FP32 matmuls (issue 28), for the drop-in: X @ B with X of S x K (gemmtune's nn) or a
transposed view of a K x S tensor (tn), B of K x L, in FP32 (TF32 off). Prints, for each, the largest error against
FP64 over the largest |C|, whether C holds a NaN, and the median of 50 timed calls (CUDA events, after 5 warm-up
calls). Run it plainly and under `gemmtune exec --` after tuning the shape (docs/BENCHMARKS.md, 2026-11-28,
twenty-second session):
    gemmtune --family skinnyr,skinny,cublas --sizes 33x8191x4097 --layouts nn,tn
    python3 tests/perf/skinny_torch.py; gemmtune exec -- python3 tests/perf/skinny_torch.py
Usage: skinny_torch.py [S L K]  (default 33 8191 4097)."""
import sys

import torch


def median_us(f, reps=50):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    start, end, times = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True), []
    for _ in range(reps):
        start.record()
        f()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return sorted(times)[reps // 2]


def main():
    s, l, k = (int(v) for v in sys.argv[1:4]) if len(sys.argv) == 4 else (33, 8191, 4097)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    b = torch.randn(k, l, device="cuda")
    for name, x in (("nn", torch.randn(s, k, device="cuda")), ("tn", torch.randn(k, s, device="cuda").t())):
        c, ref = x @ b, x.double() @ b.double()
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        print(f"{name} {s}x{l}x{k}: error / max |C| {err:.2e}, NaN {torch.isnan(c).any().item()}, "
              f"median {median_us(lambda: x @ b):.1f} us")


if __name__ == "__main__":
    main()
