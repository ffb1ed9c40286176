"""The machine code of a rendered kernel, read without a GPU: NVRTC compiles the source to
an sm_90 cubin (ptxas reports registers, stack and spills), `cuobjdump` disassembles it to
SASS, and this module counts what the static performance record needs (spills, the loads
and the tensor-core and special-function instructions of the tile loop)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .nvrtc import compile_cubin

REGISTERS_PER_SM = 65536
SHARED_PER_SM = 228 * 1024          # sm_90: 227 KB usable by blocks, 1 KB reserved a block
THREADS_PER_SM = 2048
BLOCKS_PER_SM = 32


def cuobjdump() -> str | None:
    """The `cuobjdump` executable (the `nvidia-cuda-cuobjdump` wheel, or one on PATH), or
    None.  It needs `nvdisasm` beside it (the `nvidia-cuda-nvdisasm` wheel)."""
    for base in _wheel_bins():
        tool = base / "cuobjdump"
        if tool.exists() and (base / "nvdisasm").exists():
            return str(tool)
    found = shutil.which("cuobjdump")
    return found if found and shutil.which("nvdisasm") else None


def _wheel_bins() -> list[Path]:
    try:
        import nvidia
    except ImportError:             # no NVIDIA wheel installed at all
        return []
    return sorted(Path(p) / sub / "bin" for p in nvidia.__path__ for sub in ("cu13", "cu12", "."))


@dataclass(frozen=True)
class Instruction:
    address: int
    opcode: str         # with modifiers, e.g. "LDG.E.128.CONSTANT"
    text: str           # the whole instruction, predicate and operands included
    target: int | None  # a branch's target address


@dataclass(frozen=True)
class Function:
    """One kernel (or non-inlined device function) of a cubin: ptxas's figures and SASS."""
    name: str
    registers: int
    stack: int              # stack frame bytes
    spill_stores: int
    spill_loads: int
    shared: int             # static shared memory bytes
    code: tuple[Instruction, ...] = field(repr=False)

    def count(self, prefix: str, within: range | None = None) -> int:
        """Instructions whose opcode starts with `prefix` (e.g. "MUFU.EX2", "HMMA")."""
        return sum(1 for i in self.code if i.opcode.startswith(prefix)
                   and (within is None or i.address in within))

    def loops(self) -> list[range]:
        """Address ranges [target, branch] of the backward branches: the loops."""
        return [range(i.target, i.address + 1) for i in self.code
                if i.target is not None and i.target <= i.address]

    def loop_with(self, prefix: str, outermost: bool = False) -> range | None:
        """The innermost (or outermost) loop holding an instruction starting with `prefix`."""
        holding = [r for r in self.loops() if self.count(prefix, r)]
        if not holding:
            return None
        return (max if outermost else min)(holding, key=len)

    def body(self) -> range:
        """The kernel's own code: addresses before the first subroutine it calls (a
        division's or a math function's slow path, placed after the kernel's exit)."""
        targets = [int(m.group(1), 16) for i in self.code if i.opcode.startswith("CALL")
                   for m in [re.search(r"0x([0-9a-f]+)\s*$", i.text)] if m]
        end = min(targets) if targets else (self.code[-1].address + 1 if self.code else 0)
        return range(0, end)

    def instructions(self, within: range) -> int:
        return sum(1 for i in self.code if i.address in within and i.opcode != "NOP")

    def cold(self, within: range) -> set[int]:
        """Addresses in `within` that a predicated forward branch skips over a subroutine
        call: a division's or a math function's slow path (FCHK and its kin route only
        denormal or out-of-range operands there), not issued on the fast path."""
        code = [i for i in self.code if i.address in within]
        out: set[int] = set()
        for i in code:
            if i.target is not None and i.target > i.address and i.text.startswith("@"):
                skipped = [j.address for j in code if i.address < j.address < i.target]
                if any(j.opcode.startswith("CALL") for j in code if j.address in skipped):
                    out.update(skipped)
        return out

    def issued(self, within: range) -> int:
        """Instructions of `within` that its fast path issues: all but NOPs and `cold`."""
        cold = self.cold(within)
        return sum(1 for i in self.code if i.address in within and i.opcode != "NOP"
                   and i.address not in cold)

    def occupancy(self, threads: int, dynamic_shared: int = 0) -> tuple[int, float]:
        """(resident blocks a multiprocessor, fraction of its 2048 threads) on sm_90."""
        regs = -(-max(1, self.registers) * 32 // 256) * 256 // 32   # allocated per warp in 256s
        by_regs = REGISTERS_PER_SM // (regs * threads) if regs else BLOCKS_PER_SM
        by_shared = SHARED_PER_SM // (self.shared + dynamic_shared + 1024)
        blocks = max(0, min(by_regs, by_shared, THREADS_PER_SM // threads, BLOCKS_PER_SM))
        return blocks, blocks * threads / THREADS_PER_SM


_PTXAS_FUNCTION = re.compile(r"Compiling entry function '(\w+)'|Function properties for (\w+)")
_PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"Used (\d+) registers.*?(?:, (\d+) bytes smem)?$")
_SASS_FUNCTION = re.compile(r"^\s*Function : (\S+)")
_SASS_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def _ptxas_figures(log: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    current = None
    for line in log.splitlines():
        if (m := _PTXAS_FUNCTION.search(line)):
            current = out.setdefault(m.group(1) or m.group(2), {"stack": 0, "spill_stores": 0,
                                                                "spill_loads": 0, "registers": 0,
                                                                "shared": 0})
        elif current is not None and (m := _PTXAS_FRAME.search(line)):
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        elif current is not None and (m := _PTXAS_USED.search(line.strip())):
            current.update(registers=int(m.group(1)), shared=int(m.group(2) or 0))
    return out


def _parse_sass(text: str) -> dict[str, list[Instruction]]:
    out: dict[str, list[Instruction]] = {}
    code: list[Instruction] | None = None
    for line in text.splitlines():
        if (m := _SASS_FUNCTION.match(line)):
            code = out.setdefault(m.group(1), [])
        elif code is not None and (m := _SASS_LINE.match(line)):
            body = m.group(2)
            words = body.split()
            opcode = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
            target = None
            if opcode.startswith(("BRA", "BRX")) and (t := re.search(r"0x([0-9a-f]+)\s*$", body)):
                target = int(t.group(1), 16)
            code.append(Instruction(int(m.group(1), 16), opcode, body, target))
    return out


def disassemble(cubin: bytes) -> str:
    """SASS text of a cubin, by `cuobjdump --dump-sass`."""
    tool = cuobjdump()
    if tool is None:
        raise FileNotFoundError("cuobjdump with nvdisasm not found: install the test extra "
                                "(nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm)")
    env = dict(os.environ, PATH=str(Path(tool).parent) + os.pathsep + os.environ.get("PATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        done = subprocess.run([tool, "--dump-sass", str(path)], capture_output=True, text=True,
                              env=env, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"cuobjdump failed: {done.stderr.strip()}")
    return done.stdout


def machine_code(source: str, *, arch: str = "sm_90", name: str = "kernel.cu",
                 options: tuple[str, ...] = ()) -> dict[str, Function]:
    """Every function of `source` compiled for `arch`, by name."""
    cubin, log = compile_cubin(source, arch=arch, name=name, options=("--ptxas-options=-v", *options))
    figures = _ptxas_figures(log)
    sass = _parse_sass(disassemble(cubin))
    return {fn: Function(fn, code=tuple(sass.get(fn, ())), **figures.get(fn, {
        "stack": 0, "spill_stores": 0, "spill_loads": 0, "registers": 0, "shared": 0}))
        for fn in sorted(set(figures) | set(sass))}


# --- the static performance record ------------------------------------------------------

@dataclass(frozen=True)
class Record:
    """One kernel's row of the static performance record."""
    kernel: str
    function: str
    registers: int
    stack: int
    spills: int             # spill stores + loads, bytes
    shared: int             # static + dynamic shared memory a block, bytes
    blocks: int             # resident blocks a multiprocessor
    occupancy: float
    per_element: float | None   # warp-instructions a tile-loop iteration issues, per element
    ex2_per_score: float | None
    wide_loads: int         # LDG.E.128 (reductions) or LDGSTS (attention)
    mma: int                # HMMA in the tile loop
    per_element_all: float | None = None    # the same with the slow paths' cold code


def reduction_records(kernel: str, source: str, *, items: int, threads: int) -> list[Record]:
    """The record of a reduction's two data kernels: `thm3_reduce_blocks` and
    `thm3_reduce_rows`.  Instructions per element count the tile loop of a build whose
    tiles are all full and aligned (THM3_FULL_TILES), so the loop holds the fast path only:
    the warp-instructions it issues (`Function.issued`: the slow paths of divisions and
    math functions left out) over the 32 * items elements a warp takes per iteration, and
    all of its instructions (`per_element_all`)."""
    real = machine_code(source, name=f"{kernel}.cu")
    fast = machine_code(source, name=f"{kernel}.cu", options=("-DTHM3_FULL_TILES=1",))
    out = []
    for fn in ("thm3_reduce_blocks", "thm3_reduce_rows"):
        f, loop_fn = real[fn], fast[fn]
        # the loop of the 16-byte loads (the peeled head has a small loop of scalar ones)
        loop = loop_fn.loop_with("LDG.E.128") or loop_fn.loop_with("LDG", outermost=True)
        per = loop_fn.issued(loop) / (32 * items) if loop else None
        per_all = loop_fn.instructions(loop) / (32 * items) if loop else None
        blocks, occ = f.occupancy(threads)
        out.append(Record(kernel, fn, f.registers, f.stack, f.spill_stores + f.spill_loads, f.shared,
                          blocks, occ, per, None, f.count("LDG.E.128"), 0, per_all))
    return out


def attention_records(kernel: str, source: str, *, threads: int, dynamic_shared: int,
                      scores_per_lane: int) -> list[Record]:
    """The record of an attention variant's forward kernel: MUFU.EX2 in its K/V tile loop
    (the outermost loop holding the score products) per score a lane computes there."""
    code = machine_code(source, name=f"{kernel}.cu")
    f = code["thm3_attention_fwd"]
    loop = f.loop_with("HMMA", outermost=True) or f.loop_with("FFMA", outermost=True)
    ex2 = f.count("MUFU.EX2", loop) / scores_per_lane if loop else None
    per = f.instructions(loop) / (threads * scores_per_lane / 32) if loop else None
    blocks, occ = f.occupancy(threads, dynamic_shared)
    wide = f.count("LDGSTS")
    out = [Record(kernel, "thm3_attention_fwd", f.registers, f.stack, f.spill_stores + f.spill_loads,
                  f.shared + dynamic_shared, blocks, occ, per, ex2, wide, f.count("HMMA", loop) if loop else 0)]
    m = code["thm3_attention_merge"]
    blocks, occ = m.occupancy(128)
    out.append(Record(kernel, "thm3_attention_merge", m.registers, m.stack, m.spill_stores + m.spill_loads,
                      m.shared, blocks, occ, None, None, 0, 0))
    return out


def table(records: list[Record]) -> str:
    """The record as a Markdown table."""
    def num(x, fmt):
        return "-" if x is None else format(x, fmt)
    lines = ["| kernel | function | regs | stack | spill B | smem B | blocks/SM | occupancy "
             "| instr/elem issued (all) | EX2/score | LDG.128 or LDGSTS | HMMA |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in records:
        lines.append(f"| {r.kernel} | {r.function} | {r.registers} | {r.stack} | {r.spills} | {r.shared} "
                     f"| {r.blocks} | {r.occupancy:.0%} | {num(r.per_element, '.3f')}"
                     + (f" ({r.per_element_all:.3f})" if r.per_element_all is not None else "")
                     + " "
                     f"| {num(r.ex2_per_score, '.3f')} | {r.wide_loads} | {r.mma} |")
    return "\n".join(lines)
