#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-seed-parts.sh PART
# The bench app's seed workload (the course reports' sizes) split so that each part fits one
# 10-minute call (CPU rows at those sizes take minutes); join the parts with
#   node apps/bench/dist/report.js merge --out benchmarks/results bench-*.json
#   a: convLayer (+ the convLayer chunk-overlap bench)
#   b: conv2d, stencil3d, scan, gridSearch (+ the streaming-scan bench)
#   f: Fashion-MNIST on every backend and variant + the WebGPU reliability script
#   g: gpu.js conv2d, stencil3d and scan (with the CPU rows they are checked against) + the
#      WebGPU steady-state sweep of the scan kernels (apps/studies/dist/webgpu/steady.js)
#   i: WebGPU steady-state kernel times (scan defaults, every convLayer candidate), grid search
#      on cpu, gpu.js and Piscina, WebGPU scan rows
#   j: WebGPU steady-state kernel times again (files), convLayer on cpu, gpu.js and WebGPU
#   m: re-measures only the Fashion-MNIST runs that include WebGPU (the committed CPU, Piscina, gpu.js 10 000 runs kept)
#   o, p: re-measures every WebGPU row (after a WebGPU change), convLayer with its CPU rows
set -u
part=${1:?part a|b|f|g|i|j|m|o|p}
bench() { # $1 = ops, $2 = seconds, then extra bench arguments; $name (default: the part) names the files
  local ops=$1 secs=$2 n=${name:-$part}; shift 2
  timeout "$secs" node apps/bench/dist/cli.js --workload seed --op "$ops" --no-progress "$@" \
    --json "$OUT/bench-$n.json" --md "$OUT/bench-$n.md" > "$OUT/bench-$n.out" 2> "$OUT/bench-$n.log"
  echo "bench $n ($ops $*) rc=$?"; tail -c 4000 "$OUT/bench-$n.log"
}
case $part in
  a) bench convLayer 470
     timeout 100 node apps/studies/dist/webgpu/conv-layer-chunks.js --batch 10000 --chunks 1000,2500 --reps 3 --adapter hardware --out "$OUT/conv-layer-chunks.json" 2>&1 | grep -v Warning | tail -14; echo "chunks rc=$?" ;;
  b) bench conv2d,stencil3d,scan,gridSearch 520
     timeout 60 node apps/studies/dist/webgpu/scan-stream.js --total 400000000 --chunk 50000000 --dtype f32 --reps 3 --adapter hardware --out "$OUT/scan-stream.json" 2>&1 | tail -12; echo "scan-stream rc=$?" ;;
  o) bench conv2d,stencil3d,scan,gridSearch 560 --backend webgpu ;;
  p) bench convLayer 560 --backend cpu,webgpu ;;
  m) # Re-measures the Fashion-MNIST runs with WebGPU in them (for a changed WebGPU kernel): the
     # committed cpu/piscina/gpujs 10 000-image runs are kept, the table rebuilt.
     fmo="$OUT/fm"; mkdir -p "$fmo"; fm=apps/fashion-mnist/dist/cli.js
     cp benchmarks/results/fashion-mnist-h100-2026-11-22/fm-10000-{cpu,gpujs,piscina}.json "$fmo/"
     for b in 100 1000; do timeout 120 node $fm --batch $b --compare --json > "$fmo/fm-$b-compare.json" 2>> "$fmo/fm.err"; echo "fm $b compare rc=$?"; done
     for b in 100 1000 10000; do for v in direct tiled gemm auto; do
       [ "$b" != 10000 ] && [ "$v" = gemm ] && continue
       timeout 60 node $fm --batch $b --backend webgpu --variant $v --json > "$fmo/fm-$b-webgpu-$v.json" 2>> "$fmo/fm.err"; echo "fm $b webgpu/$v rc=$?"
     done; done
     node apps/fashion-mnist/dist/table.js "$fmo" --title "Fashion-MNIST CNN on the H100 host" > "$OUT/fashion-mnist.md"; tail -25 "$OUT/fashion-mnist.md"
     tar -C "$OUT" -cf "$OUT/fm.tar" fm && rm -r "$fmo" ;;
  f) fmo="$OUT/fm"; mkdir -p "$fmo"; fm=apps/fashion-mnist/dist/cli.js
     for b in 100 1000; do timeout 120 node $fm --batch $b --compare --json > "$fmo/fm-$b-compare.json" 2>> "$fmo/fm.err"; echo "fm $b compare rc=$?"; done
     for b in 100 1000 10000; do for v in direct tiled gemm auto; do
       [ "$b" != 10000 ] && [ "$v" = gemm ] && continue   # gemm (the default) is in the compare runs
       timeout 60 node $fm --batch $b --backend webgpu --variant $v --json > "$fmo/fm-$b-webgpu-$v.json" 2>> "$fmo/fm.err"; echo "fm $b webgpu/$v rc=$?"
     done; done
     for be in piscina gpujs cpu; do timeout 300 node $fm --batch 10000 --backend $be --json > "$fmo/fm-10000-$be.json" 2>> "$fmo/fm.err"; echo "fm 10000 $be rc=$?"; done
     node apps/fashion-mnist/dist/table.js "$fmo" --title "Fashion-MNIST CNN on the H100 host" > "$OUT/fashion-mnist.md"; tail -25 "$OUT/fashion-mnist.md"
     tar -C "$OUT" -cf "$OUT/fm.tar" fm && rm -r "$fmo"
     timeout 90 node apps/studies/dist/webgpu/reliability.js --out "$OUT/reliability.json" --cycles 200 > "$OUT/reliability.log" 2>&1; echo "reliability rc=$?"; tail -20 "$OUT/reliability.log" ;;
  g) timeout 260 node apps/studies/dist/webgpu/steady.js --sweep --out "$OUT/steady.json" > "$OUT/steady.log" 2>&1; echo "steady rc=$?"; grep -v Warning "$OUT/steady.log" | tail -70
     bench conv2d,stencil3d,scan 300 --backend cpu,gpujs ;;
  i) timeout 150 node apps/studies/dist/webgpu/steady.js --out "$OUT/steady.json" > "$OUT/steady.log" 2>&1; echo "steady rc=$?"; grep -v Warning "$OUT/steady.log" | tail -40
     name=i-grid bench gridSearch 220 --backend cpu,gpujs,piscina
     name=i-scan bench scan 150 --backend webgpu ;;
  j) timeout 100 node apps/studies/dist/webgpu/steady.js --out "$OUT/steady.json" > "$OUT/steady.log" 2>&1; echo "steady rc=$?"; grep -v Warning "$OUT/steady.log" | tail -30
     bench convLayer 470 --backend cpu,gpujs,webgpu ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
