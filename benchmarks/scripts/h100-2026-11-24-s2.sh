#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-2026-11-24-s2.sh PART
#   transfer: the staging study (ring shapes, landing buffers, conv2d chunk sizes), PyTorch end to
#             end, the WebGPU end-to-end study with its floor probe, steady-state kernel times
#   conv2d:   the end-to-end study's conv2d rows again (one chunk, out through the landing buffer) and
#             the steady-state conv layer kernels
#   conv:     the seed conv2d and convLayer rows: cpu, Piscina, WebGPU, onnxruntime (1 and 16
#             threads) and the router, with the bench's memory floor and compute ceiling
#   router:   the router's rows alone (every seed case), after a change to how it explores
#   rest:     the seed stencil3d, scan and grid search rows of cpu, Piscina, WebGPU and the router
set -u
part=${1:?part transfer|conv|rest}
. "$(dirname "$0")/h100-bench.sh"
case $part in
  transfer)
    timeout 170 node apps/studies/dist/webgpu/staging.js --out "$OUT/staging" --reps 5 > "$OUT/staging.log" 2>&1; echo "staging rc=$?"; grep -v Warning "$OUT/staging.log" | tail -5; cat "$OUT"/staging/*.md | head -80
    timeout 150 python3 benchmarks/scripts/pytorch-e2e.py --out "$OUT/torch.json" > "$OUT/torch.log" 2>&1; echo "torch rc=$?"; tail -3 "$OUT/torch.log"
    timeout 200 node apps/studies/dist/webgpu/e2e.js --out "$OUT/e2e" --torch "$OUT/torch.json" > "$OUT/e2e.log" 2>&1; echo "e2e rc=$?"; grep -v Warning "$OUT/e2e.log" | tail -5; sed -n '/^| workload/,/^$/p' "$OUT/e2e/webgpu-e2e.md"
    timeout 60 node apps/studies/dist/webgpu/steady.js --out "$OUT/steady.json" > "$OUT/steady.log" 2>&1; echo "steady rc=$?"; grep -v Warning "$OUT/steady.log" | tail -25 ;;
  conv2d)
    timeout 200 node apps/studies/dist/webgpu/e2e.js --out "$OUT/e2e-conv2d" --torch benchmarks/results/pytorch-e2e-h100-2026-11-24-c.json --only conv2d-16x2048-k11,conv2d-16x2048-k11-out,conv2d-1x8192-k5 > "$OUT/e2e-conv2d.log" 2>&1; echo "e2e conv2d rc=$?"; sed -n '/^| workload/,/^$/p' "$OUT/e2e-conv2d/webgpu-e2e.md"
    timeout 150 node apps/studies/dist/webgpu/steady.js --only conv --out "$OUT/steady.json" > "$OUT/steady.log" 2>&1; echo "steady rc=$?"; grep -v Warning "$OUT/steady.log" | tail -12 ;;
  conv)
    timeout 90 node apps/studies/dist/webgpu/e2e.js --out "$OUT/e2e-conv2d" --torch benchmarks/results/pytorch-e2e-h100-2026-11-24-c.json --only conv2d-16x2048-k11,conv2d-16x2048-k11-out > "$OUT/e2e-conv2d.log" 2>&1; echo "e2e conv2d rc=$?"; sed -n '/^| workload/,/^$/p' "$OUT/e2e-conv2d/webgpu-e2e.md"
    bench_conv ;;
  rest)
    bench_rest ;;
  router)
    bench_router ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
