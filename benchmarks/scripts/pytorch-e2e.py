#!/usr/bin/env python3
"""PyTorch end to end for the workloads of apps/studies/src/webgpu/e2e.ts: numpy in -> cuda -> op ->
numpy out, torch.cuda.synchronize() before the clock stops; median of --reps calls after a warm-up.
The same shapes and work as kernelkit's ops (conv2d 'same' zero padding, 7-point stencil with the
boundary copied, inclusive scan, conv layer 'valid' with bias and ReLU). Writes {"rows": {id: ...}}.

    python3 benchmarks/scripts/pytorch-e2e.py --out FILE [--reps 5]
"""
import argparse
import json
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--reps", type=int, default=5)
args = ap.parse_args()
dev = torch.device("cuda")
rng = np.random.default_rng(1)


def f32(*shape):
    return rng.random(shape, dtype=np.float32) * 2 - 1


def conv2d(batch, size, k):
    x = f32(batch, 1, size, size)
    w = torch.from_numpy(f32(1, 1, k, k)).to(dev)

    def run():
        y = F.conv2d(torch.from_numpy(x).to(dev), w, padding=k // 2)
        out = y.cpu().numpy()
        torch.cuda.synchronize()
        return out

    return run


def stencil(n, steps, c0=0.4, c1=0.1):
    x = f32(n, n, n)

    def run():
        u = torch.from_numpy(x).to(dev)
        v = u.clone()
        for _ in range(steps):
            v[1:-1, 1:-1, 1:-1] = c0 * u[1:-1, 1:-1, 1:-1] + c1 * (
                u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1] + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:]
            )
            u, v = v, u
        out = u.cpu().numpy()
        torch.cuda.synchronize()
        return out

    return run


def scan(n, dtype):
    x = rng.integers(0, 2**32, n, dtype=np.uint32) if dtype == "u32" else f32(n)

    def run():
        if dtype == "u32":
            # int32 cumsum wraps like u32 addition; the bits are viewed back as u32.
            y = torch.cumsum(torch.from_numpy(x.view(np.int32)).to(dev), 0, dtype=torch.int32)
            out = y.cpu().numpy().view(np.uint32)
        else:
            out = torch.cumsum(torch.from_numpy(x).to(dev), 0).cpu().numpy()
        torch.cuda.synchronize()
        return out

    return run


def conv_layer(batch, channels, size, maps, k):
    x = f32(batch, channels, size, size)
    w = torch.from_numpy(f32(maps, channels, k, k)).to(dev)
    b = torch.from_numpy(f32(maps)).to(dev)

    def run():
        y = F.relu(F.conv2d(torch.from_numpy(x).to(dev), w, b))
        out = y.cpu().numpy()
        torch.cuda.synchronize()
        return out

    return run


WORKLOADS = {
    "conv2d-16x2048-k11": lambda: conv2d(16, 2048, 11),
    "conv2d-1x8192-k5": lambda: conv2d(1, 8192, 5),
    "stencil-512-s10": lambda: stencil(512, 10),
    "scan-40M-u32": lambda: scan(40_000_000, "u32"),
    "scan-400M-f32": lambda: scan(400_000_000, "f32"),
    "convlayer-L1-b10000": lambda: conv_layer(10_000, 1, 86, 4, 7),
    "convlayer-L2-b10000": lambda: conv_layer(10_000, 4, 40, 16, 7),
}

torch.backends.cudnn.benchmark = True
rows = {}
for wid, make in WORKLOADS.items():
    run = make()
    run()  # warm-up: cuDNN's algorithm pick, the caching allocator
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1000)
    rows[wid] = {"endToEndMs": statistics.median(times), "runsMs": times}
    print(wid, rows[wid], flush=True)
    del run
    torch.cuda.empty_cache()

with open(args.out, "w") as f:
    json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "reps": args.reps, "rows": rows}, f, indent=1)
