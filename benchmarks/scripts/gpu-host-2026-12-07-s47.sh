#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-07-s47.sh PART
# aftermath: is WebGPU slower in a process whose router ran its own calibration child (issue 16's
# router rows on WebGPU 1.1-1.4x their backend's own process)? Per case and round, one process each:
# direct (the backend alone), auto (router, fresh cache: its own child), the same 3 s after the
# child's exit, auto calibrating in its own process, calibrate then auto (the fits cached by a
# separate process); nvidia-smi samples the GPU's clocks and power every 100 ms meanwhile, marks.txt says when
# each process ran. Then direct, auto and cal-pool-mid (a child calibration beside an open device,
# no router) with kernel timestamps (KK_TIMING=1: GPU time against wall time), and cal-wait-pool-mid (3 s between the child's exit and the calls) beside cal-pool-mid.
# verify: the routed grid and scan 40M u32 processes again after Backend.warmUp. race-grid / race-rest: issue 16's rows as s46's parts of those names; race-misses: s46's misses, 3 rounds.
# race-conv: the conv rows as s45's part of that name. Several parts in one call: PART+PART.
# Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/TAG-PART.tar.gz (TAG: $SESSION_TAG, else s47).
set -u
. "$(dirname "$0")/h100-bench.sh"
parts=${1:?usage: gpu-host-2026-12-07-s47.sh aftermath|verify|race-grid|race-rest|race-conv|race-misses[+PART...]}
tag=${SESSION_TAG:-s47}
mark() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%N) $*" >> "$OUT/marks.txt"; }
probe() { mark start "${KK_SETTLE_MS:+settle-$KK_SETTLE_MS }${KK_CALIBRATE_IN:+in-$KK_CALIBRATE_IN }${KK_CACHE:+cached }${KK_TIMING:+timed }$*"; timeout 150 node benchmarks/scripts/router-grid-probe.mjs "$@" 2>>"$OUT/aftermath.log" | tee -a "$OUT/aftermath.txt"; mark end "$@"; }
# nvidia-smi's clocks every 100 ms into smi.csv while the probes run; then the per-process report.
clocks_begin() {
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu --format=csv -lms 100 > "$OUT/smi.csv" 2>&1 &
  smi=$!
}
clocks_end() {
  kill "$smi"
  node benchmarks/scripts/probe-clocks-report.mjs "$OUT" > "$OUT/report.txt" 2>&1; cat "$OUT/report.txt"
}
round() {
  local id=$1
  probe direct "$id"
  unset KK_CACHE; probe auto "$id"
  KK_SETTLE_MS=3000 probe auto "$id"
  KK_CALIBRATE_IN=process probe auto "$id"
  export KK_CACHE=$(mktemp -d)/calibration.json; probe calibrate "$id"; probe auto "$id"; unset KK_CACHE
}
for part in ${parts//+/ }; do
host_begin
case "$part" in
  aftermath)
    export KK_CALLS=60
    clocks_begin
    round grid-cs610-8; round scan-40M-f32
    # A used worker pool left idle beside the device (as a key settled on Piscina leaves it in the router).
    probe pool-idle scan-40M-f32; probe pool-many scan-40M-f32; probe direct scan-40M-f32
    export KK_TIMING=1; probe direct grid-cs610-8; probe auto grid-cs610-8; probe cal-pool-mid grid-cs610-8; unset KK_TIMING
    probe cal-wait-pool-mid grid-cs610-8; probe cal-pool-mid grid-cs610-8
    clocks_end
    ;;
  verify)
    # After Backend.warmUp: routed processes with their own calibration child, beside the backend alone.
    export KK_CALLS=60
    clocks_begin
    probe direct grid-cs610-8; probe auto grid-cs610-8; probe auto grid-cs610-8; probe auto scan-40M-u32; probe direct scan-40M-u32
    clocks_end
    ;;
  race-grid) race $tag-race-grid gridSearch "$ROUTER_RACE_VARIANTS" ;;
  race-rest) race $tag-race-rest stencil3d,scan,gridSearch "$ROUTER_RACE_VARIANTS" ;;
  race-conv) race $tag-race-conv conv2d,convLayer wasm-simd,auto,gemm,routed ;;
  race-misses)
    # s46's four misses (scan 40M, both grids) over 3 rounds: each row's median round.
    bench $tag-race-misses 570 --op scan,gridSearch --case scan-40M-u32,scan-40M-f32,grid-cs610-8,grid-cs610-full --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" --no-floor --no-side-by-side --rounds 3
    ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "$tag-$part"
done
