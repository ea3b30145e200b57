#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-2026-11-24.sh PART
#   e2e:   PyTorch end to end, then the WebGPU end-to-end study with its floor probe (same run),
#          the 4e9-element streaming scan, steady-state kernel times (regression check)
#   conv:  the seed conv2d and convLayer rows (default variants): cpu, Piscina, WebGPU, onnxruntime
#          (1 and 16 threads) and the router, with the bench's memory floor, in one run; then the
#          2-thread split study on two cores
#   final: PyTorch and the WebGPU end-to-end study again (after the pipeline change), one against
#          two devices on the one GPU (sharding overhead), routed against direct calls
#   rest:  the seed stencil3d, scan and grid search rows (default variants) of cpu, Piscina, WebGPU
#          and the router; then the Piscina scaling table for conv2d and convLayer
set -u
part=${1:?part e2e|conv|rest}
. "$(dirname "$0")/h100-bench.sh"
case $part in
  e2e)
    timeout 150 python3 benchmarks/scripts/pytorch-e2e.py --out "$OUT/torch.json" > "$OUT/torch.log" 2>&1; echo "torch rc=$?"; tail -3 "$OUT/torch.log"
    timeout 200 node apps/studies/dist/webgpu/e2e.js --out "$OUT/e2e" --torch "$OUT/torch.json" > "$OUT/e2e.log" 2>&1; echo "e2e rc=$?"; grep -v Warning "$OUT/e2e.log" | tail -5; cat "$OUT/e2e/webgpu-e2e.md" | head -40
    timeout 120 node apps/studies/dist/webgpu/scan-huge.js --adapter hardware --workers 15 --out "$OUT/scan-huge" > "$OUT/scan-huge.log" 2>&1; echo "scan-huge rc=$?"; grep -v Warning "$OUT/scan-huge.log" | tail -15
    timeout 120 node apps/studies/dist/webgpu/steady.js --out "$OUT/steady.json" > "$OUT/steady.log" 2>&1; echo "steady rc=$?"; grep -v Warning "$OUT/steady.log" | tail -25 ;;
  conv)
    bench conv 400 --op conv2d,convLayer --backend cpu,piscina,webgpu,onnxruntime,kernelkit --variant wasm-simd,auto,gemm,1t,16t,routed
    # Two threads on two physical cores of a quiet machine: does the 2-thread split scale?
    timeout 150 taskset -c 2,3 node apps/studies/dist/piscina/split.js --workloads conv2d-k11,conv2d-k5,l1-b100,l2-b100,l1-b1000 --rounds 9 --patience 20 --out "$OUT/split" > "$OUT/split.log" 2>&1; echo "split rc=$?"; tail -30 "$OUT/split/piscina-split.md" ;;
  rest)
    bench rest 400 --op stencil3d,scan,gridSearch --backend cpu,piscina,webgpu,kernelkit --variant wasm-simd,sequential,two-pass,pruned,streamed,decoupled-subgroups,decoupled,routed
    timeout 170 node apps/studies/dist/piscina/scaling.js --ops conv2d,convLayer --budget-s 160 --out "$OUT/scaling" > "$OUT/scaling.log" 2>&1; echo "scaling rc=$?"; tail -20 "$OUT/scaling/piscina-scaling.md" ;;
  final)
    timeout 150 python3 benchmarks/scripts/pytorch-e2e.py --out "$OUT/torch.json" > "$OUT/torch.log" 2>&1; echo "torch rc=$?"
    timeout 200 node apps/studies/dist/webgpu/e2e.js --out "$OUT/e2e" --torch "$OUT/torch.json" > "$OUT/e2e.log" 2>&1; echo "e2e rc=$?"; sed -n '/^| workload/,/^$/p' "$OUT/e2e/webgpu-e2e.md"
    timeout 200 node apps/studies/dist/webgpu/multi-device.js --out "$OUT/multi" --reps 5 --devices 2 > "$OUT/multi.log" 2>&1; echo "multi-device rc=$?"; grep -v '^Warning\|^    at \|^$' "$OUT/multi.log" | tail -5; cat "$OUT/multi/webgpu-multi-device.md"
    timeout 150 node apps/studies/dist/router/overhead.js --workload seed --cases conv2d-16x2048-k11,conv2d-1x8192-k5,stencil-512-s10,scan-400M-f32 --rounds 5 --calibration child > "$OUT/overhead.log" 2>&1; echo "overhead rc=$?"; grep -v '^Warning\|^    at \|^$' "$OUT/overhead.log" | tail -25 ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
