#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: the Fashion-MNIST app at the course reports'
# batch sizes on every backend (and every WebGPU convLayer variant at 10 000), then the gpu.js bench
# in webgpu mode. Writes into $OUT.
set -u
fmo="$OUT/fm"; mkdir -p "$fmo"
fm=apps/fashion-mnist/dist/cli.js
for b in 100 1000; do
  timeout 120 node $fm --batch $b --compare --json > "$fmo/fm-$b-compare.json" 2> "$fmo/fm.err"; echo "fashion-mnist batch $b compare rc=$?"
done
for v in direct tiled gemm; do
  timeout 60 node $fm --batch 10000 --backend webgpu --variant $v --json > "$fmo/fm-10000-webgpu-$v.json" 2>> "$fmo/fm.err"; echo "fashion-mnist 10000 webgpu/$v rc=$?"
done
for be in piscina gpujs; do
  timeout 90 node $fm --batch 10000 --backend $be --json > "$fmo/fm-10000-$be.json" 2>> "$fmo/fm.err"; echo "fashion-mnist 10000 $be rc=$?"
done
tar -C "$OUT" -cf "$OUT/fm.tar" fm && rm -r "$fmo"
timeout 270 node apps/studies/dist/gpujs/compare.js --out "$OUT" --mode webgpu > "$OUT/gpujs.log" 2>&1; echo "gpujs compare rc=$?"
tail -30 "$OUT/gpujs.log"
