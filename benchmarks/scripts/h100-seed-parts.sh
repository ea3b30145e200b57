#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-seed-parts.sh PART
# The seed workload of the bench app split so that each part fits one 10-minute call (CPU rows at
# the seeds' sizes take minutes); join the parts with
#   node apps/bench/dist/report.js merge --out benchmarks/results bench-*.json
#   a: convLayer (+ the convLayer chunk-overlap bench)
#   b: conv2d, stencil3d, scan, gridSearch (+ the streaming-scan bench)
#   f: Fashion-MNIST on every backend and variant + the WebGPU reliability script
set -u
part=${1:?part a|b|c|f}
bench() { # $1 = ops, $2 = seconds
  timeout "$2" node apps/bench/dist/cli.js --workload seed --op "$1" --no-progress \
    --json "$OUT/bench-$part.json" --md "$OUT/bench-$part.md" > "$OUT/bench-$part.out" 2> "$OUT/bench-$part.log"
  echo "bench $part ($1) rc=$?"; tail -c 6000 "$OUT/bench-$part.log"
}
case $part in
  a) bench convLayer 470
     timeout 100 node packages/webgpu/dist/bench/conv-layer-chunks.js --batch 10000 --chunks 1000,2500 --reps 3 --adapter hardware --out "$OUT/conv-layer-chunks.json" 2>&1 | grep -v Warning | tail -14; echo "chunks rc=$?" ;;
  b) bench conv2d,stencil3d,scan,gridSearch 520
     timeout 60 node packages/webgpu/dist/bench/scan-stream.js --total 400000000 --chunk 50000000 --dtype f32 --reps 3 --adapter hardware --out "$OUT/scan-stream.json" 2>&1 | tail -12; echo "scan-stream rc=$?" ;;
  f) fmo="$OUT/fm"; mkdir -p "$fmo"; fm=apps/fashion-mnist/dist/cli.js
     for b in 100 1000; do timeout 120 node $fm --batch $b --compare --json > "$fmo/fm-$b-compare.json" 2>> "$fmo/fm.err"; echo "fm $b compare rc=$?"; done
     for b in 100 1000 10000; do for v in direct tiled gemm auto; do
       [ "$b" != 10000 ] && [ "$v" = gemm ] && continue   # gemm (the default) is in the compare runs
       timeout 60 node $fm --batch $b --backend webgpu --variant $v --json > "$fmo/fm-$b-webgpu-$v.json" 2>> "$fmo/fm.err"; echo "fm $b webgpu/$v rc=$?"
     done; done
     for be in piscina gpujs cpu; do timeout 300 node $fm --batch 10000 --backend $be --json > "$fmo/fm-10000-$be.json" 2>> "$fmo/fm.err"; echo "fm 10000 $be rc=$?"; done
     node apps/fashion-mnist/dist/table.js "$fmo" --title "Fashion-MNIST CNN on the H100 host" > "$OUT/fashion-mnist.md"; tail -25 "$OUT/fashion-mnist.md"
     tar -C "$OUT" -cf "$OUT/fm.tar" fm && rm -r "$fmo"
     timeout 90 node packages/webgpu/dist/bench/reliability.js --out "$OUT/reliability.json" --cycles 200 > "$OUT/reliability.log" 2>&1; echo "reliability rc=$?"; tail -20 "$OUT/reliability.log" ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
