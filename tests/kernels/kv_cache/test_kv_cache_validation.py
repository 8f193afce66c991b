"""Every wrapper check: a bad argument is a TypeError/ValueError naming it, raised
before anything is launched (the destination stays untouched)."""
from __future__ import annotations

import pytest
import torch
from kv_cache_helpers import DEVICE

from portq_kernels import kv_cache as ops

I32 = dict(dtype=torch.int32, device=DEVICE)


def _t(*shape, dtype=torch.bfloat16):
    return torch.zeros(*shape, dtype=dtype, device=DEVICE)


def gather_args(**override):
    args = dict(
        src_cache=_t(4, 16, 576),
        dst=_t(20, 576),
        block_table=torch.zeros(2, 3, **I32),
        cu_seq_lens=torch.tensor([0, 10, 20], **I32),
        num_tokens=20,
        kv_cache_dtype="auto",
        scale=torch.ones(1, device=DEVICE),
        seq_starts=torch.tensor([0, 3], **I32),
    )
    args.update(override)
    return args


GATHER_BAD = [
    ("kv_cache_dtype", dict(kv_cache_dtype="int4"), ValueError, "'fp8_e5m2'"),
    ("kv_cache_dtype", dict(kv_cache_dtype="nvfp4_ds_mla"), ValueError, "cp_gather_and_upconvert_nvfp4"),
    ("kv_cache_dtype", dict(kv_cache_dtype="fp8_ds_mla"), ValueError, "cp_gather_and_upconvert_fp8"),
    ("kv_cache_dtype", dict(kv_cache_dtype=3), TypeError, "kv_cache_dtype"),
    ("src_cache", dict(src_cache=_t(4, 576)), ValueError, "src_cache"),
    ("src_cache", dict(src_cache=_t(4, 16, 576, dtype=torch.float16)), TypeError, "src_cache"),
    ("src_cache", dict(src_cache=_t(4, 16, 512)), ValueError, "src_cache"),
    ("src_cache", dict(kv_cache_dtype="fp8"), TypeError, "1-byte"),
    ("dst", dict(dst=_t(20, 576, dtype=torch.int32)), TypeError, "dst"),
    ("dst", dict(dst=_t(20, 576).t().contiguous().t()), ValueError, "dst"),
    ("block_table", dict(block_table=torch.zeros(2, 3, dtype=torch.int64, device=DEVICE)), TypeError, "block_table"),
    ("block_table", dict(block_table=torch.zeros(1, 3, **I32)), ValueError, "block_table"),
    ("cu_seq_lens", dict(cu_seq_lens=torch.tensor([0, 10, 20], dtype=torch.int64, device=DEVICE)), TypeError, "cu_seq_lens"),
    ("cu_seq_lens", dict(cu_seq_lens=torch.zeros(0, **I32)), ValueError, "cu_seq_lens"),
    ("num_tokens", dict(num_tokens=21), ValueError, "num_tokens"),
    ("num_tokens", dict(num_tokens=-1), ValueError, "num_tokens"),
    ("num_tokens", dict(num_tokens=2.0), TypeError, "num_tokens"),
    ("scale", dict(scale=torch.ones(1, dtype=torch.float64, device=DEVICE)), TypeError, "scale"),
    ("scale", dict(scale=torch.ones(0, device=DEVICE)), ValueError, "scale"),
    ("seq_starts", dict(seq_starts=torch.tensor([0, 3, 4], **I32)), ValueError, "seq_starts"),
    ("seq_starts", dict(seq_starts=torch.tensor([0.0, 3.0], device=DEVICE)), TypeError, "seq_starts"),
]
if DEVICE.type == "cuda":
    GATHER_BAD.append(("dst", dict(dst=torch.zeros(20, 576, dtype=torch.bfloat16)), ValueError, "dst"))


