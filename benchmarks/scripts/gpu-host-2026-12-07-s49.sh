#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-07-s49.sh PART[+PART...]
# gctrace: why do routed WebGPU calls run slower than WebGPU alone (issue 16: grid search, stencil
# N=64 and convLayer L1 B=100 on the best row's backend and variant)? One process per line of
# router-grid-probe.mjs (60 calls), direct and auto in turns, each under node --trace-gc, so
# each garbage collection's kind, heap sizes and reason show beside the calls' times.
# Then one CPU profile (node --cpu-prof) of each for the grid search, 120 calls.
# prof: CPU profiles of the main thread, direct, auto and fixed, for stencil N=64 and the grid search.
# misses-gpu, misses-mixed: s48's nine misses on the H100, 3 rounds (the row of each backend's median round).
# race-misses: as s47's part of that name. Everything in $OUT/TAG-PART.tar.gz (TAG: $SESSION_TAG, else s49).
set -u
. "$(dirname "$0")/h100-bench.sh"
parts=${1:?usage: gpu-host-2026-12-07-s49.sh gctrace|prof|misses-gpu|misses-mixed|race-misses[+PART...]}
tag=${SESSION_TAG:-s49}
traced() { local f="$OUT/gc-$1-$2-$3.txt"; shift 3; echo "== $*" > "$f"; timeout 150 node --trace-gc benchmarks/scripts/router-grid-probe.mjs "$@" >> "$f" 2>&1; tail -1 "$f" | cut -c1-400; }
for part in ${parts//+/ }; do
host_begin
case "$part" in
  gctrace)
    export KK_CALLS=60
    for id in grid-cs610-8 stencil-64-s100 convlayer-L1-b100; do
      for n in 1 2; do traced "$id" direct "$n" direct "$id"; traced "$id" auto "$n" auto "$id"; done
    done
    # One CPU profile each (node --cpu-prof) of direct and auto: where the main thread's time goes.
    for m in direct auto; do mkdir -p "$OUT/prof-$m"; KK_CALLS=120 timeout 150 node --cpu-prof --cpu-prof-dir="$OUT/prof-$m" benchmarks/scripts/router-grid-probe.mjs $m grid-cs610-8 2>/dev/null | tail -1 | cut -c1-300; done
    ;;
  prof)
    # CPU profiles (node --cpu-prof), 200 calls each, in turns: WebGPU alone, the router, and the
    # facade fixed on WebGPU (no calibration, no trials), stencil N=64 then the grid search.
    export KK_CALLS=200
    for id in stencil-64-s100 grid-cs610-8; do for n in 1 2; do for m in direct auto fixed; do
      mkdir -p "$OUT/prof-$id-$m-$n"; timeout 150 node --cpu-prof --cpu-prof-dir="$OUT/prof-$id-$m-$n" benchmarks/scripts/router-grid-probe.mjs $m $id > "$OUT/prof-$id-$m-$n/out.json" 2>/dev/null; cut -c1-160 "$OUT/prof-$id-$m-$n/out.json"
      rm -f "$OUT/prof-$id-$m-$n"/CPU.*.*.*.[1-9]*.cpuprofile # the worker threads' profiles
    done; done; done
    ;;
  misses-gpu)
    # s48's misses on WebGPU's own rows (the router on the best row's backend and variant, slower in its process), 3 rounds.
    bench $tag-misses-gpu 590 --op stencil3d,gridSearch --case stencil-64-s100,stencil-256-s10,grid-cs610-8,grid-cs610-full --backend webgpu,kernelkit --variant "$ROUTER_RACE_VARIANTS" --no-floor --no-side-by-side --rounds 3
    ;;
  misses-mixed)
    # s48's other misses (scan f32, convLayer B=100 and L1 B=10 000), 3 rounds, with the worker pool.
    bench $tag-misses-mixed 590 --op scan,convLayer --case scan-40M-f32,scan-400M-f32,convlayer-L1-b100,convlayer-L2-b100,convlayer-L1-b10000 --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" --no-floor --no-side-by-side --rounds 3
    ;;
  race-misses)
    bench $tag-race-misses 570 --op scan,gridSearch --case scan-40M-u32,scan-40M-f32,grid-cs610-8,grid-cs610-full --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" --no-floor --no-side-by-side --rounds 3
    ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "$tag-$part"
done
