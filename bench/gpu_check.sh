#!/usr/bin/env bash
# The device check for a lent GPU machine (CuPy there, no z3): the gpu tests of the kernel
# stage, then the bandwidth table of bench/gpu_reduce.py.  The kernels it times come
# emitted, from bench/kernels/ (run bench/prepare_gpu.py here first).  About 2 minutes.
#
#   bash bench/gpu_check.sh [OUTDIR]        # OUTDIR: logs and the table (default bench/results)
set -u -o pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=$(command -v python3 || command -v python)

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used --format=csv 2>&1 | tee "$out/gpu_check-nvidia-smi.txt"
timeout 300 "$py" -m pytest tests/test_kernels.py -m gpu -q -rs -p no:cacheprovider 2>&1 | tee "$out/gpu_check-pytest.log"
tests=$?
timeout 150 "$py" bench/gpu_reduce.py --out "$out" 2>&1 | tee "$out/gpu_check-reduce.log"
bench=$?
echo "pytest exit $tests, bench exit $bench"
exit $(( tests != 0 ? tests : bench ))
