"""A decorator replaced by the equivalent its library documents for the deprecated spelling, with the
arguments that make it equal (``torch.cuda.amp.custom_fwd`` → ``torch.amp.custom_fwd(device_type='cuda')``),
is cosmetic (rule ``documented-equivalent-decorator``); another device, another argument or a name bound to
something else stays flagged."""
from __future__ import annotations

from portq.classifier.rules.spellings import EQUIVALENT_DECORATORS
from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "ACT"
title    = "Activation layers"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

LAYER = '''\
import torch
{imports}


class ScaleAutoGrad(torch.autograd.Function):
    @staticmethod
    @{fwd}
    def forward(ctx, input, scale):
        ctx.scale = scale
        return input * scale

    @staticmethod
    @{bwd}
    def backward(ctx, output_grad):
        return output_grad * ctx.scale, None
'''

OLD = LAYER.format(imports="from torch.cuda.amp import custom_bwd, custom_fwd", fwd="custom_fwd", bwd="custom_bwd")

TREE = {
    "kernels/scale.py": '''\
import torch
from torch.cuda.amp import custom_fwd


class Scale(torch.autograd.Function):
    # portq: ports vllm:lib/layers.py::ScaleAutoGrad.forward
    @staticmethod
    @custom_fwd
    def forward(ctx, x, s):
        ctx.s = s
        return x * s
''',
    "engine/model.py": "from kernels.scale import Scale\n\n\ndef run(x):\n    return Scale.apply(x, 2.0)\n",
}


def _forward(tmp_path, new: str):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={"lib/layers.py": OLD}),
                                              CommitSpec("drop the deprecated decorators",
                                                         files={"lib/layers.py": new})], TREE, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("forward"))


def test_the_documented_replacement_of_a_deprecated_decorator_is_cosmetic(tmp_path):
    forward = _forward(tmp_path, LAYER.format(imports="from torch.amp import custom_bwd, custom_fwd",
                                              fwd="custom_fwd(device_type='cuda')",
                                              bwd="custom_bwd(device_type='cuda')"))
    assert forward.verdict == NOT_APPLICABLE and forward.justification == "cosmetic", forward.reason
    assert forward.rules == ["documented-equivalent-decorator"]


def test_the_replacement_spelled_through_the_module_is_cosmetic(tmp_path):
    forward = _forward(tmp_path, LAYER.format(imports="", fwd="torch.amp.custom_fwd(device_type=\"cuda\")",
                                              bwd="torch.amp.custom_bwd(device_type='cuda')"))
    assert forward.verdict == NOT_APPLICABLE and forward.rules == ["documented-equivalent-decorator"], \
        forward.reason


def test_another_device_stays_flagged(tmp_path):
    forward = _forward(tmp_path, LAYER.format(imports="from torch.amp import custom_bwd, custom_fwd",
                                              fwd="custom_fwd(device_type='cpu')",
                                              bwd="custom_bwd(device_type='cpu')"))
    assert forward.verdict in FLAGGED and "documented-equivalent-decorator" not in forward.rules, forward.reason


def test_a_new_cast_argument_stays_flagged(tmp_path):
    forward = _forward(tmp_path, LAYER.format(imports="from torch.amp import custom_bwd, custom_fwd",
                                              fwd="custom_fwd(device_type='cuda', cast_inputs=torch.float32)",
                                              bwd="custom_bwd(device_type='cuda')"))
    assert forward.verdict in FLAGGED and "documented-equivalent-decorator" not in forward.rules, forward.reason


def test_a_name_bound_to_a_function_of_the_module_stays_flagged(tmp_path):
    own = "from torch.amp import custom_bwd\n\n\ndef custom_fwd(device_type):\n    return lambda f: f\n"
    forward = _forward(tmp_path, LAYER.format(imports=own, fwd="custom_fwd(device_type='cuda')",
                                              bwd="custom_bwd(device_type='cuda')"))
    assert forward.verdict in FLAGGED and "documented-equivalent-decorator" not in forward.rules, forward.reason


def test_the_table_holds_what_the_library_documents():
    # torch/cuda/amp/autocast_mode.py: each deprecated decorator calls the torch.amp one with device_type="cuda"
    assert EQUIVALENT_DECORATORS["torch.cuda.amp.custom_fwd"].replacement == "torch.amp.custom_fwd"
    assert EQUIVALENT_DECORATORS["torch.cuda.amp.custom_fwd"].added == (("device_type", "cuda"),)
    assert EQUIVALENT_DECORATORS["torch.cuda.amp.custom_bwd"].kept == frozenset()
