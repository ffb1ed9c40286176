#!/usr/bin/env bash
# The one device run (issue 11, item 4), for a machine with a GPU, CuPy, torch, NumPy and
# SymPy but no z3 and no pip.  Nothing is installed there: thm3 runs from this tree by
# PYTHONPATH, and what needs z3 comes emitted in bench/kernels/ (python bench/prepare_gpu.py
# here first, then carry bench/kernels; bench/README.md has the one-call command).
#   1. the gpu tests of the reduction kernels and of the attention kernel (no z3 needed);
#   2. every homomorphic sample's emitted kernel against the NumPy backend at n = 0, 1,
#      1007, 10**6 + 3, 2**28, then sum, mps, Welford, safe softmax, mss at 2**28 next to
#      cupy.sum (CUB) and a device copy;
#   3. attention next to torch SDPA, its flash and cuDNN backends named explicitly;
#   4. the scan of the emitted sum module next to cupy.cumsum (CUB) at 2**28;
#   5. the emitted Triton modules against the NumPy backend, and timed next to torch.
# Writes exactly two files to OUTDIR (default $OUT, else bench/results/gpu):
#   gpu_check.md (the summary table) and gpu_check.tar.gz (every log and JSON).
# About 4 minutes on an H200; each step has its own timeout.
#
#   bash bench/gpu_check.sh [OUTDIR]
set -u -o pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-bench/results/gpu}}
mkdir -p "$out"
work=$(mktemp -d)
# thm3 from this tree, not installed: a folder of links lays the tree out as the install
# names it (thm3/ with thm3.gpu = gpu/ and thm3.cli = cli/), first on PYTHONPATH; pytest
# runs from inside it, so that the repository's own thm3/ (without gpu) does not shadow it
root=$PWD
path="$root/.thm3-path"
rm -rf "$path" && mkdir -p "$path/thm3"
for part in thm3/*; do ln -s "$root/$part" "$path/thm3/$(basename "$part")"; done
ln -s "$root/gpu" "$path/thm3/gpu"
ln -s "$root/cli" "$path/thm3/cli"
export PYTHONUNBUFFERED=1 PYTHONPATH="$path${PYTHONPATH:+:$PYTHONPATH}"
# the attention tests take the derived combine from the carried files (no z3 there)
export THM3_DERIVED_ATTENTION="$PWD/bench/kernels"
py=$(command -v python3 || command -v python)

fail() { echo "gpu_check: $*" | tee "$out/gpu_check.md" >&2; rm -rf "$path"; exit 3; }

# what must have been carried
[ -f bench/kernels/MANIFEST ] || fail "bench/kernels/MANIFEST missing: run python bench/prepare_gpu.py and carry bench/kernels"
while read -r f; do
    [ -f "bench/kernels/$f" ] || fail "bench/kernels/$f listed in MANIFEST was not carried"
done < bench/kernels/MANIFEST
(cd "$path" && "$py" -c "import cupy, numpy, thm3.gpu.api, thm3.gpu.runtime.attention, thm3.gpu.render.attention, thm3.backends.numpy_tree") 2>"$work/import.log" \
    || fail "imports failed: $(tail -3 "$work/import.log")"

{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv
    "$py" -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"
    "$py" -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
} > "$work/environment.txt" 2>&1

(cd "$path" && timeout 60 "$py" -m pytest "$root/tests/test_kernels.py" "$root/tests/test_attention_gpu.py" \
    -m "gpu and not slow" -q -rs -p no:cacheprovider --rootdir "$root") > "$work/pytest.log" 2>&1
tests=$?
timeout 160 "$py" bench/gpu_reduce.py --kernels bench/kernels --out "$work" --budget 100 \
    > "$work/reduce.log" 2>&1
reduce=$?
timeout 70 "$py" bench/attention.py --quick --merge bench/kernels/attention_merge.cu \
    --out "$work" --stem attention > "$work/attention.log" 2>&1
attn=$?
# the scan: the emitted sum module's scan() next to cupy.cumsum (CUB) at 2**28 (issue 10)
timeout 60 "$py" bench/scan.py --gpu --kernels bench/kernels > "$work/scan.log" 2>&1
scan=$?
# the Triton modules (issue 25): checked against the NumPy backend, timed next to torch
timeout 90 "$py" bench/triton_gpu.py --kernels bench/kernels --out "$work" > "$work/triton.log" 2>&1
triton=$?

{
    echo "# thm3 device check ($(date -u +%Y-%m-%dT%H:%MZ))"
    echo
    echo '```'
    cat "$work/environment.txt"
    echo '```'
    echo
    echo "exit codes: pytest $tests, reductions $reduce, attention $attn (124: timed out)"
    echo
    echo "pytest: $(tail -1 "$work/pytest.log")"
    echo
    if [ -f "$work/reduce.md" ]; then cat "$work/reduce.md"; else echo "reductions: no table; log tail:"; tail -5 "$work/reduce.log"; fi
    echo
    if [ -f "$work/attention.md" ]; then cat "$work/attention.md"; else echo "attention: no table; log tail:"; tail -5 "$work/attention.log"; fi
    echo
    echo "scan (exit $scan):"; tail -6 "$work/scan.log"
    echo
    echo "triton (exit $triton):"; tail -4 "$work/triton.log"
} > "$out/gpu_check.md"
tar -czf "$out/gpu_check.tar.gz" -C "$work" .
rm -rf "$work" "$path"
cat "$out/gpu_check.md"
exit $(( tests != 0 ? tests : (reduce != 0 ? reduce : attn) ))
