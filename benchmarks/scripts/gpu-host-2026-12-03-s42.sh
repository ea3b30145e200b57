#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-03-s42.sh PART
# Issue 19's 2-core targets on a 2-core slice of the host (taskset -c 2,3, the rest idle, GPU hidden),
# every figure of one part from one process or back to back: the machine's 1- and 2-thread ceilings,
# where a pooled conv call's time goes (phases, with the calling thread's share), and the cpu backend,
# Piscina, onnxruntime and tfjs-wasm interleaved round-robin in one process on the plain build and
# on the relaxed one. slice-cpu-peers: all of that; slice-plain and slice-relaxed: its two halves, each
# within one device call's limit; slice-peers: the two interleaved runs alone (pack with
# GPU_HOST_PACK_LEAN=cpu-peers so onnxruntime is on the host). Everything in $OUT/s42-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-03-s42.sh slice-cpu-peers|slice-plain|slice-relaxed|slice-peers}
export VK_DRIVER_FILES=/nonexistent/icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl.json
T="taskset -c 2,3"
CASES=conv2d-4x512-k11,conv2d-1x1024-k5,convlayer-L1-b100,convlayer-L2-b100
host_begin
{ $T node -p 'require("os").availableParallelism()'; } > "$OUT/slice.txt" 2>&1
ceilings() { timeout 120 $T node apps/studies/dist/piscina/ceilings.js --threads 1,2 --runs 5 --probes alu,conv2d,convLayer --out "$OUT/ceilings" > "$OUT/ceilings.log" 2>&1; echo "ceilings rc=$?"; }
phases() { timeout 120 $T node apps/studies/dist/piscina/phases.js --threads 2 --calls 60 --out "$OUT/phases" > "$OUT/phases.log" 2>&1; echo "phases rc=$?"; }
plain() { timeout 170 $T node benchmarks/scripts/cpu-vs-peers-interleaved.mjs $CASES 15 8 > "$OUT/interleaved-plain.txt" 2>&1; echo "plain rc=$?"; tail -n 6 "$OUT/interleaved-plain.txt"; }
relaxed() { KERNELKIT_WASM_SIMD=relaxed timeout 150 $T node benchmarks/scripts/cpu-vs-peers-interleaved.mjs $CASES 12 8 > "$OUT/interleaved-relaxed.txt" 2>&1; echo "relaxed rc=$?"; tail -n 6 "$OUT/interleaved-relaxed.txt"; }
after() { timeout 60 $T node apps/studies/dist/piscina/ceilings.js --threads 1,2 --runs 5 --probes conv2d,convLayer --out "$OUT/ceilings-after" > "$OUT/ceilings-after.log" 2>&1; echo "ceilings-after rc=$?"; tail -n 6 "$OUT/ceilings-after/"*.md; }
case "$part" in
  slice-cpu-peers) ceilings; phases; plain; relaxed; after ;;
  slice-plain) ceilings; phases; plain; tail -n 6 "$OUT/ceilings/"*.md ;;
  slice-relaxed) relaxed; after ;;
  slice-peers) plain; relaxed ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s42-$part"
