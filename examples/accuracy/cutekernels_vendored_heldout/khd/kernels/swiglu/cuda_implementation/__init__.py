"""The tree's own stand-in for upstream's CUDA SwiGLU bindings (their
extension is not built here): the names the vendored host imports, each
refusing to run, since the engine selects the Triton backend only."""


def _no_cuda_extension(*_args, **_kwargs):
    raise RuntimeError("the CUDA SwiGLU extension is not built in this tree; use the triton backend")


swiglu_forward_cuda_kernel = _no_cuda_extension
swiglu_forward_cuda_kernel_compileable = _no_cuda_extension
swiglu_backward_cuda_kernel = _no_cuda_extension
swiglu_backward_cuda_kernel_compileable = _no_cuda_extension
