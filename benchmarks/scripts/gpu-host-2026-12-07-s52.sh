#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-07-s52.sh PART[+PART...]
# scan400: scan 400M f32 alone (the one seed row outside 1.1x in s51, a pool/WebGPU near tie measured
#   over 2-3 rounds), the pool, WebGPU's best variant and the router, 4 rounds (issue 16).
# pair: scan 40M f32 and convLayer L1 B=10 000, the two rows s51 measured in 2 processes each, 3 rounds.
# l1b10k: convLayer L1 B=10 000 alone, the pool, WebGPU and the router, 5 rounds.
# Everything in $OUT/TAG-PART.tar.gz (TAG: $SESSION_TAG, else s52).
set -u
. "$(dirname "$0")/h100-bench.sh"
parts=${1:?usage: gpu-host-2026-12-07-s52.sh scan400|pair|l1b10k[+PART...]}
tag=${SESSION_TAG:-s52}
quiet=(--no-floor --no-side-by-side)
for part in ${parts//+/ }; do
host_begin
case "$part" in
  scan400)
    bench $tag-scan400 570 --op scan --case scan-400M-f32 --backend piscina,webgpu,kernelkit --variant wasm-simd,decoupled-subgroups,routed "${quiet[@]}" --rounds 4
    ;;
  pair)
    bench $tag-pair 570 --op scan,convLayer --case scan-40M-f32,convlayer-L1-b10000 --backend "$ROUTER_RACE_BACKENDS" --variant "$ROUTER_RACE_VARIANTS" "${quiet[@]}" --rounds 3
    ;;
  l1b10k)
    bench $tag-l1b10k 400 --op convLayer --case convlayer-L1-b10000 --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,gemm,routed "${quiet[@]}" --rounds 5
    ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "$tag-$part"
done
