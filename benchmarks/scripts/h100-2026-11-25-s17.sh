#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-2026-11-25-s17.sh PART
# The scan 40M rows again with 5 child processes per backend instead of 3: those WebGPU calls are
# bound by host copies, and one process's median differs from the next by up to 15 %
# (webgpu-process-state-h100-2026-11-25-s17-scan40.txt), so 3 rounds leave a row's median to chance.
#   scan40: seed scan 40M u32 and f32: Piscina, WebGPU, the router
set -u
part=${1:?part scan40}
. "$(dirname "$0")/h100-bench.sh"
case $part in
  scan40) bench scan40 590 --op scan --case scan-40M-u32,scan-40M-f32 --backend piscina,webgpu,kernelkit --variant two-pass,decoupled-subgroups,decoupled,routed --rounds 5 ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
