"""An FP32 transformer training step that knows nothing of gemmtune: the workload benchmark's main program.

Blocks of pre-norm attention (Linear layers with bias, attention through torch.bmm) and a GELU MLP, trained by
SGD on a regression loss over fixed random data, TF32 off. Prints one JSON object: the model, the median step
time and every step's loss, so that runs with and without gemmtune's drop-in can be compared step by step.
    python3 transformer.py --model gpt2 --steps 50 --out gpt2.json      (tests/workload/run.sh runs it)
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = {
    # GPT-2 small's width and context (12 heads of 64), causal attention
    "gpt2": dict(d=768, heads=12, t=1024, batch=8, layers=2, causal=True),
    # BERT-base's width (12 heads of 64) at its usual sequence length, bidirectional
    "bert": dict(d=768, heads=12, t=512, batch=16, layers=2, causal=False),
    # the step of issue 26 (B = 8, T = 512, D = 1024, 8 heads)
    "issue": dict(d=1024, heads=8, t=512, batch=8, layers=2, causal=False),
}


class Block(nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def attention(self, y):
        b, t, d = y.shape
        h, dh = self.heads, d // self.heads
        q, k, v = self.qkv(y).split(d, dim=2)
        q, k, v = (z.view(b, t, h, dh).transpose(1, 2).reshape(b * h, t, dh) for z in (q, k, v))
        att = torch.bmm(q, k.transpose(1, 2)) * (1.0 / math.sqrt(dh))
        if self.causal:
            mask = torch.ones(t, t, device=y.device, dtype=torch.bool).triu(1)
            att = att.masked_fill(mask, float("-inf"))
        o = torch.bmm(F.softmax(att, dim=-1), v)
        return self.proj(o.view(b, h, t, dh).transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def setup(cfg):
    """The step's model, optimizer, input and target for a MODELS entry, made the same way in every run (TF32 off,
    seed 0), so that runs with and without gemmtune compute the same losses (step_profile.py makes them here too)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = nn.Sequential(*[Block(cfg["d"], cfg["heads"], cfg["causal"]) for _ in range(cfg["layers"])]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    x = torch.randn(cfg["batch"], cfg["t"], cfg["d"], device=dev)
    return model, opt, x, torch.randn_like(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="gpt2")
    ap.add_argument("--steps", type=int, default=50, help="timed steps (each one's loss is reported)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first (kernels load)")
    ap.add_argument("--layers", type=int, help="blocks (default: the model's)")
    ap.add_argument("--out", help="also write the JSON here")
    a = ap.parse_args()
    cfg = dict(MODELS[a.model])
    if a.layers:
        cfg["layers"] = a.layers
    model, opt, x, target = setup(cfg)
    losses, times = [], []
    for step in range(a.warmup + a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if step >= a.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
            losses.append(loss.item())
    times.sort()
    res = dict(model=a.model, config=cfg, steps=a.steps, step_ms=times[len(times) // 2], losses=losses,
               gpu=torch.cuda.get_device_name(), torch=torch.__version__)
    text = json.dumps(res)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
