"""The engine's package root for causal-conv1d's vendored Python interface
(causal_conv1d_interface.py, written verbatim from upstream at the pinned
commit). The interface imports the compiled extension causal_conv1d_cuda,
built from the vendored csrc/ files (the binding, the forward and update
kernels, the params header) together with upstream's causal_conv1d_bwd.cu,
causal_conv1d_common.h and static_switch.h at the same commit, which nothing
here owns. This root re-exports nothing, so importing the package never
needs the extension."""
