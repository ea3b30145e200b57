#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: machine ceilings (weak scaling of the CPU
# kernels, ALU and DRAM bandwidth), then the Piscina scaling table's missing cells, merged into
# the committed file. Call it again to continue where the budget stopped it (--missing).
set -u
mkdir -p "$OUT/ps"
cp -n benchmarks/results/piscina-scaling-h100host-2026-11-22.json "$OUT/ps/piscina-scaling.json" 2>/dev/null || true
if [ "${SKIP_CEILINGS:-0}" != 1 ]; then
  timeout 150 node apps/studies/dist/piscina/ceilings.js --out "$OUT/ps" --runs 3 2>&1 | tail -30
fi
timeout "${FILL_S:-430}" node apps/studies/dist/piscina/scaling.js --out "$OUT/ps" --ops gridSearch,convLayer --merge --missing \
  --runs 1 --max-seq-s 200 --budget-s "${BUDGET_S:-410}" 2>&1 | tail -40
