#!/usr/bin/env bash
# The one device check for a lent GPU machine (CuPy, torch, NumPy there; no z3):
#   1. the gpu tests of the reduction kernels and of the attention kernel;
#   2. reduction GB/s at n = 2**28 next to cupy.sum and a multi-pass CuPy composition;
#   3. attention TFLOP/s next to torch SDPA, and decoding GB/s next to the copy bandwidth;
#   4. the scan's gpu tests, and its GB/s next to cupy.cumsum (CUB) at n = 2**28.
# Kernels travel emitted (run `python bench/prepare_gpu.py` here first); z3 travels as a
# wheel in .whl/ (see README, "GPU check").  About 4 minutes on an H200.
#
#   bash bench/gpu_check.sh [OUTDIR]        # OUTDIR: logs and tables (default bench/results)
set -u -o pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=$(command -v python3 || command -v python)

if ! "$py" -c "import z3" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# thm3 itself (thm3.gpu and thm3.cli map onto gpu/ and cli/): no dependencies to fetch
"$py" -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv 2>&1 | tee "$out/gpu_check-nvidia-smi.txt"
"$py" -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tee -a "$out/gpu_check-nvidia-smi.txt"
timeout 240 "$py" -m pytest tests/test_kernels.py tests/test_attention.py -m "gpu and not slow" -q -rs \
    -p no:cacheprovider 2>&1 | tee "$out/gpu_check-pytest.log"
tests=$?
timeout 120 "$py" bench/gpu_reduce.py --out "$out" 2>&1 | tee "$out/gpu_check-reduce.log"
reduce=$?
timeout 180 "$py" bench/attention.py --quick --combine-lane bench/kernels/flash_attention_lane.cu \
    --out "$out" 2>&1 | tee "$out/gpu_check-attention.log"
attn=$?
timeout 120 "$py" -m pytest tests/test_scan.py -m "gpu and not slow" -q -rs -p no:cacheprovider 2>&1 \
    | tee "$out/gpu_check-scan-pytest.log"
scan_tests=$?
timeout 90 "$py" bench/scan.py --gpu 2>&1 | tee "$out/gpu_check-scan.log"     # GB/s next to cupy.cumsum at 2**28
scan=$?
echo "pytest exit $tests, reduce bench exit $reduce, attention bench exit $attn, scan tests $scan_tests, scan bench $scan"
exit $(( tests != 0 ? tests : (reduce != 0 ? reduce : (attn != 0 ? attn : (scan_tests != 0 ? scan_tests : scan))) ))
