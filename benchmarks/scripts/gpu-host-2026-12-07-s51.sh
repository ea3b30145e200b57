#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-07-s51.sh PART[+PART...]
# b100: the two convLayer B=100 rows (a three-way tie in s50, its best's round spread 1.23x), 9
#   rounds, the backends within reach (issue 16).
# conv2d: the two conv2d seed rows with the pool beside WebGPU and the router, 3 rounds.
# gpu: the stencil N=64 and N=256 and both grid-search rows (WebGPU's alone), 5 rounds.
# older: the three rows last measured before the trial retrial rule (s49): scan 40M and 400M f32,
#   convLayer L1 B=10 000, 3 rounds.
# Everything in $OUT/TAG-PART.tar.gz (TAG: $SESSION_TAG, else s51).
set -u
. "$(dirname "$0")/h100-bench.sh"
parts=${1:?usage: gpu-host-2026-12-07-s51.sh b100|conv2d|gpu|older[+PART...]}
tag=${SESSION_TAG:-s51}
quiet=(--no-floor --no-side-by-side)
for part in ${parts//+/ }; do
host_begin
case "$part" in
  b100)
    bench $tag-b100 330 --op convLayer --case convlayer-L1-b100,convlayer-L2-b100 --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" "${quiet[@]}" --rounds 9
    ;;
  conv2d)
    bench $tag-conv2d 330 --op conv2d --case conv2d-16x2048-k11,conv2d-1x8192-k5 --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,routed "${quiet[@]}" --rounds 3
    ;;
  gpu)
    bench $tag-gpu 560 --op stencil3d,gridSearch --case stencil-64-s100,stencil-256-s10,grid-cs610-8,grid-cs610-full --backend webgpu,kernelkit --variant "$ROUTER_RACE_VARIANTS" "${quiet[@]}" --rounds 5
    ;;
  older)
    bench $tag-older 540 --op scan,convLayer --case scan-40M-f32,scan-400M-f32,convlayer-L1-b10000 --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" "${quiet[@]}" --rounds 3
    ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "$tag-$part"
done
