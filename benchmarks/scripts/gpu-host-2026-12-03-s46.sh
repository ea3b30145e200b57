#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-03-s46.sh PART
# Issue 16's four s45 misses, call by call: every routed call labelled (warm-up, trial, confirmation,
# settled) beside each candidate in a process of its own (apps/studies router/settling.js).
# settle: the two grid searches, scan 400M f32 and convLayer L1 B=100; probe-grid: WebGPU's grid search
# alone, beside a Piscina pool, through the facade fixed and routed (router-grid-probe.mjs); race-grid:
# the bench's grid rows again; race-rest: stencil3d, scan and the grid search, as s45's part of that name.
# Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s46-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-03-s46.sh settle|probe-grid [case]|probe-grid2 [case]|grid-phases|grid-prof|probe-grid3|probe-grid4|grid-phases-cal|race-grid|race-rest}
settle() { timeout "$2" node apps/studies/dist/router/settling.js --workload seed --cases "$3" --calls "$4" --direct > "$OUT/settling-$1.txt" 2> "$OUT/settling-$1.log"; echo "settling $1 rc=$?"; cat "$OUT/settling-$1.txt"; }
host_begin
case "$part" in
  settle)
    settle grid 200 grid-cs610-8,grid-cs610-full 40
    settle scan-conv 300 scan-400M-f32,convlayer-L1-b100 30
    ;;
  probe-grid)
    # router-grid-probe.mjs: each mode twice, in alternation, one process each.
    for round in 1 2; do for mode in direct pool-idle pool-used fixed auto; do
      timeout 120 node benchmarks/scripts/router-grid-probe.mjs "$mode" "${2:-grid-cs610-8}" 2>>"$OUT/probe-grid.log" | tee -a "$OUT/probe-grid.txt"
    done; done
    ;;
  probe-grid2)
    # The facade's slow WebGPU grid calls: a second process on the GPU (child), a cached route
    # (no calibration child: auto again on the cache the first auto wrote), a pool that ran
    # first (pool-many); per call its GPU slices and garbage-collection ms.
    export KK_CACHE=$(mktemp -d)/calibration.json
    for round in 1 2 3; do for mode in direct pool-many auto auto; do
      timeout 120 node benchmarks/scripts/router-grid-probe.mjs "$mode" "${2:-grid-cs610-8}" 2>>"$OUT/probe-grid2.log" | tee -a "$OUT/probe-grid2.txt"
    done; rm -f "$KK_CACHE"; done
    ;;
  grid-phases)
    # webgpu-grid-phases.mjs: each grid case in three processes, where a call's host time goes.
    for round in 1 2 3; do for c in grid-cs610-8 grid-cs610-full; do
      timeout 120 node benchmarks/scripts/webgpu-grid-phases.mjs "$c" 2>>"$OUT/grid-phases.log" | tee -a "$OUT/grid-phases.txt"
    done; done
    ;;
  grid-prof)
    # A CPU profile (100 us samples) of 60 WebGPU grid searches at 8 steps/dim.
    KK_CALLS=60 timeout 120 node --cpu-prof --cpu-prof-interval 100 --cpu-prof-dir="$OUT/prof" benchmarks/scripts/webgpu-grid-phases.mjs grid-cs610-8 2>>"$OUT/grid-prof.log"
    ;;
  probe-grid3)
    # Exploring with and without a calibration child in the same process: auto after a separate
    # calibrate process (fits cached, no choices), then auto with a fresh cache (its own child).
    for round in 1 2 3; do
      export KK_CACHE=$(mktemp -d)/calibration.json
      for mode in calibrate auto; do
        timeout 120 node benchmarks/scripts/router-grid-probe.mjs "$mode" "${2:-grid-cs610-8}" 2>>"$OUT/probe-grid3.log" | tee -a "$OUT/probe-grid3.txt"
      done
      unset KK_CACHE
      timeout 120 node benchmarks/scripts/router-grid-probe.mjs auto "${2:-grid-cs610-8}" 2>>"$OUT/probe-grid3.log" | tee -a "$OUT/probe-grid3.txt"
    done
    ;;
  probe-grid4)
    # A fresh calibration in a child process while this process's WebGPU device is open, then
    # WebGPU and Piscina calls in the router's first order (pool-mid), against the same without it.
    for round in 1 2 3; do for mode in pool-mid cal-pool-mid; do
      timeout 120 node benchmarks/scripts/router-grid-probe.mjs "$mode" "${2:-grid-cs610-8}" 2>>"$OUT/probe-grid4.log" | tee -a "$OUT/probe-grid4.txt"
    done; done
    ;;
  grid-phases-cal)
    # webgpu-grid-phases.mjs right after a fresh calibration in a child process, three processes.
    for round in 1 2 3; do
      KK_CALIBRATE_FIRST=1 timeout 120 node benchmarks/scripts/webgpu-grid-phases.mjs grid-cs610-8 2>>"$OUT/grid-phases-cal.log" | tee -a "$OUT/grid-phases-cal.txt"
    done
    ;;
  race-grid) race s46-race-grid gridSearch "$ROUTER_RACE_VARIANTS" ;;
  race-rest) race s46-race-rest stencil3d,scan,gridSearch "$ROUTER_RACE_VARIANTS" ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s46-$part"
