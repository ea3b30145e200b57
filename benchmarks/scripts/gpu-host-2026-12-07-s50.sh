#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-07-s50.sh PART[+PART...]
# probe256: why do routed stencil N=256 calls copy slower than WebGPU alone (issue 16)? One process
#   per line of router-grid-probe.mjs (60 calls, KK_TIMING=1: each call's upload, kernel and
#   readback ms; resident set and ArrayBuffer memory at the end), in turns: WebGPU alone, WebGPU
#   after a Piscina pool ran 8 calls and was disposed, the router, the facade fixed on WebGPU.
# misses: s49's two H100 misses (stencil N=256, convLayer L1 B=100, the latter after the trial
#   retrial rule), 3 rounds, the backends within reach of each row.
# conv2d: the two conv2d seed rows, WebGPU and the router, 3 rounds (the pool left out to fit the
#   device time: 1.1-1.7x behind WebGPU there in s48's one-process run).
# mixed: convLayer B=1000 and L2 B=10 000, scan 40M u32 with the pool; stencil N=512 with WebGPU; 3 rounds.
# Everything in $OUT/TAG-PART.tar.gz (TAG: $SESSION_TAG, else s50).
set -u
. "$(dirname "$0")/h100-bench.sh"
parts=${1:?usage: gpu-host-2026-12-07-s50.sh probe256|misses|conv2d|mixed[+PART...]}
tag=${SESSION_TAG:-s50}
rounds=(--no-floor --no-side-by-side --rounds 3)
for part in ${parts//+/ }; do
host_begin
case "$part" in
  probe256)
    export KK_CALLS=60 KK_TIMING=1 KK_VARIANT=streamed
    for n in 1 2; do for m in direct pool-gone auto fixed; do
      timeout 120 node benchmarks/scripts/router-grid-probe.mjs $m stencil-256-s10 >> "$OUT/probe256.txt" 2>> "$OUT/probe256.log"
      tail -1 "$OUT/probe256.txt" | cut -c1-200
    done; done
    ;;
  misses)
    bench $tag-stencil256 150 --op stencil3d --case stencil-256-s10 --backend webgpu,kernelkit --variant streamed,routed "${rounds[@]}"
    bench $tag-L1b100 200 --op convLayer --case convlayer-L1-b100 --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" "${rounds[@]}"
    ;;
  conv2d)
    bench $tag-conv2d 300 --op conv2d --case conv2d-16x2048-k11,conv2d-1x8192-k5 --backend webgpu,kernelkit --variant auto,routed "${rounds[@]}"
    ;;
  mixed)
    bench $tag-mixed-pool 420 --op convLayer,scan --case convlayer-L1-b1000,convlayer-L2-b1000,convlayer-L2-b10000,scan-40M-u32 --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" "${rounds[@]}"
    bench $tag-stencil512 150 --op stencil3d --case stencil-512-s10 --backend webgpu,kernelkit --variant streamed,routed "${rounds[@]}"
    ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "$tag-$part"
done
