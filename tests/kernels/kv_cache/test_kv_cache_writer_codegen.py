"""The writers' slot path as compiled for Hopper: no 64-bit division left.

A 64-bit ``slot // block_size`` by a runtime block size, once per token and
again per tile row, was the fp8_ds_mla writer's largest cost after its element
division (H200: 216 us at 300K tokens against 174 us for a copy of its stages
that divides by a constant). The block size is now a compile-time constant and
the division 32-bit where the cache allows; this compiles each writer for sm_90
(no GPU needed: Triton's bundled ptxas) and reads the PTX. A subprocess, since
the suite runs with the interpreter on, under which kernels cannot be compiled.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton.backends.nvidia.compiler")

_SCRIPT = r"""
import importlib, json, re, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
writers = importlib.import_module("portq_kernels.kv_cache.concat_and_cache_mla")

POINTERS = {"kv_c": "*i16", "k_pe": "*i16", "kv_cache": "*u8", "kv_cache_as_fp32": "*fp32",
            "kv_cache_as_16bit": "*i16", "slot_mapping": "*i64", "scale": "*fp32", "index_flag": "*i32"}
block_size, narrow = int(sys.argv[1]), sys.argv[2] == "1"
slots = dict(BLOCK_SIZE=block_size, NARROW=narrow)
kernels = {
    "element": (writers.concat_and_cache_mla_kernel, dict(
        TRAP=True, CONVERSION=1, SOURCE_IS_BF16=True, RANK_BLOCK=512, PE_BLOCK=64, TOKENS=8, NATIVE=True,
        EXACT_WIDTHS=True, **slots)),
    "fp8_ds_mla": (writers.concat_and_cache_ds_mla_kernel, dict(
        TRAP=True, SOURCE_IS_BF16=True, TOKENS=4, NATIVE=True, **slots)),
    "nvfp4_ds_mla": (writers.concat_and_cache_nvfp4_ds_mla_kernel, dict(
        TRAP=True, TOKENS=8, PAIRS=True, FMA=True, **slots)),
}
found = {}
for name, (kernel, constexprs) in kernels.items():
    pointers = dict(POINTERS, kv_c="*i32") if name == "nvfp4_ds_mla" else POINTERS
    signature = {arg: "constexpr" if arg in constexprs else pointers.get(arg, "i32") for arg in kernel.arg_names}
    # What the launcher specialises at run time: pointers and strides divisible by 16.
    attrs = {(i,): [["tt.divisibility", 16]] for i, arg in enumerate(kernel.arg_names)
             if signature[arg].startswith("*") or arg.endswith("stride")}
    compiled = triton.compile(ASTSource(fn=kernel, signature=signature, constexprs=constexprs, attrs=attrs),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    ptx = compiled.asm["ptx"]
    found[name] = dict(wide_divisions=len(re.findall(r"\b(?:div|rem)\.[su]64\b", ptx)),
                       traps=len(re.findall(r"\btrap;", ptx)))
print(json.dumps(found))
"""


def _compile(block_size: int, narrow: bool) -> dict:
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "TRITON_INTERPRET": "0"}  # said explicitly: conftest picks the interpreter when unset
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(root / "tests"), str(root), env.get("PYTHONPATH", "")] if p)
    done = subprocess.run([sys.executable, "-c", "import conftest\n" + _SCRIPT, str(block_size), str(int(narrow))],
                          cwd=root / "tests", env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("block_size, narrow", [(64, True), (48, False)])
def test_writers_divide_no_slot_in_64_bits_and_trap_once(block_size, narrow):
    """Block 64 in 32 bits is a shift; block 48 over a cache past 2^32 slots is a
    64-bit multiply-high, not a division. One trap per kernel: the check runs
    once per token, not again per tile row."""
    found = _compile(block_size, narrow)
    assert set(found) == {"element", "fp8_ds_mla", "nvfp4_ds_mla"}
    for name, counts in found.items():
        assert counts == {"wide_divisions": 0, "traps": 1}, (name, counts)