@pytest.mark.parametrize("name,override,error,needle", GATHER_BAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(GATHER_BAD)])
def test_gather_and_maybe_dequant_rejects(name, override, error, needle):
    args = gather_args(**override)
    before = args["dst"].clone()
    with pytest.raises(error, match=needle):
        ops.gather_and_maybe_dequant_cache(**args)
    assert torch.equal(args["dst"], before)


CP_BAD = [
    ("batch_size", dict(batch_size=3), ValueError, "cu_seq_lens"),
    ("batch_size", dict(batch_size=True), TypeError, "batch_size"),
    ("dst", dict(dst=_t(20, 576, dtype=torch.float16)), TypeError, "dst"),
    ("dst", dict(dst=_t(20, 575)), ValueError, "dst"),
    ("src_cache", dict(src_cache=_t(4, 16, 576, dtype=torch.float64), dst=_t(20, 576, dtype=torch.float64)), TypeError, "src_cache"),
    ("src_cache", dict(src_cache=_t(4, 16, 1152)[:, :, ::2]), ValueError, "src_cache"),
    ("block_table", dict(block_table=torch.zeros(1, 3, **I32)), ValueError, "block_table"),
]


@pytest.mark.parametrize("name,override,error,needle", CP_BAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(CP_BAD)])
def test_cp_gather_cache_rejects(name, override, error, needle):
    args = gather_args()
    args = dict(src_cache=args["src_cache"], dst=args["dst"], block_table=args["block_table"],
                cu_seq_lens=args["cu_seq_lens"], batch_size=2, seq_starts=args["seq_starts"])
    args.update(override)
    with pytest.raises(error, match=needle):
        ops.cp_gather_cache(**args)


def upconvert_args(entry, **override):
    args = dict(
        src_cache=torch.zeros(4, 16, entry, dtype=torch.uint8, device=DEVICE),
        dst=_t(20, 576),
        block_table=torch.zeros(2, 3, **I32),
        workspace_starts=torch.tensor([0, 10], **I32),
        batch_size=2,
        seq_starts=None,
    )
    args.update(override)
    return args


UPCONVERT_BAD = [
    ("src_cache", dict(src_cache=_t(4, 16, 656)), TypeError, "src_cache"),
    ("src_cache", dict(src_cache=torch.zeros(4, 16, 576, dtype=torch.uint8, device=DEVICE)), ValueError, "src_cache"),
    ("dst", dict(dst=_t(20, 512)), ValueError, "dst"),
    ("dst", dict(dst=_t(20, 576, dtype=torch.float32)), TypeError, "dst"),
    ("workspace_starts", dict(workspace_starts=torch.tensor([0, 10, 12], **I32)), ValueError, "workspace_starts"),
    ("workspace_starts", dict(workspace_starts=torch.tensor([0, 10], dtype=torch.int64, device=DEVICE)), TypeError, "workspace_starts"),
    ("batch_size", dict(batch_size=-1), ValueError, "batch_size"),
    ("block_table", dict(block_table=torch.zeros(1, 3, **I32)), ValueError, "block_table"),
    ("seq_starts", dict(seq_starts=torch.tensor([0], **I32)), ValueError, "seq_starts"),
]


@pytest.mark.parametrize("op_name,entry", [("fp8", 656), ("nvfp4", 352)])
@pytest.mark.parametrize("name,override,error,needle", UPCONVERT_BAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(UPCONVERT_BAD)])
def test_upconvert_rejects(op_name, entry, name, override, error, needle):
    op = getattr(ops, f"cp_gather_and_upconvert_{op_name}_kv_cache")
    with pytest.raises(error, match=needle):
        op(**upconvert_args(entry, **override))


def test_fp8_upconvert_rejects_misaligned_scales():
    storage = torch.zeros(4 * 16 * 657 + 1, dtype=torch.uint8, device=DEVICE)
    src = storage[1:].view(4, 16, 657)[:, :, :656]
    with pytest.raises(ValueError, match="4-byte"):
        ops.cp_gather_and_upconvert_fp8_kv_cache(**upconvert_args(656, src_cache=src))


