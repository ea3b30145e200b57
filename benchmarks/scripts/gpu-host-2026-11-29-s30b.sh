#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s30b.sh
# Where Piscina's 16-thread grid search loses against 16× one thread: the host's CPU topology
# (lscpu), the weak-scaling ceilings of the grid kernel itself and of SIMD multiply-adds on 1–16
# threads (every thread its own CS610 7-steps/dim search, no pool), and the Piscina scaling table of
# the grid rows on 1–16 threads, one after the other on one host. Everything in $OUT/s30b.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
timeout 200 node apps/studies/dist/piscina/ceilings.js --out "$OUT" --threads 1,2,4,8,12,16 --probes gridSearch,alu --runs 3 > "$OUT/ceilings.log" 2>&1
echo "ceilings rc=$?"; tail -14 "$OUT/ceilings.log"
timeout 300 node apps/studies/dist/piscina/scaling.js --out "$OUT" --threads 1,2,4,8,12,16 --ops gridSearch > "$OUT/scaling.log" 2>&1
echo "scaling rc=$?"; tail -5 "$OUT/scaling.log"
host_end s30b
