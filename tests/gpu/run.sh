#!/usr/bin/env bash
# Measures training memory and kernel rates on the GPU at hand (one H100: about 27 minutes, 100
# training rows at 10-17 s each, most of it process start, and 90 s of kernel rates) and
# writes tests/data/gpu_memory_measured.csv and tests/data/gpu_kernel_rates.csv (or into DIR).
# Needs Python 3 with PyTorch (CUDA) and Triton; nothing is downloaded.
#   tests/gpu/run.sh [DIR] [--part N]     part 1: FSDP2 rows, 2: DDP/compile rows, 3: LoRA rows,
#                                         4: GPT-3-shaped rows, 5: caching allocator and full
#                                         fine-tunes, 0: all
# Beside it: profile_row.py (torch.profiler per row) and timing_check.py (the harness loop's own cost).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../data}"
shift || true
export PYTHONUNBUFFERED=1
export MESHFIT_HARNESS_COMMIT="${MESHFIT_HARNESS_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
python3 "$here/memory_sweep.py" --out "$dir/gpu_memory_measured.csv" "$@"
python3 "$here/kernel_rates.py" --out "$dir/gpu_kernel_rates.csv"
