"""Every public op is a registered ``torch.ops.portq`` custom op an engine can
compile: the schema declares what it writes, the fake implementation gives the
right shapes and dtypes (``torch.library.opcheck``, on the CPU interpreter),
and on the GPU a module calling the op compiles with ``fullgraph=True`` and no
graph break, gives the eager bits, and replays inside a captured CUDA graph."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import portq_kernels.kv_cache  # noqa: F401  (registers the ops)
import portq_kernels.mla_prefix  # noqa: F401
import portq_kernels.mla_sparse  # noqa: F401
from portq_kernels import custom_ops
from portq_kernels.kv_cache import reference as kv_ref

sys.path.insert(0, str(Path(__file__).resolve().parent / "mla_prefix"))
from mla_prefix_cases import make_case  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
I32 = torch.int32


def _i(*values):
    return torch.tensor(values, dtype=I32, device=DEVICE)


def _cases():
    """op name -> (args, indices of the arguments it writes). Small, valid inputs."""
    gen = torch.Generator().manual_seed(11)
    blocks, block = 8, 16
    table = torch.randperm(blocks, generator=gen)[:6].view(2, 3).to(I32).to(DEVICE)
    cu, seq_starts = _i(0, 20, 37), _i(3, 5)
    kv_c = torch.randn(blocks * block, 512, generator=gen).bfloat16()
    k_pe = torch.randn(blocks * block, 64, generator=gen).bfloat16()
    bf16_cache = torch.cat([kv_c, k_pe], 1).view(blocks, block, 576).to(DEVICE)
    fp8_cache = kv_ref.quantize_fp8(bf16_cache.cpu().float(), 0.5, kv_ref.fmt.Conversion.FP8_E4M3).to(DEVICE)
    ds_mla = kv_ref.encode_fp8_ds_mla(kv_c, k_pe).view(blocks, block, 656).to(DEVICE)
    nvfp4 = kv_ref.encode_nvfp4_ds_mla(kv_c, k_pe).view(blocks, block, 352).to(DEVICE)
    scale = torch.tensor([0.5], device=DEVICE)

    def rows(dtype, n=37):
        return torch.zeros(n, 576, dtype=dtype, device=DEVICE)

    slots = torch.randperm(blocks * block, generator=gen)[:24].to(DEVICE)
    cases = {
        "concat_and_cache_mla": ((kv_c[:24].to(DEVICE), k_pe[:24].to(DEVICE),
                                  torch.zeros(blocks, block, 656, dtype=torch.uint8, device=DEVICE),
                                  slots, "fp8_ds_mla", scale), (2,)),
        "gather_and_maybe_dequant_cache": ((fp8_cache, rows(torch.bfloat16), table, cu, 37, "fp8", scale,
                                            seq_starts), (1,)),
        "cp_gather_cache": ((bf16_cache, rows(torch.bfloat16), table, cu, 2, seq_starts), (1,)),
        "cp_gather_and_upconvert_fp8_kv_cache": ((ds_mla, rows(torch.bfloat16), table, _i(0, 20), 2,
                                                  seq_starts), (1,)),
        "cp_gather_and_upconvert_nvfp4_kv_cache": ((nvfp4, rows(torch.bfloat16), table, _i(0, 20), 2,
                                                    seq_starts), (1,)),
    }
    case = make_case([5, 0, 7], page_size=16, cache_dtype=torch.bfloat16, scale_mode="row")
    cases["gather_kv_b_proj"] = (case.args() + (False, False), (7, 8))
    req_id = _i(0, 1, 1, 0)
    topk = torch.randint(-1, 40, (4, 256), generator=gen).to(I32).to(DEVICE)
    remap = (req_id, table, topk, 16, None, 256, 128, False, None, None, None, 1, 0, 1)
    cases["triton_convert_req_index_to_global_index"] = (remap + (True,), ())
    cases["triton_convert_req_index_to_global_index_out"] = (
        remap + (True, torch.zeros(4, 256, dtype=I32, device=DEVICE), torch.zeros(4, dtype=I32, device=DEVICE)),
        (15, 16))
    cases["triton_filter_and_convert_dcp_index"] = ((req_id, table, topk, 2, 1, 1, 16, None, 256, 128, True,
                                                     True), ())
    counts = _i(3, 0, 2, 0)
    cases["prepare_sparse_mla_safe_lengths"] = ((topk.clone(), counts), (0,))
    return cases


CASES = _cases()


def test_every_public_op_is_registered():
    assert set(CASES) == set(custom_ops.REGISTERED)
    for name, (args, written) in CASES.items():
        schema = getattr(torch.ops.portq, name).default._schema
        mutated = {a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write}
        assert mutated == {schema.arguments[i].name for i in written}, name


@pytest.mark.parametrize("name", sorted(CASES))
def test_fake_implementation_matches(name):
    """opcheck: the schema's mutations, the fake tensors' shapes/dtypes against
    the real outputs, and the op under AOT dispatch."""
    args, _ = CASES[name]
    args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    torch.library.opcheck(getattr(torch.ops.portq, name).default, args,
                          test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))


def _fresh(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _results(name, args, out):
    _, written = CASES[name]
    outputs = [args[i] for i in written]
    if out is not None:
        outputs += list(out) if isinstance(out, (tuple, list)) else [out]
    return outputs


class _CallOp(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.name = name

    def forward(self, *args):
        return getattr(torch.ops.portq, self.name)(*args)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_fullgraph_matches_eager_and_replays_in_a_cuda_graph(name):
    args, _ = CASES[name]
    eager_args = _fresh(args)
    eager = _results(name, eager_args, getattr(torch.ops.portq, name)(*eager_args))

    torch._dynamo.reset()
    explained = torch._dynamo.explain(_CallOp(name))(*_fresh(args))
    assert explained.graph_break_count == 0 and explained.graph_count == 1, explained.break_reasons

    compiled = torch.compile(_CallOp(name), fullgraph=True)
    compiled_args = _fresh(args)
    got = _results(name, compiled_args, compiled(*compiled_args))
    for want, have in zip(eager, got):
        assert torch.equal(want.view(torch.uint8) if want.dtype.is_floating_point else want,
                           have.view(torch.uint8) if have.dtype.is_floating_point else have), name

    # Capture the compiled call (after the warm-up above) and replay it.
    graph_args = _fresh(args)
    compiled(*_fresh(args))
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = compiled(*graph_args)
    for i in CASES[name][1]:
        graph_args[i].copy_(args[i])  # what the capture run wrote is undone; the replay redoes it
    graph.replay()
    torch.cuda.synchronize()
    replayed = _results(name, graph_args, captured)
    for want, have in zip(eager, replayed):
        assert torch.equal(want.view(torch.uint8) if want.dtype.is_floating_point else want,
                           have.view(torch.uint8) if have.dtype.is_floating_point else have), name


@pytest.mark.gpu
def test_friendly_wrappers_compile_without_graph_breaks():
    """The Python wrappers reduce to the op call under the compiler."""
    from portq_kernels import kv_cache

    args, _ = CASES["gather_and_maybe_dequant_cache"]

    def gather(src, dst, table, cu, num_tokens, dtype, scale, starts):
        kv_cache.gather_and_maybe_dequant_cache(src, dst, table, cu, num_tokens, dtype, scale, starts)
        return dst

    torch._dynamo.reset()
    explained = torch._dynamo.explain(gather)(*_fresh(args))
    assert explained.graph_break_count == 0, explained.break_reasons
    eager_args, compiled_args = _fresh(args), _fresh(args)
    assert torch.equal(gather(*eager_args), torch.compile(gather, fullgraph=True)(*compiled_args))
