"""In-tree MLA prefill callers: what makes the ported kernels reachable.

``chunked_context``: the MLA chunked-context prefill (plan the context chunks,
gather each into the workspace, expand it with ``gather_kv_b_proj``).
``sparse_prefill``: the sparse-MLA prefill over packed fp8/nvfp4 caches
(workspace chunks, upconvert gathers, top-k index remap). ``reference`` runs
the same iterations on the kernel rows' PyTorch references.

Submodules are imported on use: each pulls in the kernel packages it drives.
"""
