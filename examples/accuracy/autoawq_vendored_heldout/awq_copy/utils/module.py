"""The tree's own stand-in for the helper the vendored apply_clip imports
lazily: a submodule by dotted name. Not upstream's file."""


def get_op_by_name(module, op_name):
    for name, m in module.named_modules():
        if name == op_name:
            return m
    raise ValueError(f"cannot find op {op_name} in module")