def concat_args(**override):
    args = dict(
        kv_c=_t(8, 512),
        k_pe=_t(8, 64),
        kv_cache=_t(4, 16, 576),
        slot_mapping=torch.arange(8, device=DEVICE),
        kv_cache_dtype="auto",
        scale=torch.ones(1, device=DEVICE),
    )
    args.update(override)
    return args


U8 = dict(dtype=torch.uint8)
CONCAT_BAD = [
    ("kv_cache_dtype", dict(kv_cache_dtype="fp4"), ValueError, "'nvfp4_ds_mla'"),
    ("kv_c", dict(kv_c=_t(8, 512, dtype=torch.int16)), TypeError, "kv_c"),
    ("kv_c", dict(kv_c=_t(8, 512, 1)), ValueError, "kv_c"),
    ("k_pe", dict(k_pe=_t(8, 64, dtype=torch.float16)), TypeError, "k_pe"),
    ("k_pe", dict(k_pe=_t(8, 2, 64)), ValueError, "k_pe"),
    ("slot_mapping", dict(slot_mapping=torch.arange(8, dtype=torch.int32, device=DEVICE)), TypeError, "slot_mapping"),
    ("slot_mapping", dict(slot_mapping=torch.arange(9, device=DEVICE)), ValueError, "slot_mapping"),
    ("kv_cache", dict(kv_cache=_t(4, 16, 570)), ValueError, "kv_cache"),
    ("kv_cache", dict(kv_cache=_t(4, 16, 576, dtype=torch.float16)), TypeError, "kv_cache"),
    ("kv_cache", dict(kv_cache_dtype="fp8"), TypeError, "1-byte"),
    ("kv_cache", dict(kv_cache_dtype="fp8_ds_mla", kv_cache=torch.zeros(4, 16, 576, device=DEVICE, **U8)), ValueError, "656"),
    ("kv_cache", dict(kv_cache_dtype="nvfp4_ds_mla", kv_cache=torch.zeros(4, 16, 656, device=DEVICE, **U8)), ValueError, "352"),
    ("kv_c", dict(kv_cache_dtype="nvfp4_ds_mla", kv_c=_t(8, 512, dtype=torch.float16), k_pe=_t(8, 64, dtype=torch.float16),
                  kv_cache=torch.zeros(4, 16, 352, device=DEVICE, **U8)), TypeError, "kv_c"),
    ("kv_c", dict(kv_cache_dtype="fp8_ds_mla", kv_c=_t(8, 256), kv_cache=torch.zeros(4, 16, 656, device=DEVICE, **U8)), ValueError, "512"),
    ("scale", dict(scale=torch.ones(1, dtype=torch.float16, device=DEVICE)), TypeError, "scale"),
]


@pytest.mark.parametrize("name,override,error,needle", CONCAT_BAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONCAT_BAD)])
def test_concat_and_cache_mla_rejects(name, override, error, needle):
    args = concat_args(**override)
    before = args["kv_cache"].clone()
    with pytest.raises(error, match=needle):
        ops.concat_and_cache_mla(**args)
    assert torch.equal(args["kv_cache"], before)


def test_trusted_index_values_is_a_no_op_kept_for_compatibility():
    """The wrappers read no index values by default, so the old opt-out block
    changes nothing: an out-of-range slot is refused inside it as outside."""
    slots = torch.tensor([0, 1, 2, 3, 4, 5, 6, 500], device=DEVICE)
    if DEVICE.type == "cuda":
        pytest.skip("the CPU raises at once; on CUDA the same violation traps in the kernel")
    with ops.trusted_index_values(), pytest.raises(ValueError, match="slot_mapping"):
        ops.concat_and_cache_mla(**concat_args(slot_mapping=slots))
