#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-2026-11-24-s3.sh PART
#   timeline: where a conv2d/scan end-to-end call's wall time goes (Dawn maps, submits, host copies),
#             and the same calls alone, beside Piscina and cpu, and after disposing them
#   e2e:      the end-to-end study (floor probe, PyTorch beside it) for every seed workload, fresh
#             and into out, and the steady-state kernel times
#   conv:     the seed conv2d and convLayer rows: cpu, Piscina, WebGPU, onnxruntime (1 and 16
#             threads) and the router, with the bench's memory floor and compute ceiling
#   rest:     the seed stencil3d, scan and grid search rows of cpu, Piscina, WebGPU and the router
#   router:   the router's rows alone (every seed case)
set -u
part=${1:?part timeline|e2e|conv|rest|router}
. "$(dirname "$0")/h100-bench.sh"
case $part in
  timeline)
    timeout 200 node apps/studies/dist/webgpu/timeline.js --out "$OUT/timeline" --reps 3 ${TIMELINE_ARGS:---mix} > "$OUT/timeline.log" 2>&1; echo "timeline rc=$?"; grep -v Warning "$OUT/timeline.log" | tail -3; cat "$OUT/timeline/webgpu-timeline.md" ;;
  e2e)
    timeout 150 python3 benchmarks/scripts/pytorch-e2e.py --out "$OUT/torch.json" > "$OUT/torch.log" 2>&1; echo "torch rc=$?"; tail -3 "$OUT/torch.log"
    timeout 240 node apps/studies/dist/webgpu/e2e.js --out "$OUT/e2e" --torch "$OUT/torch.json" > "$OUT/e2e.log" 2>&1; echo "e2e rc=$?"; grep -v Warning "$OUT/e2e.log" | tail -5; sed -n '/^| workload/,/^$/p' "$OUT/e2e/webgpu-e2e.md"
    timeout 100 node apps/studies/dist/webgpu/steady.js --out "$OUT/steady.json" > "$OUT/steady.log" 2>&1; echo "steady rc=$?"; grep -v Warning "$OUT/steady.log" | tail -25 ;;
  conv)
    bench_conv ;;
  rest)
    bench_rest ;;
  router)
    bench_router ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
