#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s25b.sh
# Where a pooled conv call's time goes (apps/studies piscina/phases) on a quiet 2-core slice of the
# host (taskset -c 2,3, twice), on 4 cores with 4 threads, and on all 16; the conv-layer kernel's own
# scaling on 4 threads beside it. Everything in $OUT/s25b.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
for i in 1 2; do
  timeout 120 taskset -c 2,3 node apps/studies/dist/piscina/phases.js --threads 2 --calls 40 --out "$OUT/slice2-$i" > /dev/null 2> "$OUT/slice2-$i.log"
  echo "slice2 $i rc=$? at $SECONDS s"; cat "$OUT/slice2-$i/piscina-phases.md" | tail -5
done
timeout 120 taskset -c 2-5 node apps/studies/dist/piscina/phases.js --threads 4 --calls 40 --out "$OUT/slice4" > /dev/null 2> "$OUT/slice4.log"
echo "slice4 rc=$? at $SECONDS s"; tail -5 "$OUT/slice4/piscina-phases.md"
timeout 120 node apps/studies/dist/piscina/phases.js --threads 16 --calls 40 --out "$OUT/all16" > /dev/null 2> "$OUT/all16.log"
echo "all16 rc=$? at $SECONDS s"; tail -5 "$OUT/all16/piscina-phases.md"
for l in L1 L2; do timeout 60 taskset -c 2-5 node benchmarks/scripts/kernel-thread-scaling.mjs $l 4 15 >> "$OUT/scaling4.txt" 2>&1; done
cat "$OUT/scaling4.txt"
host_end s25b
