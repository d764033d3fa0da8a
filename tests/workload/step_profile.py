"""Where a transformer training step's GPU time goes: GEMMs (what gemmtune can serve) against everything else.

Runs tests/workload/transformer.py's step (same model, data and settings) under torch.profiler and prints the GPU
time per step of each GEMM shape, as PyTorch called it (aten::mm / addmm / bmm and their input shapes), and of the
rest, so that a speed-up of the GEMMs can be turned into the step's bound:
    step at GEMM speed-up s  =  other + gemm / s.
Works unchanged under `gemmtune exec` (then the GEMM kernels are gemmtune's).
    python3 step_profile.py --model gpt2 [--steps 5] [--out prof.json]
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from transformer import MODELS, setup

GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear")


def kernel_us(evt):
    """GPU time of the kernels an op launched, in microseconds (device_time_total: PyTorch 2.4 and later)."""
    for name in ("device_time_total", "cuda_time_total"):
        if hasattr(evt, name):
            return getattr(evt, name)
    return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="gpt2")
    ap.add_argument("--steps", type=int, default=5, help="profiled steps (after 3 warm-up steps)")
    ap.add_argument("--out", help="also write the JSON here")
    a = ap.parse_args()
    model, opt, x, target = setup(MODELS[a.model])

    def step():
        opt.zero_grad(set_to_none=True)
        F.mse_loss(model(x), target).backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
    kernels = sum(e.self_device_time_total for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA)
    gemms = []
    for e in prof.key_averages(group_by_input_shape=True):
        if e.key in GEMM_OPS and e.key not in ("aten::matmul", "aten::linear"):
            gemms.append(dict(op=e.key, shapes=str(e.input_shapes), calls=e.count // a.steps,
                              us=kernel_us(e) / a.steps))
    gemms.sort(key=lambda g: -g["us"])
    gemm_us = sum(g["us"] for g in gemms)
    total_us = kernels / a.steps
    print(f"{a.model}: {total_us / 1e3:.2f} ms of GPU kernels a step; GEMMs {gemm_us / 1e3:.2f} ms "
          f"({100 * gemm_us / max(total_us, 1e-9):.0f}%), the rest {(total_us - gemm_us) / 1e3:.2f} ms")
    for s in (1.5, 1.8, 2.0, 2.5):
        print(f"  GEMMs {s}x faster: the step's kernels at most {total_us / (total_us - gemm_us + gemm_us / s):.2f}x")
    print(f"  {'op':<12} {'calls':>5} {'us/step':>9}  input shapes")
    for g in gemms:
        print(f"  {g['op']:<12} {g['calls']:>5} {g['us']:>9.1f}  {g['shapes']}")
    others = sorted((e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: -e.self_device_time_total)[:12]
    print("  heaviest kernels:")
    for e in others:
        print(f"    {e.self_device_time_total / a.steps:9.1f} us/step  {e.count // a.steps:4d} calls  {e.key[:100]}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(dict(model=a.model, total_us=total_us, gemm_us=gemm_us, gemms=gemms), f)


if __name__ == "__main__":
    main()
