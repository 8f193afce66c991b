"""Launch rules: which kernels a definition launches, and how (DESIGN §6, §7).

Launches pair old with new by the arguments they share; grids compare as
canonical expressions (locals resolved through their bindings, ``cdiv``
forms one operator, the SM count one leaf), never as text. A launch constant
the wrapper picks by a platform probe bound at import, the old value kept on
every other platform (``platform-chosen-launch``), is a launch heuristic for a
reader (DESIGN §5: body-level), not the interface gap a changed launch shape is;
so is a second launch of a new kernel the wrapper takes only where such a probe
holds (followed through the functions the test calls, here or in the upstream
modules it imports), the old launch kept for every other platform.
So is a tile the grid divides the same inputs by and the kernel receives
(``tile-choice``), and any launch of a kernel the tree declares not carried
(``not-carried-launch``): the port runs its own kernel instead.

Example diff (NEEDS_REVIEW, not REAL_GAP, for a port that launches 128)::

    +SMALL_PART = 'Tesla' in torch.cuda.get_device_name(0)
    -    BLOCK = 128
    +    BLOCK = 128 if not SMALL_PART else 64

The code: the comparisons of launches and program ids against a port, each
giving ``Delta`` items (``portq.classifier.delta``) that
``portq.classifier.deltas.compare`` gathers. It reads the signatures handed to
it and the in-tree index only to name what a port's launch binds to, and other
upstream modules only through the reader the verdict table hands it; it reads
no git, imports no verdict table and never names a corpus symbol, path or
commit.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from portq.classifier.delta import Delta, Status, _ruled
from portq.classifier.imports import _module_stem
from portq.classifier.rules import Rule
from portq.classifier.rules.parameters import _derivation_evidence, _derivation_words, derivation_rule
from portq.core.evidence import Evidence, Kind, Location, Side
from portq.language.signatures import (UNRESOLVED, Signature, bare_name, bind_arguments, normalise_kernel_name,
                                       normalise_name)
from portq.language.symbols import KIND_CUDA_KERNEL, KIND_TRITON_KERNEL

if TYPE_CHECKING:
    from portq.tree.tree_index import TreeIndex

RULES = (
    Rule("launch-kernel", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "A kernel upstream now launches (or stopped launching) that the port does not (or still does) leaves it "
         "behind; a kernel replaced in place with the same grid and only derived arguments added is for a reader. "
         "A call of a value looked up in a module-level dictionary (`_host.cache[key](x)`, the cache bound only "
         "to `{}` or `dict()`), or a field of a record stored in one (`cache[key][\"run\"](x)`), is a host's cached "
         "compiled callable, no kernel launched on a grid: a host that "
         "now gets it from a cached compile helper stopped launching nothing, and its body is compared. A C++ "
         "launch through a local pointer bound to a call of a function of the same file every `return` of which "
         "returns an instance of one kernel of that file (`fp k = pick(flag); k<<<g, b>>>(...)`, `pick` "
         "returning `K<true>` or `K<false>`) launches that kernel and is compared as its launch; a picker that "
         "can return another kernel, or anything but a kernel, resolves nothing.",
         "-    old_k[grid](x, n)\n+    new_k[grid](x, n, BLOCK=64)",
         "classifier.rules.launch._launch_items, ._new_kernel_grid_item, "
         "language.signatures_python._PythonExtractor._module_dictionaries, "
         "language.signatures_cpp._CppExtractor._picked_kernel"),
    Rule("launch-geometry", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "A paired launch whose grid, block, `num_warps` or `num_stages` changed, compared as canonical "
         "expressions against the port's launch: behind when the port keeps the old form, in sync when it has "
         "the new one, for a reader when neither.",
         "-dim3 grid((n + 255) / 256)\n+dim3 grid(std::min((n + 255) / 256, 4 * num_sms))",
         "classifier.rules.launch._geometry_items, ._grid_item, ._grid_form_item"),
    Rule("excluded-path", ("IN_SYNC",),
         "A Python launch whose grid is the same expression before and after but for the old side's dependence "
         "on the path (an input of it reassigned in an `if`, without `elif` or `else`, of the function's own "
         "body, the commit removing that path) is in sync with a port whose launching definition asserts, in a "
         "statement of its own before its launch, a test of the same parameter (its attribute or method, "
         "compared with an integer) that no value satisfies together with that `if`'s condition (written "
         "there or through a local bound to it once): the port never takes the removed path. Either test "
         "read of a parameter reassigned before it, other than by a conversion that keeps its shape "
         "(`x = x.contiguous()`), a condition of another form, or a grid whose expression changed too, is "
         "compared as before.",
         "-    flat = x.dim() == 1\n-    if flat:\n-        x = x.unsqueeze(0)\n     k[(cdiv(rows(x), B),)](x)   "
         "(the port: assert x.dim() > 1)",
         "classifier.rules.launch._excluded_paths, ._excludes, "
         "language.signatures_python._PythonExtractor._path_conditions, ._asserted, ._parameter_test"),
    Rule("launch-arguments", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "The arguments a paired launch passes, bound to the kernel's parameters: an argument upstream added or "
         "stopped passing that the port's launch does not follow leaves it behind.",
         "-    k[grid](x, out, n)\n+    k[grid](x, out, n, stride)",
         "classifier.rules.launch._argument_items, ._bound_items"),
    Rule("argument-through-local", ("IN_SYNC", "NEEDS_REVIEW"),
         "A launch argument upstream moved into a local (`t = x.view(-1, k)` then passing `t` where `x.view(-1, "
         "k)` was passed, directly or in the sequence a `*args` splat spreads), the local's one reaching value "
         "token for token the old argument, passes the same value: the old argument's name is not dropped and "
         "the local is not new, so the launch gives no delta and what else changed decides (a body change "
         "needs a reader). A local holding a different expression, or one several assignments reach, still "
         "compares by name.",
         "-    args = [x.view(-1, k), w]\n+    x2 = x.view(-1, k)\n+    args = [x2, w]      (then fn(*args))",
         "classifier.rules.launch._moved_into_locals, language.signatures_python"),
    Rule("program-decomposition", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "How a kernel's program id is read and decomposed (axes, `pid // H`, `num_programs`) against the port's. "
         "In C++ a block index a `__device__` function of the same file reads, called from the kernel "
         "(transitively), is the kernel's: the helper runs in the kernel's block, so a body moved into a helper "
         "keeps its axes (DESIGN §5: the launch and the work each block does are unchanged; what the moved "
         "body does is a body change for a reader). In Python and Triton `/` is true division, never a packing "
         "of work into the id: only `//` and `%` decompose a program id there.",
         "-    pid = tl.program_id(0)\n+    pid_m = tl.program_id(0); pid_n = tl.program_id(1)",
         "classifier.rules.launch._program_id_items"),
    Rule("not-carried-launch", ("NEEDS_REVIEW",),
         "A launch of a kernel an in-tree whole-definition `not-carried` declaration names, paired across the "
         "commit, newly launched, or now launched in place of the kernel the port mirrors (every kernel upstream "
         "now launches is declared), is not the port's launch shape: the port recorded that it runs its own "
         "kernel instead, and that kernel is compared on its own. What changed is the host's body around a kernel "
         "the port does not carry (DESIGN §5: NEEDS_REVIEW). A host that now launches a kernel nobody declared "
         "stays `launch-kernel`.",
         "-    if same_heads: pair_k[(cdiv(n, B), h)](q, k)   # pair_k: not-carried\n"
         "-    else: one_k[(cdiv(n, B), h)](q); one_k[(cdiv(n, B), h)](k)\n"
         "+    pair_k[(cdiv(n, B),)](q, k)",
         "classifier.rules.launch._launch_items, ._not_carried_launch"),
    Rule("tile-choice", ("NEEDS_REVIEW",),
         "A paired launch whose grid changed only through local integer constants that the launch also passes "
         "to the kernel, the grid's canonical form otherwise the same (the same inputs, the same axes): the "
         "wrapper covers the same work in other-sized tiles. No caller supplies or selects a tile, so it is an "
         "implementation detail for a reader (DESIGN §5: tile sizes derived from what the kernel receives), not "
         "the launch shape a caller sees. So is a tile the launcher now picks among integer literals "
         "(`BLOCK = 32 if cols <= 64 else 16`), passed to the kernel by keyword, whose derivation reads only "
         "shapes, constants and values the kernel receives. A grid that reads a new input, gains an axis, or "
         "divides by a constant the kernel is not passed, or a tile picked by a caller's value, an input's dtype, a call, or "
         "with an arm that is no literal, stays `launch-geometry`.",
         "-    BLOCK = 32\n+    BLOCK = 8\n     grid = [cdiv(rows, BLOCK)]\n     k[grid](x, rows, BLOCK=BLOCK)",
         "classifier.rules.launch._geometry_items, ._tile_choice, ._literal_choice, ._shape_chosen"),
    Rule("platform-chosen-launch", ("NEEDS_REVIEW",),
         "A launch constant (tile, warps, stages) the wrapper now picks by a platform probe, a module-level flag "
         "bound once at import from the device's name, capability or architecture (or such a probe itself), "
         "with the old value kept on the other platforms: no caller supplies or selects it, so it is a launch "
         "heuristic of the wrapper for a reader (DESIGN §5: body-level), not an interface gap. A value changed on "
         "every platform, or a test that reads a parameter, the environment or a name a setter rebinds, stays "
         "with the launch rules. A second launch of a new kernel under an `if` that holds on a probed platform "
         "alone (the probe followed through the functions the test calls, in the module or through absolute, "
         "relative and aliased imports of other upstream modules), the old launch kept after it, is the same "
         "heuristic; an `or`, a test an input decides alone, or a helper reading the environment stays a gap.",
         "+SMALL_PART = 'Tesla' in torch.cuda.get_device_name(0)\n"
         "-    BLOCK = 128\n+    BLOCK = 128 if not SMALL_PART else 64",
         "classifier.rules.launch.platform_chosen_launches, .platform_chosen_kernels"),
    Rule("renamed-launch-keyword", ("IN_SYNC",),
         "A launch whose kernel no single definition binds (a kernel the launcher picks at run time) that "
         "renames a keyword with the kernel's parameter, passing the same value (`Dst=out` becoming "
         "`dst_ptr=out`, the pair unique by its text), changed a name only: it asks nothing of the port's "
         "launch, as a renamed parameter at a launch whose kernel binds does not. A new keyword passing "
         "another value (a caller's) stays `launch-arguments`.",
         "-    impl[(rows,)](Dst=out, X=x, N=n)\n+    impl[(rows,)](dst_ptr=out, x_ptr=x, WIDTH=n)",
         "classifier.rules.launch._argument_items, ._renamed_arguments"),
    Rule("splat-unresolved-binding", ("NEEDS_REVIEW",),
         "A paired launch whose new side binds through a splat of unknown length (`*t.stride()`, the tensor's "
         "rank fixed nowhere, with a positional argument after it and no keyword fixing the end) may still fill, "
         "through the splat, any parameter it no longer names where it can be bound: such a parameter is not "
         "proven dropped, so the port still passing it is for a reader, and it is not one upstream dropped when "
         "`positional-derived-argument` asks whether the port's launch passes every parameter upstream dropped. "
         "A launch whose binding resolves (no splat, or a keyword fixing where the splats end) stays "
         "`launch-arguments`.",
         "-    k[grid](x=x, n=n, sx=x.stride(0), sy=y.stride(0), flag=f, BLOCK=64)\n"
         "+    k[grid](x, n, n // 32, *x.stride(), f, *y.stride(), 64)",
         "classifier.rules.launch._bound_items"),
    Rule("template-argument", ("NEEDS_REVIEW",),
         "An argument a paired C++ launch stopped passing at run time that the launched kernel now takes as a "
         "template argument (`k<iterations><<<grid, block>>>(...)`, the launcher choosing among instantiations) "
         "still reaches the kernel, as a compile-time value: no input the caller supplies is dropped, so it is "
         "for a reader (DESIGN §5), not the `launch-arguments` gap of an argument dropped. An argument that "
         "reaches the kernel in no form stays `launch-arguments`.",
         "-    k<<<g, b>>>(x, n, iterations);\n+    k<iterations><<<g, b>>>(x, n);",
         "classifier.rules.launch._argument_items, ._bound_items, ._now_template_arguments"),
    Rule("derived-geometry", ("NEEDS_REVIEW",),
         "A paired launch whose grid or block changed while the launcher takes the same parameters and the grid "
         "reads the same of them on each axis (the block none), everything else constants: a tuning constant "
         "(threads per block), the elements one access reads (from the element type's size), a count computed "
         "from inputs the grid already read. No caller supplies or selects any of it and the grid covers the same "
         "inputs on the same axes, so it is geometry derived from what the kernel already receives, an "
         "implementation detail for a reader (DESIGN §5, the `tile-choice` family), usually changed with the "
         "kernel's indexing. With a block of several axes (`dim3 threads(TX, TY, 1)`) the grid counts the block "
         "when each of its axes reads the block's extent on that axis (every extent but 1), trailing axes of "
         "extent 1 written or not. A grid that starts to read an input (an existing parameter or a new one), whose "
         "axes swap, that no longer counts the launch's block, or that reads a call or a local it cannot resolve "
         "to constants (a device query capping it) stays `launch-geometry`.",
         "-    dim3 grid((total - 1) / 1024 + 1);\n"
         "+    const int per_block = threads * (16 / sizeof(T));\n+    dim3 grid((total + per_block - 1) / per_block);",
         "classifier.rules.launch._geometry_items, ._derived_geometry, ._counts_own_block, ._unit_axes_dropped"),
    Rule("unported-launch-replaced", ("NEEDS_REVIEW",),
         "A new kernel launched where the host used to launch a kernel the port has never had (the port does "
         "not launch it, the tree holds no definition of it and no anchor names it), the two launches paired as "
         "one launch site: the launch the port lacks was added by an earlier commit, whose entry reports that "
         "interface change; swapping it for another kernel leaves the port exactly as far behind as before, so "
         "for this port it is a change of the host's body around kernels it does not run, for a reader (DESIGN "
         "§5: NEEDS_REVIEW), never a `launch-kernel` or launch-shape gap by itself. A new kernel replacing one "
         "the port launches, or one the tree holds a definition of, stays `launch-kernel`.",
         "     if fp8:\n-        fp8_k[grid](x, out, n)      # fp8_k: added upstream, never ported\n"
         "+        shared_k[grid](x, out, n, factor, MODE=1)\n     else:\n         plain_k[grid](x, out, n)",
         "classifier.rules.launch._launch_items, ._never_held"),
    Rule("opaque-new-grid", ("NEEDS_REVIEW",),
         "A paired launch whose new grid goes through something that cannot be resolved (a project helper such "
         "as a ceiling division) is not proven different from the old grid: a port that keeps the old grid is "
         "for a reader, never behind on the grid's text alone.",
         "-    k[lambda meta: (triton.cdiv(n, meta['B']),)](x)\n+    k[(ceil_div(n, B),)](x)",
         "classifier.rules.launch._grid_form_item"),
    Rule("num-programs-read", ("NEEDS_REVIEW",),
         "A kernel that newly reads `num_programs` (the grid's size) packs no work into the program id: what it "
         "does with the size (a last-block branch, a bound) is a change of its body for a reader, not a launch "
         "shape the port is behind on.",
         "+    if tl.program_id(0) < tl.num_programs(0) - 1:\n+        _body(x, mask=None)",
         "classifier.rules.launch._program_id_items"),
    Rule("unseen-decomposition", ("NEEDS_REVIEW",),
         "A kernel that now decomposes its program id (`pid % m`, `pid // m`) where neither upstream's old kernel "
         "nor the port's was seen decomposing it (the old one handed the id to a helper the comparison cannot "
         "read, the port reads its tiles from program-id axes of its own), on unchanged program-id axes: that "
         "the port 'still decomposes the old way' is only that neither side was seen packing work into the id, "
         "which proves nothing the port must change, so for a reader. A port whose kernel decomposes the id as "
         "upstream's old one did stays behind; changed axes stay compared as axes.",
         "-    row, col = tile_of(pid, m, n)\n+    row, col = pid % m, pid // m   (the port: row = "
         "tl.program_id(0); col = tl.program_id(1))",
         "classifier.rules.launch._program_id_items"),
)


# --- launches against a port -----------------------------------------------------


def _launched_names(port: Signature, index: TreeIndex | None) -> dict[str, set[str]]:
    """kernel as written -> the names it stands for: its normalised name and
    the upstream symbols its in-tree definition ports."""
    names: dict[str, set[str]] = {}
    for launch in port.launches:
        bare = bare_name(launch.kernel)
        stands_for = {launch.kernel_normalised}
        if index is not None:
            stands_for |= {normalise_kernel_name(n) for n in index.upstream_symbols_ported_by(bare)}
        names[launch.kernel] = stands_for
    return names


def _launch_items(old: Signature, new: Signature, port: Signature, index: TreeIndex | None,
                  scope: set[str] = frozenset(), derivation=None, set_aside=frozenset(),
                  respell: dict[str, str] | None = None) -> list[Delta]:
    """``set_aside``: the bare names of kernels whole-definition ``not-carried``
    declarations name (``not-carried-launch``); ``respell``: the launcher's consistent renaming of its
    locals (old -> new), when that, and keywords renamed with a callee, is its whole change."""
    if not old.launches and not new.launches:
        return []
    items: list[Delta] = []
    aside = {normalise_kernel_name(name) for name in set_aside}
    old_kernels = {l.kernel_normalised for l in old.launches}
    new_kernels = {l.kernel_normalised for l in new.launches}
    launched = _launched_names(port, index)
    port_stands_for = set().union(*launched.values()) if launched else set()
    cross = old.language != port.language
    pairs = _pair_launches(old.launches, new.launches)
    replaced = {(before.kernel_normalised, after.kernel_normalised): added for before, after in pairs
                if (added := _replaced_in_place(before, after)) is not None}
    # A paired launch site whose old kernel the port has never had: a kernel swapped there is not the port's.
    never = _never_held(index, old_kernels - new_kernels - port_stands_for - aside)
    unported = {after.kernel_normalised: before.kernel_normalised for before, after in pairs
                if before.kernel_normalised in never and after.kernel_normalised not in port_stands_for
                and after.kernel_normalised not in old_kernels}
    # Kernels launched: added (a new sibling dispatched from the wrapper) and removed (a renamed kernel).
    for kernel in sorted(new_kernels - old_kernels):
        launch = next(l for l in new.launches if l.kernel_normalised == kernel)
        upstream = Evidence(kind=Kind.LAUNCH_KERNEL, message=f"upstream now launches {kernel}", side="upstream-new",
                            path=new.path, line=launch.line, quote=launch.quote, symbol=new.name)
        if kernel in port_stands_for:
            mine = next((l for l in port.launches if kernel in launched.get(l.kernel, set())), None)
            items.append(_new_kernel_grid_item(kernel, launch, mine, port, new, upstream))
        elif kernel in aside:
            items.append(_not_carried_launch(f"upstream now launches {kernel}, which the port declares not carried",
                                             [upstream]))
        elif (swap := next(((was, added) for (was, now), added in replaced.items() if now == kernel), None)):
            items.append(Delta("undecided", "launch", _replacement_message(swap[0], kernel, swap[1]), [upstream]))
        elif kernel in unported:
            items.append(_unported_replacement(f"upstream now launches {kernel} where it launched "
                                               f"{unported[kernel]}, a kernel the port has never had", [upstream]))
        else:
            tree = [_tree_launch_evidence(port, l, "the port launches this instead") for l in port.launches[:2]]
            if not tree:
                tree = [Evidence(kind=Kind.TREE_LAUNCH, message="the port launches no kernel", side="tree",
                                 path=port.path, line=port.start_line, symbol=port.name)]
            items.append(Delta("behind", "launch", f"upstream now launches {kernel}, the port does not", [upstream] + tree))
    for kernel in sorted(old_kernels - new_kernels):
        launch = next(l for l in old.launches if l.kernel_normalised == kernel)
        upstream = Evidence(kind=Kind.LAUNCH_KERNEL, message=f"upstream no longer launches {kernel}", side="upstream-old",
                            path=old.path, line=launch.line, quote=launch.quote, symbol=old.name)
        still = [l for l in port.launches if kernel in launched.get(l.kernel, set())]
        swap = next(((now, added) for (was, now), added in replaced.items() if was == kernel), None)
        if still and swap:
            items.append(Delta("undecided", "launch", _replacement_message(kernel, swap[0], swap[1]),
                               [upstream, _tree_launch_evidence(port, still[0], f"the port still launches {kernel}")]))
        elif still and new_kernels and new_kernels <= aside:
            now = ", ".join(sorted(new_kernels))
            items.append(_not_carried_launch(
                f"upstream stopped launching {kernel} and now launches only {now}, which the port declares not "
                f"carried; the port still launches {kernel}, as its declaration records",
                [upstream, _tree_launch_evidence(port, still[0], f"the port still launches {kernel}")]))
        elif still:
            items.append(Delta("behind", "launch", f"upstream stopped launching {kernel}, the port still launches it",
                                    [upstream] + [_tree_launch_evidence(port, l, f"the port still launches {kernel}") for l in still[:1]]))
        elif port.launches or new_kernels:
            items.append(Delta("sync", "launch", f"the port does not launch {kernel}", [upstream]))
    _ruled(items, "launch-kernel")
    # Launch geometry of a paired launch.
    for before, after in pairs:
        mine = _port_launch(port, launched, before, after)
        found = _ruled(_geometry_items(old, new, port, before, after, mine, cross, len(port.launches), index, scope,
                                       derivation, respell), "launch-geometry")
        if found and {before.kernel_normalised, after.kernel_normalised} <= aside:
            # Neither side is a kernel the port runs: its launch is not the port's launch shape.
            items.append(_not_carried_launch(
                f"upstream changed how it launches {after.kernel_normalised}, which the port declares not carried",
                [e for i in found for e in i.evidence if e.side != "tree"][:4]))
            continue
        if unported.get(after.kernel_normalised) == before.kernel_normalised:
            # Neither side is a kernel the port has: how the swapped launch is shaped is not the port's shape.
            items += [_unported_replacement(f"{i.message}; the launch replaced {before.kernel_normalised}, a kernel "
                                            "the port has never had", i.evidence) if i.status is Status.BEHIND else i
                      for i in found]
            continue
        if (before.kernel_normalised, after.kernel_normalised) in replaced:
            # The replacement kernel's own parameter order is not the port's interface.
            found = [Delta("undecided", i.layer, f"{i.message}; {before.kernel_normalised} was replaced in place, "
                           "so this is for a reader", i.evidence, rule=i.rule) if i.status is Status.BEHIND else i
                     for i in found]
        items += found
    if not port.launches:
        # Same-module helpers are followed by the signature; a port that still
        # shows no launch launches through another module's helper: absence of
        # a launch here is not evidence of the old shape.
        items = [Delta("undecided", i.layer, f"{i.message.split(',')[0]}; the port launches no kernel itself "
                            "(a helper in another module may), so its launch cannot be compared", i.evidence,
                       rule=i.rule)
                 if i.status is Status.BEHIND else i for i in items]
    return items


def _never_held(index: TreeIndex | None, kernels: set[str]) -> set[str]:
    """Of ``kernels`` (normalised names), those the tree has never had: no in-tree definition whose name
    normalises to it and no anchor naming it. Without an index nothing is known, so none."""
    if index is None or not kernels:
        return set()
    named = {normalise_kernel_name(a.bare_symbol) for a in index.anchors}
    left = set(kernels) - named
    if left:
        left -= {normalise_kernel_name(name) for name in index.definitions_by_name}
    return left


def _unported_replacement(message: str, evidence: list[Evidence]) -> Delta:
    return Delta("undecided", "launch", f"{message}: the earlier commit that launched it is the interface change; "
                 "this swap is a change of the host's body around kernels the port does not run, for a reader",
                 evidence, rule="unported-launch-replaced")


def _not_carried_launch(message: str, evidence: list[Evidence]) -> Delta:
    return Delta("undecided", "launch", f"{message}: a change of the host's body around a kernel the port does not "
                 "carry, for a reader", evidence, rule="not-carried-launch")


def _new_kernel_grid_item(kernel: str, launch, mine, port: Signature, new: Signature, upstream: Evidence) -> Delta:
    """A kernel upstream now launches that the port already launches: the
    same only when the grids agree as canonical forms; otherwise the record
    says how they differ, with both sides' lines."""
    if mine is None or not launch.grid_form or not mine.grid_form:
        return Delta("sync", "launch", f"the port already launches {kernel}", [upstream])
    have = _renamed_form(mine.grid_form, _parameter_binding(port, new))
    if have == launch.grid_form:
        return Delta("sync", "launch", f"the port already launches {kernel}, with upstream's grid "
                     f"{launch.grid_text} modulo naming", [upstream])
    theirs = Evidence(kind=Kind.LAUNCH_GRID, message=f"upstream launches {kernel} with grid {launch.grid_text} "
                      f"(≡ {launch.grid_form})", side="upstream-new", path=new.path, line=launch.grid_line,
                      quote=launch.grid_quote, symbol=new.name, subject=launch.grid_text)
    ours = _tree_launch_evidence(port, mine, f"the port launches it with grid {mine.grid_text} (≡ {mine.grid_form})")
    ours = replace(ours, line=mine.grid_line, quote=mine.grid_quote)
    opaque = [o for o in mine.grid_opaque + launch.grid_opaque if o]
    how = f"goes through {', '.join(opaque[:2])}, which could not be resolved" if opaque else "differs"
    def shown(launched) -> str:  # the canonical form where it is short enough to read, else the source
        return launched.grid_form if len(launched.grid_form) <= 80 else launched.grid_text

    return Delta("undecided", "launch",
                 f"upstream now launches {kernel} with grid {shown(launch)} ({new.path}:{launch.grid_line}); the port "
                 f"launches it with grid {shown(mine)} ({port.path}:{mine.grid_line}), which {how}",
                 [upstream, theirs, ours])


def _replaced_in_place(before, after) -> tuple[str, ...] | None:
    """The arguments ``after`` adds when it launches another kernel from the
    same site as ``before`` with the same grid and every input ``before``
    passed; None when it is not such a replacement. Added arguments must be
    constants or computed from what ``before`` already passed: they carry
    nothing new from a caller, so such a swap changes no interface."""
    if before.kernel_normalised == after.kernel_normalised or not before.grid_form \
            or before.grid_form != after.grid_form or not set(before.texts) <= set(after.texts):
        return None
    added = tuple(t for t in after.texts if t not in before.texts)
    received = set().union(*(_names_read(t) or set() for t in before.texts))
    return added if all((names := _names_read(t)) is not None and names <= received for t in added) else None


# Callees an argument may use and still be computed from received values alone.
_PURE_ARGUMENT_CALLS = frozenset({"min", "max", "int", "bool", "abs", "len", "triton.cdiv", "triton.next_power_of_2"})


def _names_read(text: str) -> set[str] | None:
    """The names a Python argument expression reads (attribute reads by their
    object, known pure calls left out); None when it calls anything else or
    does not parse as a Python expression."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if ast.unparse(node.func) not in _PURE_ARGUMENT_CALLS:
                return None
        elif isinstance(node, ast.Name):
            names.add(node.id)
    return names - {"triton"} - _PURE_ARGUMENT_CALLS


def _replacement_message(was: str, now: str, added: tuple[str, ...]) -> str:
    extra = f"; what it adds ({', '.join(added[:3])}) is constant or computed from those" if added else ""
    return (f"upstream replaced {was} with {now} at the same launch site, with the same grid and every input "
            f"{was} received{extra}: no caller-visible change, a reader must judge the refactor")


def _pair_launches(old_launches, new_launches):
    """Old and new launch sites of the same kernel, most alike first.

    A commit that adds a second launch of a kernel (a new dispatch branch,
    such as an FP4 path) keeps the old launch paired with the new site whose
    arguments it shares most, not with whichever comes first in the file.
    """
    pairs = []
    unmatched_old = list(old_launches)
    unmatched_new = list(new_launches)
    candidates = sorted(
        ((len(set(o.texts) & set(n.texts)), i, j) for i, o in enumerate(old_launches)
         for j, n in enumerate(new_launches) if o.kernel_normalised == n.kernel_normalised),
        key=lambda c: (-c[0], c[1], c[2]),
    )
    for _, i, j in candidates:
        partner, launch = old_launches[i], new_launches[j]
        if partner in unmatched_old and launch in unmatched_new:
            pairs.append((partner, launch))
            unmatched_old.remove(partner)
            unmatched_new.remove(launch)
    if len(unmatched_old) == 1 and len(unmatched_new) == 1:
        pairs.append((unmatched_old[0], unmatched_new[0]))  # a renamed kernel, same launch site
    return pairs


def _port_launch(port: Signature, launched, before, after):
    if len(port.launches) == 1:
        return port.launches[0]
    for launch in port.launches:
        stands_for = launched.get(launch.kernel, set())
        if before.kernel_normalised in stands_for or after.kernel_normalised in stands_for:
            return launch
    return None


def _tree_launch_evidence(port: Signature, launch, message: str) -> Evidence:
    return Evidence(kind=Kind.TREE_LAUNCH, message=message, side="tree", path=port.path, line=launch.line,
                    quote=launch.quote, symbol=port.name)


def _geometry_items(old, new, port, before, after, mine, cross: bool, port_launch_count: int,
                    index: TreeIndex | None = None, scope=frozenset(), derivation=None,
                    respell: dict[str, str] | None = None) -> list[Delta]:
    items: list[Delta] = []
    if before.grid_form and after.grid_form:
        # Compared modulo naming: a commit that only renames the locals a grid
        # is computed from (or respells cdiv) leaves the launch as it was.
        grid_changed = before.grid_form != after.grid_form
    else:
        grid_changed = before.grid_text.replace(" ", "") != after.grid_text.replace(" ", "") \
            or before.grid_identifiers != after.grid_identifiers
    was_at = Location(Side.OLD, old.path, before.grid_line or before.line, quote=before.grid_quote or before.quote)
    now_at = Location(Side.NEW, new.path, after.grid_line or after.line, quote=after.grid_quote or after.quote)
    was_message, now_message = f"upstream grid was {before.grid_text}", f"upstream grid is now {after.grid_text}"
    through: tuple[str, ...] = ()
    changed = _binding_change(before.grid_bindings, after.grid_bindings, old.path, new.path) \
        if grid_changed and _same_text(was_at.quote, now_at.quote) else None
    if changed is not None:
        # The line that writes the grid reads the same on both sides: the
        # change is the binding it resolves through, and the launch is context.
        through, was_at, now_at = changed
        names = ", ".join(through)
        was_message += f", through {names} ({_quoted(was_at)}); launch at {old.path}:{before.line}"
        now_message += f", through {names} ({_quoted(now_at)}); launch at {new.path}:{after.line}"
    upstream = [
        # The record cites the launch (reports quote its geometry lines from
        # there); the delta's two locations are the lines that changed: the
        # ones that write the grid, or the binding it changed through.
        Evidence(kind=Kind.LAUNCH_GRID, message=was_message, side="upstream-old",
                 path=old.path, line=before.line, quote=before.quote, symbol=old.name, subject=before.grid_text,
                 before=was_at, through=through),
        Evidence(kind=Kind.LAUNCH_GRID, message=now_message, side="upstream-new",
                 path=new.path, line=after.line, quote=after.quote, symbol=new.name, subject=after.grid_text,
                 before=was_at, after=now_at, through=through),
    ]
    if grid_changed:
        if mine is None:
            items.append(Delta("undecided", "launch",
                                    f"upstream changed the grid of {after.kernel_normalised} and the port has "
                                    f"{port_launch_count} launches none of which maps to it", upstream))
        else:
            item = replace(_grid_item(before, after, mine, port, cross, upstream, new), geometry=True)
            derived = (lambda name: derivation(name, after.kernel)) if derivation else None
            tiles = _tile_choice(before, after, through, derived) if item.status is Status.BEHIND else None
            if tiles is not None:
                item = Delta("undecided", "launch", f"{item.message}; only the tile constant{'s' if len(tiles) > 1 else ''} "
                             f"{', '.join(tiles)} changed, which the kernel receives and the grid divides the same "
                             "inputs by: a tile choice of the wrapper, not a launch shape a caller sees",
                             item.evidence, geometry=True, rule="tile-choice")
            elif item.status is Status.BEHIND and _derived_geometry(old, new, before, after, "grid"):
                item = Delta("undecided", "launch", f"{item.message}; the grid reads the same inputs of the launcher "
                             "on the same axes, the rest from constants and the element type: geometry derived from "
                             "what the kernel already receives, not a launch shape a caller sees",
                             item.evidence, geometry=True, rule="derived-geometry")
            items.append(item)
    if before.grid_shape != after.grid_shape and before.grid_shape and after.grid_shape and mine is not None:
        tree = [_tree_launch_evidence(port, mine, f"the port's grid has {mine.grid_shape} axes")]
        if mine.grid_shape == after.grid_shape:
            items.append(Delta("sync", "launch", f"the port's grid already has {after.grid_shape} axes", upstream + tree))
        elif mine.grid_shape == before.grid_shape:
            items.append(Delta("behind", "launch",
                                    f"upstream grid went from {before.grid_shape} to {after.grid_shape} axes, the port's has "
                                    f"{before.grid_shape}", upstream + tree))
    for attribute in ("block", "num_warps", "num_stages"):
        was, now = getattr(before, attribute), getattr(after, attribute)
        have = getattr(mine, attribute) if mine is not None else None
        if attribute == "block" and (was is None or now is None) and before.block_form and after.block_form:
            # Threads per block through locals (``const int threads = 64``):
            # the canonical forms compare where a literal cannot be read.
            was, now = before.block_form, after.block_form
            have = (mine.block_form or None) if mine is not None else None
        if was == now or was is None or now is None or mine is None:
            continue
        if cross or have is None:
            continue  # CUDA threads and Triton warps do not compare
        was_at = Location(Side.OLD, old.path, before.line, quote=before.quote)
        now_at = Location(Side.NEW, new.path, after.line, quote=after.quote)
        through = ()
        changed = _binding_change(getattr(before, f"{attribute}_bindings"), getattr(after, f"{attribute}_bindings"),
                                  old.path, new.path) if _same_text(before.quote, after.quote) else None
        if changed is not None:  # threads per block (or warps, stages) changed in a local the launch line names
            through, was_at, now_at = changed
        tree = [Evidence(kind=Kind.LAUNCH_BLOCK, message=f"upstream {attribute} was {was}", side="upstream-old",
                         path=old.path, line=before.line, quote=before.quote, symbol=old.name, subject=attribute,
                         before=was_at if through else None, through=through),
                Evidence(kind=Kind.LAUNCH_BLOCK, message=f"upstream {attribute} is now {now}"
                         + (f", through {', '.join(through)}; launch at {new.path}:{after.line}" if through else ""),
                         side="upstream-new", path=new.path, line=after.line, quote=after.quote, symbol=new.name,
                         subject=attribute, before=was_at, after=now_at, through=through),
                _tree_launch_evidence(port, mine, f"the port's {attribute} is {have}")]
        if have == now:
            items.append(Delta("sync", "launch", f"the port's {attribute} is already {now}", tree))
        elif have == was and attribute == "block" and _derived_geometry(old, new, before, after, "block"):
            items.append(Delta("undecided", "launch", f"upstream {attribute} went {was} → {now}, the port's is still "
                               f"{was}; both read no input of the launcher (constants only): a tuning choice of the "
                               "launcher, not a launch shape a caller sees", tree, geometry=True,
                               rule="derived-geometry"))
        elif have == was:
            items.append(Delta("behind", "launch", f"upstream {attribute} went {was} → {now}, the port's is still {was}",
                                    tree, geometry=True))
    if mine is not None:
        launch = [Evidence(kind=Kind.LAUNCH_ARGUMENT, message=f"upstream's launch of {after.kernel_normalised}, whose "
                           "arguments changed",
                           side="upstream-new", path=new.path, line=after.line, quote=after.quote, symbol=new.name,
                           before=Location(Side.OLD, old.path, before.line, quote=before.quote),
                           after=Location(Side.NEW, new.path, after.line, quote=after.quote))]
        derived = (lambda name, positional=False: derivation(name, after.kernel, positional=positional)) \
            if derivation else None
        dropped = (lambda name, positional=False: derivation(name, before.kernel, old=True, positional=positional)) \
            if derivation else None
        items += _ruled(_argument_items(before, after, mine, port, cross, launch, index,
                                        scope | _kernel_scope(index, after.kernel_normalised), derived, respell,
                                        dropped),
                        "launch-arguments")
    return items


_INTEGER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def _tile_choice(before, after, through: tuple[str, ...], derived=None) -> tuple[str, ...] | None:
    """The local constants a paired launch's grid changed through when they
    are only tiles (``tile-choice``): each is an integer literal on both
    sides, or on the new side a choice among integer literals
    (``64 if d <= 64 else 128``) whose value the launch passes to the kernel
    by keyword and ``derived`` (the kernel parameter's derivation in
    upstream's new launcher) follows to shapes and constants alone; each is
    passed to the kernel on both sides, and the grid's canonical form is the
    same once integers (and such choices) are set aside (the same inputs,
    the same axes, resolved). None otherwise."""
    if not through or not before.grid_form or not after.grid_form or before.grid_opaque or after.grid_opaque:
        return None
    if before.grid_form.startswith("?") or after.grid_form.startswith("?") or before.grid_shape != after.grid_shape:
        return None
    if _constant_choices(before.grid_form) != _constant_choices(after.grid_form):
        return None
    values = {side: {name: text for name, _, _, text in bindings}
              for side, bindings in (("was", before.grid_bindings), ("now", after.grid_bindings))}
    quoted = {name: quotes for name, _, quotes, _ in after.grid_bindings}
    for name in through:
        if not re.fullmatch(r"\d+", values["was"].get(name) or ""):
            return None
        now = values["now"].get(name) or ""
        if not re.fullmatch(r"\d+", now) and not (_literal_choice(name, quoted.get(name, ()))
                                                  and _shape_chosen(after, name, derived)):
            return None
        if normalise_name(name) not in before.arguments or normalise_name(name) not in after.arguments:
            return None
    return through


_CHOICE = re.compile(r"\(\s*#\s+if\s+[^()]*?\s+else\s+#\s*\)")


def _constant_choices(form: str) -> str:
    """A canonical grid form with its integers, and conditional choices among them, set aside (``#``)."""
    form = _INTEGER.sub("#", form)
    while True:
        chosen = _CHOICE.sub("#", form)
        if chosen == form:
            return form
        form = chosen


def _literal_choice(name: str, quotes: tuple[str, ...]) -> bool:
    """Whether ``quotes`` (the quoted lines of the binding of ``name``) are one plain assignment of ``name``
    whose value is a Python conditional expression with every arm an integer literal (or such a conditional
    itself)."""
    try:
        statement = ast.parse("\n".join(q.strip() for q in quotes)).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    if len(statement) != 1 or not isinstance(statement[0], ast.Assign) or len(statement[0].targets) != 1 \
            or not isinstance(statement[0].targets[0], ast.Name) or statement[0].targets[0].id != name:
        return False
    node = statement[0].value

    def arm(value) -> bool:
        if isinstance(value, ast.IfExp):
            return arm(value.body) and arm(value.orelse)
        return isinstance(value, ast.Constant) and type(value.value) is int

    return isinstance(node, ast.IfExp) and arm(node)


def _shape_chosen(after, name: str, derived) -> bool:
    """Whether the launch ``after`` passes local ``name`` to the kernel by keyword and ``derived`` follows
    that argument, through the launcher's locals, to shapes and constants alone (no parameter's value, no
    input's dtype, no call but known pure helpers, nothing read from outside the launcher)."""
    if derived is None or after.bound is None:
        return False
    slots = [bound for slot, text, bound in zip(after.slots, after.texts, after.bound)
             if text == normalise_name(name) and not slot.startswith(("#", "*")) and bound != UNRESOLVED]
    if not slots:
        return False
    for slot in slots:
        derivation = derived(slot)
        if derivation is None or not derivation.derived or derivation.allocations:
            return False
        if any("dtype" in t or t.startswith("torch.") for t in derivation.terminals):
            return False  # a tile an input's element type selects stays with the launch rules
    return True


_IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z_]\w*")


def _axes(form: str) -> list[str] | None:
    """The axes of a canonical grid form ``(a, b,)``: its top-level comma-separated parts; None when the
    form is not such a tuple."""
    form = form.strip()
    if not (form.startswith("(") and form.endswith(")")):
        return None
    parts, depth, start = [], 0, 1
    for i, c in enumerate(form[1:-1], start=1):
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            parts.append(form[start:i])
            start = i + 1
    parts.append(form[start:-1])
    return [p.strip() for p in parts if p.strip()]


_ACCESS = re.compile(r"(?:\s*\.\s*\w+)*(?:\s*\(\s*[\w\s,]*\))?")
_SIZEOF = re.compile(r"\?*sizeof\s*\([^()]*\)")
_OPERATORS = frozenset({"cdiv"})
"""Calls a canonical grid form writes for arithmetic (``(a + b - 1) / b``): no value from outside the launcher."""


def _inputs_read(text: str, source: str, params: set[str], bindings: dict[str, str],
                 depth: int = 6) -> set[str] | None:
    """What ``text`` reads of the launcher's parameters, directly or through the local bindings it names: each
    parameter with the attributes it is read through (``x.shape`` and ``x.stride(0)`` are different reads).
    None when it reads anything else than parameters, literals, the element type's size (``sizeof(T)``) and
    constants: a call (a device query, ``std::min`` against one), or a name that is neither a parameter, a
    binding nor a constant spelled as one (``ATTN_THREADS``) in ``source``."""
    text = _SIZEOF.sub("1", text)
    found: set[str] = set()
    for match in _IDENTIFIER.finditer(text):
        name = normalise_name(match.group())
        if name in params:
            found.add(name + re.sub(r"\s+", "", _ACCESS.match(text, match.end()).group()))
            continue
        if text[match.end():].lstrip().startswith("(") and name not in _OPERATORS:
            return None
        if name in _OPERATORS:
            continue
        if name in bindings:
            if depth == 0:
                return None
            value = bindings.pop(name)
            inner = _inputs_read(value, source, params, bindings, depth - 1) if value is not None else set()
            if inner is None:
                return None
            found |= inner
            continue
        spelled = re.search(r"(?<![\w.])" + re.escape(match.group()) + r"(?!\w)", source, flags=re.I)
        if spelled is None or not spelled.group().isupper():
            return None
    return found


def _derived_geometry(old, new, before, after, attribute: str) -> bool:
    """``derived-geometry``: the launcher takes the same parameters on both sides, the grid counts blocks of the
    launch's own block on both sides, and the changed grid (each axis) or block reads the same of the
    parameters as before (with the attributes it reads them through), everything else in it constants
    (literals, macros, `constexpr` locals, the element type's size). A new input read, a new parameter, an
    axis that now reads another input (swapped axes), or a grid no longer tied to the block is not derived."""
    if not old.params or old.param_names != new.param_names:
        return False
    for launch in (before, after):
        # The grid counts blocks of the launch's own block (a C++ launch whose grid reads its block's form): what
        # one block covers is then the kernel's own choice (its threads, times what each thread handles), which
        # the kernel receives as its block size; a grid that divides by a constant the launch does not give the
        # kernel is not derived from it.
        if not _counts_own_block(launch):
            return False
    params = set(new.param_names)

    def reads(launch) -> list[set[str]] | None:
        if attribute == "block":
            form, bound = launch.block_form, launch.block_bindings
            parts = [form] if form else None
        else:
            form, bound = launch.grid_form, launch.grid_bindings
            parts = _axes(form) if form and not form.startswith("?") else None
            if parts is not None and launch.grid_shape is not None and len(parts) != launch.grid_shape \
                    and not _unit_axes_dropped(parts, launch.grid_text, launch.grid_shape):
                return None
        if parts is None:
            return None
        source = " ".join([launch.grid_text, launch.quote, *(q for _, _, quotes, _ in bound for q in quotes)])
        found = []
        for part in parts:
            read = _inputs_read(part, source, params, {normalise_name(n): text for n, _, _, text in bound})
            if read is None:
                return None
            found.append(read)
        return found

    was, now = reads(before), reads(after)
    return was is not None and now is not None and was == now


def _unit_axes_dropped(parts: list[str], text: str, shape: int) -> bool:
    """The canonical form's axes ``parts`` are the grid's as written (``text``, of ``shape`` axes) less trailing
    axes of extent 1 (``dim3 blocks(a, b, 1)`` read as ``(a, b)``)."""
    written = _axes(re.sub(r"\s+", "", text or ""))
    return written is not None and len(written) == shape and len(parts) < shape \
        and all(axis == "1" for axis in written[len(parts):])


def _counts_own_block(launch) -> bool:
    """The launch's grid reads its block's form; or, for a block of several axes (``dim3 threads(TX, TY, 1)``),
    each axis of the grid reads the block's extent on the same axis, wherever that extent is not 1 (and the
    block has no extent other than 1 on an axis the grid lacks): each grid axis counts blocks of that axis."""
    block, grid = launch.block_form, launch.grid_form
    if not block or not grid:
        return False

    def reads(part: str, form: str) -> bool:
        return re.search(r"(?<![\w.])" + re.escape(part) + r"(?!\w)", form) is not None

    if reads(block, grid):
        return True
    extents, axes = _axes(block), (_axes(grid) if not grid.startswith("?") else None)
    if not extents or len(extents) < 2 or not axes or len(axes) > len(extents):
        return False
    tied = [(extent, axis) for extent, axis in zip(extents, axes) if extent != "1"]
    return bool(tied) and all(reads(extent, axis) for extent, axis in tied) \
        and all(extent == "1" for extent in extents[len(axes):])


def _same_text(a: str | None, b: str | None) -> bool:
    return (a or "").replace(" ", "") == (b or "").replace(" ", "")


def _quoted(at: Location | None) -> str:
    return f"{at.path}:{at.line}: {at.quote}" if at is not None else "(no such binding on this side)"


def _binding_change(was, now, old_path: str, new_path: str):
    """The bindings (``Launch.grid_bindings``) whose value text differs
    between upstream's sides, and the old and new lines of the first of them
    that differ (None for a side the binding is absent from); None when no
    binding changed. Values compare as text without whitespace, so neither
    layout nor a comment on the line is a change."""
    before = {name: (line, quotes, text) for name, line, quotes, text in was}
    after = {name: (line, quotes, text) for name, line, quotes, text in now}
    names = [name for name in dict.fromkeys([*before, *after])
             if before.get(name, (0, (), None))[2] != after.get(name, (0, (), None))[2]]
    if not names:
        return None
    first = names[0]
    (old_line, old_quotes, _), (new_line, new_quotes, _) = before.get(first, (0, (), None)), after.get(first, (0, (), None))
    # The first line that differs, on each side, of a value that may span several.
    import difflib  # here: only a changed binding needs it, and most scans reach none

    i = j = 0
    opcode = next((o for o in difflib.SequenceMatcher(None, [q.replace(" ", "") for q in old_quotes],
                                                      [q.replace(" ", "") for q in new_quotes],
                                                      autojunk=False).get_opcodes() if o[0] != "equal"), None)
    if opcode is not None:
        i, j = min(opcode[1], len(old_quotes) - 1), min(opcode[3], len(new_quotes) - 1)
    was_at = Location(Side.OLD, old_path, old_line + i, quote=old_quotes[i]) if old_quotes else None
    now_at = Location(Side.NEW, new_path, new_line + j, quote=new_quotes[j]) if new_quotes else None
    return tuple(names), was_at, now_at


def _kernel_scope(index: TreeIndex | None, kernel: str) -> set[str]:
    """Parameters of the launched upstream kernel that in-tree ``not-carried
    ...::KERNEL[PARAM]`` declarations set aside: a launch passing them is
    passing a feature the port does not carry."""
    if index is None:
        return set()
    return {normalise_name(a.param) for a in index.anchors
            if a.kind == "not-carried" and a.param and normalise_name(a.bare_symbol) == kernel}


def _argument_items(before, after, mine, port, cross: bool, upstream, index, scope=frozenset(),
                    derivation=None, respell: dict[str, str] | None = None, dropped=None) -> list[Delta]:
    """A launch gaining or losing an argument, placed against the port's launch.

    When both upstream launches' kernels are known, an argument is the kernel
    parameter it binds to (positional by index, keyword by name), so
    ``valid_counts.stride(0)`` appended to a launch is ``valid_counts_stride``
    even though ``valid_counts`` was already passed. Otherwise arguments
    compare by their first identifier, keyword names and normalised text.
    Arguments a ``[PARAM]`` not-carried declaration sets aside (``scope``) are
    not compared: the port does not carry that feature on purpose.
    """
    tree = _tree_launch_evidence(port, mine, "the port's launch")
    if before.bound is not None and after.bound is not None:
        have = _port_binding(mine, index)
        if have is not None:
            return _bound_items(before, after, mine, port, cross, upstream, have, scope, derivation, respell,
                                dropped, _binds_own_kernel(mine, index, have))
    items: list[Delta] = []
    if not cross:
        added_keywords = set(_normalised_keywords(after)) - set(_normalised_keywords(before)) - scope
        # A keyword renamed with the kernel's parameter, passing the same value (``Dst=out`` -> ``dst_ptr=out``),
        # asks nothing of the port's launch, as where the kernel binds (``_bound_items``).
        removed_keywords = set(_normalised_keywords(before)) - set(_normalised_keywords(after)) - scope
        renamed = _renamed_arguments(before, after, removed_keywords, added_keywords, respell)
        if renamed:
            added_keywords -= set(renamed.values())
            pairs = ", ".join(f"{old} to {new}" for old, new in sorted(renamed.items()))
            items.append(Delta("sync", "launch", f"upstream renamed the keyword {pairs} of its launch of "
                               f"{after.kernel_normalised} and passes the same value; a name alone asks nothing "
                               "of the port's launch", upstream, rule="renamed-launch-keyword"))
        derived = _derived_arguments(sorted(added_keywords - set(_normalised_keywords(mine))), derivation)
        if derived:
            added_keywords -= set(derived)
            items.append(_derived_arguments_item(derived, after.kernel_normalised, mine, port, upstream))
        if added_keywords:
            present = added_keywords & set(_normalised_keywords(mine))
            status = "sync" if present == added_keywords else "behind" if not present else "undecided"
            items.append(Delta(status, "launch",
                                    f"upstream's launch now passes {', '.join(sorted(added_keywords))}"
                                    + ("" if status == "behind" else "; the port passes it"), upstream + [tree]))
    removed_arguments = set(before.arguments) - set(after.arguments) - scope
    added_arguments = set(after.arguments) - set(before.arguments) - scope
    have = set(mine.arguments) | set(_normalised_keywords(mine))
    moved = _moved_into_locals(before, after, removed_arguments, added_arguments - have)
    if moved:
        removed_arguments -= set(moved.values())
        added_arguments -= set(moved)
        items.append(Delta("undecided", "launch", "upstream's launch of " + after.kernel_normalised + " passes "
                           + ", ".join(f"{local}, a local holding the expression that read {name} before"
                                       for local, name in sorted(moved.items()))
                           + ": the same value, no argument for the port's launch to follow; the body change "
                           "around it is for a reader", upstream, rule="argument-through-local"))
    if removed_arguments or added_arguments:
        still = sorted(removed_arguments & have)
        templated = _now_template_arguments(still, after)
        if templated:
            still = [p for p in still if p not in templated]
            items.append(Delta("undecided", "launch",
                               f"upstream now gives {', '.join(templated)} to the kernel as a template argument (a "
                               "compile-time value the launcher picks) instead of at run time; the port still passes "
                               "it at run time, which a reader compares", upstream, rule="template-argument"))
        if still and not (added_arguments & have):
            items.append(Delta("behind", "launch",
                                    f"upstream stopped passing {', '.join(still)} to the kernel, the port still passes it",
                                    upstream + [_tree_launch_evidence(port, mine, f"the port still passes {still[0]}")]))
        elif added_arguments and added_arguments <= have and not still:
            items.append(Delta("sync", "launch", f"the port already passes {', '.join(sorted(added_arguments))}",
                                    upstream))
    elif not cross and not items:
        # Same identifiers, different arguments (``x.stride(0)`` added next to
        # ``x``): the port passing the same expression is in sync; not passing
        # it is undecided, since the port may spell it differently.
        def texts(launch):  # a keyword a [PARAM] declaration sets aside passes nothing the port carries
            return [text for slot, text in zip(launch.slots, launch.texts) if slot not in scope]

        added_texts = sorted(set(texts(after)) - set(texts(before)))
        if added_texts and len(texts(after)) != len(texts(before)):
            present = [t for t in added_texts if t in mine.texts]
            status = "sync" if len(present) == len(added_texts) else "undecided"
            items.append(Delta(status, "launch", f"upstream's launch now passes {', '.join(added_texts)}"
                                    + ("; the port passes it too" if status == "sync" else
                                       "; the port's launch does not pass the same expression"), upstream + [tree]))
    return items


def _moved_into_locals(before, after, removed, added) -> dict[str, str]:
    """``argument-through-local``: each argument upstream's launch now passes (among ``added``) that is a local
    whose one reaching value is, token for token, an argument the old launch passed, mapped to that old
    argument's first name (among ``removed``): the expression moved into a local, the launch passes the same
    value. Only Python launches record local values."""
    values = dict(after.argument_values)
    found: dict[str, str] = {}
    for local in sorted(added):
        text = values.get(local)
        first = re.match(r"[A-Za-z_]\w*", text) if text else None
        if first is not None and text in before.texts and text not in after.texts and first.group(0) in removed \
                and first.group(0) not in found.values():
            found[local] = first.group(0)
    return found


def _now_template_arguments(names, after) -> list[str]:
    """``template-argument``: the names among ``names`` (arguments upstream's launch stopped passing) that the
    launched kernel now takes as template arguments (``k<iterations><<<g, b>>>(...)``): the value still reaches
    the kernel, as a compile-time constant, so nothing the caller supplies is dropped."""
    kernel = after.kernel or ""
    if "<" not in kernel:
        return []
    arguments = {normalise_name(w) for w in _IDENTIFIER.findall(kernel[kernel.index("<"):])}
    return [n for n in names if n in arguments]


def _bound_items(before, after, mine, port, cross: bool, upstream, have: tuple[str, ...],
                 scope=frozenset(), derivation=None, respell: dict[str, str] | None = None,
                 dropped=None, own_kernel: bool = False) -> list[Delta]:
    """Argument delta by the kernel parameters the arguments bind to. ``dropped(name)``: how upstream's old
    launch computed the argument it passed for parameter ``name``; ``own_kernel``: the port's launch binds
    exactly its in-tree kernel's parameters (``_binds_own_kernel``)."""
    items: list[Delta] = []
    removed = [p for p in before.bound if p not in after.bound and p not in scope and p != UNRESOLVED]
    added = [p for p in after.bound if p not in before.bound and p not in scope and p != UNRESOLVED]
    kernel = after.kernel_normalised
    renamed = _renamed_arguments(before, after, removed, added, respell)
    if renamed:
        removed = [p for p in removed if p not in renamed]
        added = [p for p in added if p not in renamed.values()]
        pairs = ", ".join(f"{old} to {new}" for old, new in renamed.items())
        items.append(Delta("sync", "launch",
                                f"upstream renamed the parameter {pairs} of {kernel} and passes the same value; "
                                "a name alone asks nothing of the port's launch", upstream))
    still = [p for p in removed if p in have]
    # ``positional-derived-argument``: the port's launch binds its own kernel's parameters exactly, passing every
    # one upstream dropped and none it added, so the port's launch and its kernel are still one pair at
    # upstream's old shape; an argument passed by position is then followed like a keyword.
    # A parameter upstream's new launch may still fill through a splat of unknown length (its binding
    # unresolved past the splat) is not one upstream provably stopped passing: the premise reads only the
    # parameters it provably dropped.
    # A parameter upstream renamed in place (another it adds now binds at its position) is no parameter it
    # stopped passing: a port that names its kernel's parameters its own way cannot pass the old name.
    dropped_for_sure = [] if UNRESOLVED in after.bound else \
        [p for p in removed if not _replaced_at_its_position(before, after, p, added)]
    paired = own_kernel and not cross and bool(dropped_for_sure or added) \
        and all(p in have for p in dropped_for_sure) and not any(p in have for p in added)
    by_position = (lambda f: (lambda name: f(name, positional=True)) if f and paired else None)
    templated = _now_template_arguments(still, after)
    if templated:
        still = [p for p in still if p not in templated]
        items.append(Delta("undecided", "launch",
                           f"upstream now gives {', '.join(templated)} to {kernel} as a template argument (a "
                           "compile-time value the launcher picks) instead of at run time; the port still passes it "
                           "at run time, which a reader compares", upstream, rule="template-argument"))
    derived_before = _derived_arguments(still, dropped) if not cross else {}
    if derived_before:
        still = [p for p in still if p not in derived_before]
        items.append(_dropped_derived_item(derived_before, kernel, mine, port, upstream))
    # Only a parameter upstream renamed at its position (another it adds now binds there): a positional
    # argument upstream drops outright stays the launch's interface, as it always was.
    in_place = [p for p in still if _replaced_at_its_position(before, after, p, added)]
    positional_before = _derived_arguments(in_place, by_position(dropped)) if not cross else {}
    if positional_before:
        still = [p for p in still if p not in positional_before]
        items.append(_positional(_dropped_derived_item(positional_before, kernel, mine, port, upstream)))
    if still and UNRESOLVED in after.bound:
        # ``splat-unresolved-binding``: upstream's new launch binds through a splat of unknown length, so it may
        # still fill these parameters there: not proven dropped.
        splats = ", ".join(t for slot, t in zip(after.slots, after.texts) if slot in ("*", "**"))
        items.append(Delta("undecided", "launch",
                           f"upstream's launch of {kernel} no longer names {', '.join(still)} where it can be bound; "
                           f"it binds through {splats}, whose length could not be determined, so whether it still "
                           "passes them is unresolved (the port passes them)",
                           upstream + [_tree_launch_evidence(port, mine, f"the port still passes {still[0]}")],
                           rule="splat-unresolved-binding"))
    elif still:
        items.append(Delta("behind", "launch",
                                f"upstream stopped passing {', '.join(still)} to {kernel}, the port still passes it",
                                upstream + [_tree_launch_evidence(port, mine, f"the port still passes {still[0]}")]))
    elif removed and not derived_before and not positional_before:
        items.append(Delta("sync", "launch", f"the port does not pass {', '.join(removed)} either", upstream,
                           absent=tuple(removed)))
    present = [p for p in added if p in have]
    missing = [p for p in added if p not in have]
    unread = [p for p in missing if p in after.unread]
    if unread:
        # ``unread-kernel-parameter``: the kernel's body never reads what these fill.
        missing = [p for p in missing if p not in unread]
        items.append(Delta("undecided", "launch",
                           f"upstream's launch now passes {', '.join(unread)} to {kernel}, filling parameters the "
                           "kernel's body never reads (nor a @triton.heuristics lambda): no value the kernel "
                           "computes changes, only what an autotuner may key or prune on, so for a reader (at most "
                           "NEEDS_REVIEW)", upstream + [_tree_launch_evidence(port, mine, "the port's launch")],
                           rule="unread-kernel-parameter"))
    derived = _derived_arguments(missing, derivation)
    if derived:
        missing = [p for p in missing if p not in derived]
        items.append(_derived_arguments_item(derived, kernel, mine, port, upstream))
    positional = _derived_arguments(missing, by_position(derivation)) if not cross else {}
    if positional:
        missing = [p for p in missing if p not in positional]
        items.append(_positional(_derived_arguments_item(positional, kernel, mine, port, upstream)))
    if present:
        items.append(Delta("sync", "launch", f"the port's launch already passes {', '.join(present)}",
                                upstream + [_tree_launch_evidence(port, mine, f"the port passes {present[0]}")]))
    if missing and UNRESOLVED in have:
        # A splat of unknown length: which parameter each later argument
        # fills is unknown, so the port may well pass it.
        splats = ", ".join(t for slot, t in zip(mine.slots, mine.texts) if slot in ("*", "**"))
        items.append(Delta("undecided", "launch",
                                f"upstream's launch now passes {', '.join(missing)} to {kernel}; the port's launch "
                                f"binds through {splats}, whose length could not be determined, so whether it "
                                "passes them is unresolved",
                                upstream + [_tree_launch_evidence(port, mine, f"the port's launch binds through {splats}")]))
    elif missing:
        # Across languages the port may pass it under another name: not
        # evidence of the old shape.
        status = "undecided" if cross else "behind"
        items.append(Delta(status, "launch",
                                f"upstream's launch now passes {', '.join(missing)} to {kernel}, the port's does not",
                                upstream + [_tree_launch_evidence(port, mine, f"the port's launch lacks {missing[0]}")]))
    return items


def _positional(item: Delta) -> Delta:
    """``item``, a derived-argument delta over arguments passed by position, under rule
    ``positional-derived-argument`` (the port's launch still paired with its kernel at upstream's old shape)."""
    return replace(item, rule="positional-derived-argument", message=item.message.replace(
        "(at most NEEDS_REVIEW)", "(at most NEEDS_REVIEW): passed by position, but the port's launch binds exactly "
        "its own kernel's parameters, at upstream's old shape, so the port's launch and its kernel are behind "
        "together"))


def _derived_arguments(names, derivation) -> dict:
    """The added launch arguments upstream computes only from shapes, constants and values the kernel
    already receives (normalised parameter -> Derivation)."""
    found = {}
    for name in names if derivation else ():
        derived = derivation(name)
        if derived is not None and derived.derived:
            found[name] = derived
    return found


def _derived_arguments_item(derived: dict, kernel: str, mine, port, upstream) -> Delta:
    """Added launch arguments that are implementation detail: for a reader, with each derivation quoted."""
    how = "; ".join(f"{name} {_derivation_words(d)}" for name, d in derived.items())
    launch = upstream[0] if upstream else None
    records = [_derivation_evidence(d, name, "upstream's launch", launch and launch.path, launch and launch.symbol,
                                    launch and launch.line) for name, d in derived.items()]
    tree = _tree_launch_evidence(port, mine, "the port's launch, compared: "
                                 f"{', '.join(derived)} {'is' if len(derived) == 1 else 'are'} derived upstream, "
                                 "not an input its callers supply")
    return Delta("undecided", "launch",
                 f"upstream's launch now passes {', '.join(derived)} to {kernel}, computed only from shapes, "
                 f"constants and values the kernel already receives, {how}; an implementation detail for a "
                 "reader to judge (at most NEEDS_REVIEW)", upstream + records + [tree],
                 rule=derivation_rule(derived.values()))


def _dropped_derived_item(derived: dict, kernel: str, mine, port, upstream) -> Delta:
    """Launch arguments upstream stopped passing that its old launch computed only from shapes, constants and
    values the kernel receives (``derived-parameter``): the port still passing them is for a reader."""
    how = "; ".join(f"{name} {_derivation_words(d)}" for name, d in derived.items())
    launch = upstream[0] if upstream else None
    records = [replace(_derivation_evidence(d, name, "upstream's old launch", launch and launch.path,
                                            launch and launch.symbol, launch and launch.line), side="upstream-old")
               for name, d in derived.items()]
    tree = _tree_launch_evidence(port, mine, f"the port still passes {', '.join(derived)}, which upstream derived, "
                                 "not an input its callers supply")
    return Delta("undecided", "launch",
                 f"upstream stopped passing {', '.join(derived)} to {kernel}, which it computed only from shapes, "
                 f"constants and values the kernel already receives, {how}; the port still passes it: no caller "
                 "supplies it, so this is a body change of the wrapper and kernel pair for a reader (at most "
                 "NEEDS_REVIEW)", upstream + records + [tree], rule=derivation_rule(derived.values()))


def _renamed_arguments(before, after, removed, added, respell: dict[str, str] | None = None) -> dict[str, str]:
    """Kernel parameters upstream renamed at the launch: a keyword that went
    away and one that came, passed the same argument text (``SEQ_LEN=t`` →
    ``T=t``), the old text read through ``respell`` (the launcher's own
    consistent renaming of its locals, ``renamed-binding``: ``n=cols`` →
    ``n_cols=n_columns`` where ``cols`` became ``n_columns`` throughout);
    only pairs the text makes unique."""
    respell = respell or {}
    was = {slot: "".join(respell.get(part, part) for part in re.split(r"([A-Za-z_]\w*)", text))
           for slot, text in zip(before.slots, before.texts) if slot in removed}
    now = {slot: text for slot, text in zip(after.slots, after.texts) if slot in added}
    renamed = {}
    for old, text in was.items():
        same = [new for new, other in now.items() if other == text]
        if len(same) == 1 and list(was.values()).count(text) == 1:
            renamed[old] = same[0]
    return renamed


def _port_binding(launch, index) -> tuple[str, ...] | None:
    """The parameters the port's launch binds to: from its own file, else
    from the in-tree definition of the launched kernel."""
    if launch.bound is not None:
        return launch.bound
    if index is None:
        return None
    bare = bare_name(launch.kernel)
    for definition in index.definitions_by_name.get(bare, []):
        if definition.kind not in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL):
            continue
        signature = index.signature_of(definition)
        if signature is not None:
            params = [p.normalised for p in signature.params
                      if not p.name.startswith("*") and (signature.language == "python" or not p.constexpr)]
            return bind_arguments(launch.slots, params)
    return None


def _replaced_at_its_position(before, after, name: str, added) -> bool:
    """Whether upstream's old launch passed parameter ``name`` by position and its new launch passes, at that
    position, a parameter it adds (the kernel's parameter renamed in place, ``positional-derived-argument``)."""
    position = before.bound.index(name) if name in before.bound else None
    return position is not None and f"#{position}" in before.slots and f"#{position}" in after.slots \
        and position < len(after.bound) and after.bound[position] in added


def _binds_own_kernel(launch, index, have: tuple[str, ...]) -> bool:
    """Whether the port's Python launch binds exactly the parameters of the one in-tree Triton kernel of its
    name: every run-time parameter without a default, and nothing it lacks (``positional-derived-argument``)."""
    if index is None or UNRESOLVED in have or len(set(have)) != len(have):
        return False
    found = [d for d in index.definitions_by_name.get(bare_name(launch.kernel), []) if d.kind == KIND_TRITON_KERNEL]
    signature = index.signature_of(found[0]) if len(found) == 1 else None
    if signature is None or signature.language != "python" or any(p.name.startswith("*") for p in signature.params):
        return False
    params = {p.normalised for p in signature.params}
    # A compile-time parameter the launch does not pass is filled by the kernel's tuner or heuristics (a launch
    # leaving one unfilled would not run): only a run-time parameter must be bound by the launch itself.
    return set(have) <= params and all(p.normalised in have for p in signature.params
                                       if not p.has_default and not p.constexpr)


def _normalised_keywords(launch):
    return [normalise_name(k) for k in launch.keywords]


def _grid_item(before, after, mine, port, cross: bool, upstream, new=None) -> Delta:
    tree = [_tree_launch_evidence(port, mine, f"the port's grid is {mine.grid_text}")]
    if before.grid_form and after.grid_form and mine.grid_form:
        decided = _grid_form_item(before, after, mine, port, new, upstream + tree)
        if decided is not None:
            return decided
    if not cross and mine.grid_text.replace(" ", "") == after.grid_text.replace(" ", ""):
        return Delta("sync", "launch", f"the port's grid is already {after.grid_text}", upstream + tree)
    if not cross and mine.grid_text.replace(" ", "") == before.grid_text.replace(" ", ""):
        return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}, the port's is "
                          f"still {mine.grid_text}", upstream + tree)
    if before.grid_form and after.grid_form and mine.grid_form:
        binding = _parameter_binding(port, new)
        added = set(after.grid_leaves) - set(before.grid_leaves)
        removed = set(before.grid_leaves) - set(after.grid_leaves)
        have = {binding.get(leaf, leaf) for leaf in mine.grid_leaves}
        before_terms = set(before.grid_leaves)
    else:
        added = set(after.grid_identifiers) - set(before.grid_identifiers)
        removed = set(before.grid_identifiers) - set(after.grid_identifiers)
        have = set(mine.grid_identifiers)
        before_terms = set(before.grid_identifiers)
    if not added and not removed:
        return Delta("undecided", "launch",
                          f"upstream grid went {before.grid_text} → {after.grid_text} with the same identifiers, and the "
                          f"port's grid {mine.grid_text} cannot be matched to either", upstream + tree)
    if added <= have and not (removed & have):
        return Delta("sync", "launch", f"the port's grid already uses {', '.join(sorted(added)) or 'the new terms'}",
                          upstream + tree)
    if not (added & have) and removed <= have and have & before_terms:
        what = ", ".join(sorted(added)) if added else "the new terms"
        return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}; the port's grid "
                          f"{mine.grid_text} lacks {what}", upstream + tree)
    return Delta("undecided", "launch",
                      f"upstream grid went {before.grid_text} → {after.grid_text} and the port's grid {mine.grid_text} "
                      "shares terms with both", upstream + tree)


_TEST = re.compile(r"^(?P<left>\S+) (?P<op>==|!=|<=|>=|<|>) (?P<value>-?\d+)$")
_HOLDS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
          ">=": operator.ge}


def _excludes(asserted: str, condition: str) -> bool:
    """``excluded-path``: no integer satisfies both ``asserted`` and ``condition`` (``x.dim() > 1`` and
    ``x.dim() == 1``), two tests of the same parameter's attribute or method."""
    a, c = _TEST.match(asserted), _TEST.match(condition)
    if a is None or c is None or a["left"] != c["left"]:
        return False
    low = min(int(a["value"]), int(c["value"])) - 2
    high = max(int(a["value"]), int(c["value"])) + 2
    return not any(_HOLDS[a["op"]](v, int(a["value"])) and _HOLDS[c["op"]](v, int(c["value"]))
                   for v in range(low, high + 1))


def _excluded_paths(before, after, mine) -> tuple[str, str] | None:
    """``excluded-path``: (condition, assertion) when upstream's grid is the same expression before and after
    but for the old side's dependence on the path (a reassignment of one of its inputs in an ``if`` the
    commit removed), and every such ``if``'s condition is one no value satisfies together with a test the
    port's launching definition asserts before its launch; None otherwise."""
    if not before.grid_form.startswith("?") or after.grid_form.startswith("?") \
            or before.grid_form[1:] != after.grid_form or not before.path_conditions or not mine.asserted:
        return None
    found = []
    for condition in before.path_conditions:
        assertion = next((a for a in mine.asserted if _excludes(a, condition)), None)
        if assertion is None:
            return None
        found.append((condition, assertion))
    return ", ".join(c for c, _ in found), ", ".join(dict.fromkeys(a for _, a in found))


def _parameter_binding(port: Signature, upstream: Signature | None) -> dict[str, str]:
    """The port's parameter names mapped to upstream's at the same position,
    where the names differ: the port mirrors upstream's interface, so a
    parameter it calls ``cu`` where upstream says ``cu_seq_lens`` is the
    same input, not a different grid term."""
    if upstream is None or len(port.params) != len(upstream.params):
        return {}
    theirs = set(upstream.param_names)
    return {mine.normalised: other.normalised for mine, other in zip(port.params, upstream.params)
            if mine.normalised != other.normalised and mine.normalised not in theirs}


def _renamed_form(form: str, binding: dict[str, str]) -> str:
    if not binding:
        return form
    return re.sub(r"[A-Za-z_]\w*", lambda m: binding.get(m.group(0), m.group(0)), form)


def _grid_form_item(before, after, mine, port, new, evidence) -> Delta | None:
    """The grid compared as canonical expressions (``portq.language.expressions``):
    equal to upstream's new form is IN_SYNC, equal to its old form is behind,
    whatever the locals are called; a form the port computes through
    something unresolved cannot be placed. None: let the terms decide."""
    excluded = _excluded_paths(before, after, mine)
    if excluded:
        return Delta("sync", "launch", f"upstream's grid {after.grid_text} is its old one less the path on which "
                     f"{excluded[0]} reassigned an input of it, and the port asserts {excluded[1]} before its "
                     "launch, so it never takes that path", evidence, rule="excluded-path")
    binding = _parameter_binding(port, new)
    have = _renamed_form(mine.grid_form, binding)
    shown = f"{mine.grid_text} (≡ {mine.grid_form})" if mine.grid_form != mine.grid_text and not mine.grid_opaque \
        and len(mine.grid_form) <= 80 else mine.grid_text
    unknown = before.grid_form.startswith("?") or after.grid_form.startswith("?")  # which value reaches depends on the path
    if have == after.grid_form and not unknown:
        return Delta("sync", "launch", f"the port's grid {shown} is upstream's new grid {after.grid_text} modulo "
                          "naming", evidence)
    rewritten_opaque = bool(set(after.grid_opaque) - set(before.grid_opaque)) \
        and before.grid_text.replace(" ", "") != after.grid_text.replace(" ", "")
    if have == before.grid_form and not unknown and not rewritten_opaque:
        # a grid rewritten through something unresolved may count the same: not proven behind
        return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}, the port's "
                          f"grid {shown} is still the old one", evidence)
    if "oneof(" in have:  # a helper that returns different grids: the set, never one member's identifiers
        return Delta("undecided", "launch",
                     f"upstream grid went {before.grid_text} → {after.grid_text} (≡ {after.grid_form}); the port's grid "
                     f"{mine.grid_text} ({port.path}:{mine.grid_line}) is one of several forms, {have}, by path",
                     evidence)
    shared = _shared_unresolved(before, after) if not unknown else []
    if shared:
        old_form, new_form = _set_aside(before.grid_form, shared), _set_aside(after.grid_form, shared)
        aside = f"leaving aside {', '.join(shared[:2])}, unresolved but the same on both upstream sides"
        if old_form != new_form and _fits(new_form, have, mine.grid_opaque):
            return Delta("sync", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}; {aside}, the "
                         f"port's grid {shown} is upstream's new grid modulo naming", evidence)
        if old_form != new_form and _fits(old_form, have, mine.grid_opaque):
            return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text} (≡ "
                         f"{before.grid_form} → {after.grid_form}); {aside}, the port's grid {shown} is still the old one",
                         evidence)
    opaque = [o for o in mine.grid_opaque + after.grid_opaque + (before.grid_opaque if unknown else ()) if o]
    if opaque:
        unresolved = Evidence(kind=Kind.UNRESOLVED, side="tree" if mine.grid_opaque else "upstream-new",
                              path=port.path if mine.grid_opaque else new.path if new else None,
                              line=mine.grid_line if mine.grid_opaque else after.grid_line,
                              quote=mine.grid_quote if mine.grid_opaque else after.grid_quote,
                              message=f"the grid goes through {', '.join(opaque[:3])}, which could not be resolved",
                              subject=", ".join(opaque[:3]))
        return Delta("undecided", "launch",
                          f"upstream grid went {before.grid_text} → {after.grid_text}; the port's grid {shown} goes through "
                          f"{', '.join(opaque[:2])}, which could not be resolved, so it cannot be compared",
                          evidence + [unresolved],
                          rule="opaque-new-grid" if have == before.grid_form and not unknown and rewritten_opaque
                          else "")
    return None


_HOLE = "\x00"


def _shared_unresolved(before, after) -> list[str]:
    """The unresolved sub-expressions of upstream's grid (as its canonical
    form spells them) that are the same on both sides: what changed lies
    elsewhere, in the resolved part, where it can be compared. Empty when
    either side has none, or when what could not be resolved changed too."""
    if not before.grid_opaque or set(before.grid_opaque) != set(after.grid_opaque):
        return []
    units: list[str] = []
    for opaque in dict.fromkeys(before.grid_opaque):
        unit_before, unit_after = _unit_in(before.grid_form, opaque), _unit_in(after.grid_form, opaque)
        if unit_before is None or unit_before != unit_after \
                or before.grid_form.count(unit_before) != after.grid_form.count(unit_after):
            return []
        units.append(unit_before)
    return units


def _unit_in(form: str, opaque: str) -> str | None:
    """The text of an unresolved call or leaf inside a canonical form: its
    name with the argument list that follows it."""
    name = opaque[:-len("(...)")] if opaque.endswith("(...)") else opaque
    start = form.find(name)
    if not name or start < 0:
        return None
    end = start + len(name)
    if end < len(form) and form[end] == "(":
        depth = 0
        for position in range(end, len(form)):
            depth += {"(": 1, ")": -1}.get(form[position], 0)
            if depth == 0:
                return form[start:position + 1]
        return None
    return form[start:end]


def _set_aside(form: str, units: list[str]) -> str:
    for unit in sorted(units, key=len, reverse=True):
        form = form.replace(unit, _HOLE)
    return form


def _fits(template: str, form: str, port_opaque) -> bool:
    """``form`` is ``template`` with every hole filled by one and the same
    operand (balanced, one argument): the port's own value where upstream's
    could not be resolved. What the port could not resolve must sit in it."""
    pieces = template.split(_HOLE)
    pattern = re.escape(pieces[0]) + "".join(("(.+?)" if i == 0 else r"\1") + re.escape(piece)
                                             for i, piece in enumerate(pieces[1:]))
    match = re.fullmatch(pattern, form, flags=re.DOTALL)
    if match is None or len(pieces) < 2:
        return False
    filling = match.group(1)
    depth = 0
    for character in filling:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(character, 0)
        if depth < 0 or (depth == 0 and character == ","):
            return False
    names = [o[:-len("(...)")] if o.endswith("(...)") else o for o in port_opaque if o]
    return depth == 0 and all(name in filling for name in names)


# --- program ids against a port --------------------------------------------------


def _program_id_items(old: Signature, new: Signature, port: Signature, set_aside=frozenset()) -> list[Delta]:
    """Program-id decomposition, num_programs and early exits. What upstream
    does inside a helper the tree declares not carried (``set_aside``: an
    MXFP4 implementation the kernel dispatches to) is not the port's concern."""
    items: list[Delta] = []

    def carried(decomposition) -> bool:
        return not (set(decomposition.via.split(" > ")) & set_aside) if decomposition.via else True

    before = {(d.axis, d.operator, d.operand) for d in old.decomposition if carried(d)}
    after = {(d.axis, d.operator, d.operand) for d in new.decomposition if carried(d)}
    have = {(d.axis, d.operator, d.operand) for d in port.decomposition}
    if before != after:
        evidence = [Evidence(kind=Kind.PROGRAM_ID, message=f"upstream decomposes program_id({d.axis}) {d.operator} {d.operand}",
                             side="upstream-new", path=new.path, line=d.line, quote=d.quote, symbol=new.name)
                    for d in new.decomposition if carried(d) and (d.axis, d.operator, d.operand) not in before][:2]
        evidence += [Evidence(kind=Kind.PROGRAM_ID, message=f"the port decomposes program_id({d.axis}) {d.operator} {d.operand}",
                              side="tree", path=port.path, line=d.line, quote=d.quote, symbol=port.name)
                     for d in port.decomposition][:2]
        added, removed = after - before, before - after
        if have == after or (added and added <= have and not (removed & have)):
            items.append(Delta("sync", "launch", "the port already decomposes the program id the new way", evidence))
        elif not have and not before:
            # ``unseen-decomposition``: neither the old kernel nor the port was seen decomposing the id
            items.append(Delta("undecided", "launch",
                               "upstream now packs work into program_id (" +
                               ", ".join(f"{o} {x}" for _, o, x in sorted(added)) + ") where neither its old "
                               "kernel nor the port's was seen decomposing it: nothing shows the port must "
                               "change, so for a reader (at most NEEDS_REVIEW)", evidence,
                               rule="unseen-decomposition"))
        elif have == before or (not (added & have) and removed <= have and have & before):
            items.append(Delta("behind", "launch",
                                    "upstream changed how the work is packed into program_id (" +
                                    ", ".join(f"{o} {x}" for _, o, x in sorted(added)) + "), the port still decomposes it the old way",
                                    evidence))
        else:
            items.append(Delta("undecided", "launch",
                                    "upstream changed the program-id decomposition and the port's matches neither side",
                                    evidence))
    for attribute, label in (("num_programs_axes", "num_programs"), ("program_id_axes", "program_id axes")):
        was, now, mine = set(getattr(old, attribute)), set(getattr(new, attribute)), set(getattr(port, attribute))
        if was == now or old.language != new.language:
            continue
        if mine == now:
            items.append(Delta("sync", "launch", f"the port's {label} already match", []))
        elif mine == was and attribute == "num_programs_axes" and was < now:
            # reading the grid's size packs no work into the id: what the kernel does with it is its body's change
            items.append(Delta("undecided", "launch", f"upstream now reads num_programs {sorted(now - was)}, the port "
                               "does not: what the kernel does with the grid's size is for a reader", [],
                               rule="num-programs-read"))
        elif mine == was:
            items.append(Delta("behind", "launch", f"upstream {label} went {sorted(was)} → {sorted(now)}, the port's are "
                                    f"{sorted(mine)}", []))
    guards_added = set(new.early_exit_guards) - set(old.early_exit_guards)
    if guards_added and new.is_kernel:
        exit_line = new.early_exits[-1] if new.early_exits else None
        line_evidence = [Evidence(kind=Kind.EARLY_EXIT, message=f"upstream kernel now returns early on {', '.join(sorted(guards_added))}",
                                  side="upstream-new", path=new.path, line=exit_line.line if exit_line else new.start_line,
                                  quote=exit_line.quote if exit_line else None, symbol=new.name)]
        if guards_added & set(port.early_exit_guards):
            items.append(Delta("sync", "launch", "the port has the same early-exit guard", line_evidence))
        elif not before ^ after:
            items.append(Delta("undecided", "launch", f"upstream added an early exit on {', '.join(sorted(guards_added))}",
                                    line_evidence))
    return items


# --- launch constants chosen by a platform probe ------------------------------------

_PROBE_CALLS = frozenset({"get_device_name", "get_device_capability", "get_device_properties", "get_current_target",
                          "get_arch", "is_available", "device_count"})
"""The last name of a call that reads the device the process runs on (``torch.cuda.get_device_name(0)``,
``torch.cuda.get_device_capability()``, ``triton.runtime.driver.active.get_current_target()``)."""

_PROBE_ATTRIBUTES = frozenset({"torch.version.hip", "torch.version.cuda"})
"""Attributes that say which platform's build of torch runs."""

_PURE_BUILTINS = frozenset({"int", "float", "str", "bool", "len", "any", "all", "min", "max", "tuple"})
"""Builtins a probe's value may pass through: they compute from their arguments only."""


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _any_probe(values) -> bool | None:
    """Whether any of ``values`` (read in order) reads a probe; None as soon as one is unknown."""
    found = False
    for value in values:
        if value is None:
            return None
        found = found or value
    return found


def _probe_value(node: ast.AST, flags: dict[str, str], imported: set[str]) -> bool | None:
    """True when ``node`` computes only from the platform the process runs on (probe calls and attributes,
    ``flags``: module-level names bound from them, literals, pure builtins, methods of a probed value) and
    reads at least one probe; False when it computes only from literals; None when it reads anything else
    (a parameter, a local, the environment, any other call)."""
    def each(children) -> bool | None:
        return _any_probe(_probe_value(child, flags, imported) for child in children)

    if isinstance(node, ast.Constant):
        return False
    if isinstance(node, ast.Name):
        return True if node.id in flags else None
    if isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        if dotted in _PROBE_ATTRIBUTES and dotted.split(".")[0] in imported:
            return True
        return True if _probe_value(node.value, flags, imported) else None  # a field of a probed value
    if isinstance(node, ast.Call):
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        dotted = _dotted(node.func)
        if dotted is not None and dotted.split(".")[-1] in _PROBE_CALLS and dotted.split(".")[0] in imported \
                and "." in dotted:
            return None if each(arguments) is None else True
        if isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS and node.func.id not in imported \
                and node.func.id not in flags:
            return each(arguments)
        if isinstance(node.func, ast.Attribute) and _probe_value(node.func.value, flags, imported):
            return None if each(arguments) is None else True  # a method of a probed value: name.lower()
        return None
    if isinstance(node, ast.Subscript):
        return each([node.value, node.slice])
    if isinstance(node, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp, ast.Tuple, ast.List)):
        return each(ast.iter_child_nodes(node))
    if isinstance(node, (ast.cmpop, ast.boolop, ast.unaryop, ast.operator, ast.expr_context)):
        return False
    return None


def platform_flags(source: bytes) -> dict[str, str]:
    """Module-level name -> the text of its binding, of each name bound exactly once at module level (and
    never declared ``global`` in a function, so no setter rebinds it) from a platform probe: ``SMALL_PART =
    'Tesla' in torch.cuda.get_device_name(0)``, ``CAPABILITY = torch.cuda.get_device_capability()``,
    ``PRE_AMPERE = CAPABILITY[0] < 8``. Empty where the source does not parse."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    imported: set[str] = set()
    bound: dict[str, int] = {}
    rebound = {name for node in ast.walk(module) if isinstance(node, ast.Global) for name in node.names}
    for node in ast.walk(module):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
    text = source.decode("utf-8", errors="replace")
    flags: dict[str, str] = {}

    def targets(statement) -> list[str]:
        names: list[str] = []
        for target in getattr(statement, "targets", None) or [getattr(statement, "target", None)]:
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)] if target is not None else []
        return names

    top = [s for s in module.body]
    for statement in top:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[statement.name] = bound.get(statement.name, 0) + 2
        for name in targets(statement) if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign,
                                                                     ast.For, ast.With)) else ():
            bound[name] = bound.get(name, 0) + (1 if isinstance(statement, ast.Assign) else 2)
    for statement in top:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
                or not isinstance(statement.targets[0], ast.Name):
            continue
        name = statement.targets[0].id
        if bound.get(name) != 1 or name in rebound or name in imported:
            continue
        if _probe_value(statement.value, flags, imported):
            flags[name] = ast.get_source_segment(text, statement) or name
    return flags


def _binding_value(quotes: tuple[str, ...], name: str) -> ast.AST | None:
    """The value a local binding's quoted lines assign to ``name``, parsed; None where they do not parse
    alone as one plain assignment of it."""
    import textwrap

    try:
        statement = ast.parse(textwrap.dedent("\n".join(quotes))).body
    except (SyntaxError, ValueError):
        return None
    if len(statement) != 1 or not isinstance(statement[0], ast.Assign) or len(statement[0].targets) != 1 \
            or not isinstance(statement[0].targets[0], ast.Name) or statement[0].targets[0].id != name:
        return None
    return statement[0].value


def _bindings_of(signature: Signature, name: str) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for launch in signature.launches:
        for attribute in ("grid_bindings", "block_bindings", "num_warps_bindings", "num_stages_bindings"):
            found |= {quotes for bound, _, quotes, _ in getattr(launch, attribute) if bound == name}
    return found


def _probe_choice(old: Signature, new: Signature, name: str, flags: dict[str, str], imported: set[str]):
    """``(test, kept)`` when ``name`` was one value and is now ``A if TEST else B`` with one of A and B the
    old value and TEST a platform probe (``_probe_value``); else None."""
    was, now = _bindings_of(old, name), _bindings_of(new, name)
    if len(was) != 1 or len(now) != 1:
        return None
    before, after = _binding_value(next(iter(was)), name), _binding_value(next(iter(now)), name)
    if before is None or not isinstance(after, ast.IfExp):
        return None
    old_form = ast.dump(before)
    if old_form not in (ast.dump(after.body), ast.dump(after.orelse)) or ast.dump(after.body) == ast.dump(after.orelse):
        return None
    if not _probe_value(after.test, flags, imported):
        return None
    return ast.unparse(after.test), ast.unparse(before)


def platform_chosen_launches(items: list[Delta], old: Signature, new: Signature, new_source: bytes | None) -> list[Delta]:
    """``items`` with each launch-geometry delta that leaves the port behind only through locals now chosen
    by a platform probe (``platform-chosen-launch``) made a reader's: the old value is kept on every other
    platform and no caller supplies or selects the new one."""
    if not new_source or new.language != "python":
        return items
    chosen = [i for i in items if i.status is Status.BEHIND and i.rule == "launch-geometry"]
    if not chosen:
        return items
    flags = platform_flags(new_source)
    if not flags:
        return items
    try:
        module = ast.parse(new_source)
    except (SyntaxError, ValueError):
        return items
    imported = {(a.asname or a.name).split(".")[0] for node in ast.walk(module)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    result: list[Delta] = []
    for item in items:
        if item not in chosen:
            result.append(item)
            continue
        # The probe flags themselves resolve into the launch's bindings: they are the probe, not the choice.
        through = tuple(n for n in next((e.through for e in item.evidence if e.through), ()) if n not in flags)
        choices = [_probe_choice(old, new, name, flags, imported) for name in through]
        if not through or any(c is None for c in choices):
            result.append(item)
            continue
        read = sorted({flag for flag in flags for test, _ in choices if re.search(rf"\b{re.escape(flag)}\b", test)})
        probes = "; ".join(f"`{flags[flag]}`" for flag in read) or "a probe of the device"
        said = ", ".join(f"{name} now `{test}`-dependent, `{kept}` otherwise" for name, (test, kept)
                         in zip(through, choices))
        result.append(Delta("undecided", item.layer,
                            f"upstream's launch geometry changed only where a platform probe says so ({said}; "
                            f"bound at import: {probes}): a launch heuristic of the wrapper that no caller supplies "
                            "or selects, for a reader rather than a gap", item.evidence, geometry=item.geometry,
                            rule="platform-chosen-launch"))
    return result


# --- a second launch taken only where a platform probe says so ------------------------

_AVAILABILITY = re.compile(r"^is_\w*available$")
"""A zero-argument query whether a device or its runtime is present (``is_npu_available()``)."""

_CACHING_DECORATORS = frozenset({"lru_cache", "cache", "functools.lru_cache", "functools.cache"})
"""Decorators that only remember a function's value: what it computes is its body's."""

_MAX_FOLLOWED = 16
"""How many function bodies one probe test may follow, through calls and imports, before it is unread."""


class _ModuleProbes:
    """One upstream module read for platform probes: its functions, the names it imports and from where
    (absolute, relative or aliased, read at the commit through ``read``), its probe flags and its constants
    (names bound once at module level to literals only)."""

    def __init__(self, path: str, source: bytes, read, seen: dict):
        self.path, self.read, self.seen = path, read, seen
        try:
            self.tree = ast.parse(source)
        except (SyntaxError, ValueError):
            self.tree = None
        body = self.tree.body if self.tree is not None else []
        self.functions = {n.name: n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.flags = platform_flags(source) if self.tree is not None else {}
        self.imported: dict[str, tuple[str, str | None]] = {}  # local name -> (module spec, name in it; None: the module)
        for node in body:
            if isinstance(node, ast.ImportFrom):
                spec = "." * node.level + (node.module or "")
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = (spec, alias.name)
                    self.imported.setdefault("\0" + (alias.asname or alias.name),
                                             (spec + ("" if spec.endswith(".") else ".") + alias.name, None))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imported[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname else
                                                                               alias.name.split(".")[0], None)
        rebound = {n for node in ast.walk(self.tree) if isinstance(node, ast.Global) for n in node.names} \
            if self.tree is not None else set()
        counts: dict[str, int] = {}
        for node in body:
            for target in getattr(node, "targets", None) or [getattr(node, "target", None)]:
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)) if target is not None else ():
                    counts[name] = counts.get(name, 0) + 1
        self.constants = {node.targets[0].id for node in body if isinstance(node, ast.Assign)
                          and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                          and counts.get(node.targets[0].id) == 1 and node.targets[0].id not in rebound
                          and _literal(node.value)}

    def module(self, spec: str) -> "_ModuleProbes | None":
        """The upstream module ``spec`` names from this one, read at the commit; None where it is not there."""
        stem = _module_stem(spec, self.path)
        if stem is None:
            return None
        for candidate in (stem + ".py", stem + "/__init__.py"):
            if candidate not in self.seen:
                source = self.read(candidate)
                self.seen[candidate] = _ModuleProbes(candidate, source, self.read, self.seen) if source else None
            if self.seen[candidate] is not None:
                return self.seen[candidate]
        return None

    def function(self, name: str, attribute: str | None = None):
        """``(module, definition)`` of the function a call names here (``f``, an imported ``f``, ``mod.f``)."""
        if attribute is None and name in self.functions:
            return self, self.functions[name]
        spec, original = self.imported.get(name, (None, None))
        if spec is None:
            return None
        if attribute is None and original is not None:
            other = self.module(spec)
            found = other.function(original) if other is not None and original in other.functions else None
            if found is None and other is not None and original in other.imported:
                found = other.function(original)
            return found
        if attribute is not None:
            other = self.module(spec if original is None else self.imported.get("\0" + name, (spec, None))[0])
            return other.function(attribute) if other is not None and attribute in other.functions else None
        return None


def _literal(node: ast.AST) -> bool:
    """True when ``node`` is built of literals only (numbers, strings, tuples, lists, sets, dicts)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    return False


class _ProbeReading:
    """Whether an expression computes only from the platform the process runs on (``True``), only from
    literals (``False``), or from anything else (``None``: a parameter of the wrapper, the environment, a
    name a setter rebinds, a call it cannot follow). Function calls are followed into their bodies, in this
    module or through its imports, each parameter bound to what the call passes."""

    def __init__(self):
        self.followed = 0
        self.known: dict[tuple[str, str, bool], bool | None] = {}

    def value(self, node: ast.AST, module: _ModuleProbes, local: dict[str, bool]) -> bool | None:
        def each(children) -> bool | None:
            return _any_probe(self.value(child, module, local) for child in children)

        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            if node.id in local:
                return local[node.id]
            if node.id in module.flags:
                return True
            return False if node.id in module.constants else None
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted in _PROBE_ATTRIBUTES and dotted.split(".")[0] in module.imported:
                return True
            base = self.value(node.value, module, local)
            return None if base is None else base
        if isinstance(node, ast.Call):
            return self._call(node, module, local, each)
        if isinstance(node, ast.Subscript):
            return each([node.value, node.slice])
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            inner = dict(local)
            for generator in node.generators:
                source = self.value(generator.iter, module, inner)
                if source is None:
                    return None
                for name in (n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)):
                    inner[name] = source
                if any(self.value(test, module, inner) is None for test in generator.ifs):
                    return None
            return self.value(node.elt, module, inner)
        if isinstance(node, ast.JoinedStr):
            return each(node.values)
        if isinstance(node, ast.FormattedValue):
            return self.value(node.value, module, local)
        if isinstance(node, ast.Dict):
            return each([*(k for k in node.keys if k is not None), *node.values]) \
                if all(k is not None for k in node.keys) else None
        if isinstance(node, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp, ast.Tuple, ast.List, ast.Set)):
            return each(ast.iter_child_nodes(node))
        if isinstance(node, (ast.cmpop, ast.boolop, ast.unaryop, ast.operator, ast.expr_context)):
            return False
        return None

    def _call(self, node: ast.Call, module: _ModuleProbes, local: dict[str, bool], each) -> bool | None:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        arguments = [*node.args, *(k.value for k in node.keywords)]
        given = each(arguments)
        if given is None:
            return None
        dotted = _dotted(node.func)
        last = dotted.split(".")[-1] if dotted is not None else None
        if dotted is not None and "." in dotted and last in _PROBE_CALLS and dotted.split(".")[0] in module.imported:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS | {"getattr"} \
                and node.func.id not in module.imported and node.func.id not in module.functions:
            return given
        target = None
        if isinstance(node.func, ast.Name) and node.func.id not in local:
            target = module.function(node.func.id)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in module.imported:
            target = module.function(node.func.value.id, node.func.attr)
        if target is not None:
            return self._function(target[0], target[1], given)
        if last is not None and _AVAILABILITY.match(last) and not arguments \
                and (dotted.split(".")[0] in module.imported or dotted in module.imported):
            return True  # an availability query of a runtime outside the upstream (not followed into it)
        if isinstance(node.func, ast.Attribute):
            base = self.value(node.func.value, module, local)  # a method of a probed or literal value
            return None if base is None else (base or given)
        return None

    def _function(self, module: _ModuleProbes, definition, given: bool) -> bool | None:
        key = (module.path, definition.name, given)
        if key not in self.known:
            self.known[key] = None  # a call back into a function being read is not followed
            self.known[key] = self._body(module, definition, given)
        return self.known[key]

    def _body(self, module: _ModuleProbes, definition, given: bool) -> bool | None:
        """What a called function's value computes from: its parameters are what the call passes (each
        already read as probe or literal) or their literal defaults; its body may assign locals, branch,
        try, import and return, each read the same way."""
        self.followed += 1
        if self.followed > _MAX_FOLLOWED:
            return None
        for decorator in definition.decorator_list:
            called = decorator.func if isinstance(decorator, ast.Call) else decorator
            if _dotted(called) not in _CACHING_DECORATORS:
                return None
        arguments = definition.args
        if arguments.vararg or arguments.kwarg:
            return None
        if any(not _literal(d) for d in [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]):
            return None
        local = {a.arg: given for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
        returns: list[bool] = []
        if self._block(definition.body, module, local, returns) is None or not returns:
            return None
        return any(returns)

    def _block(self, statements, module: _ModuleProbes, local: dict[str, bool], returns: list[bool]) -> bool | None:
        for statement in statements:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring
            if isinstance(statement, ast.Pass):
                continue
            if isinstance(statement, ast.Return):
                got = self.value(statement.value, module, local) if statement.value is not None else False
                if got is None:
                    return None
                returns.append(got)
            elif isinstance(statement, ast.Raise):
                continue
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                got = self.value(statement.value, module, local)
                names = [n for n in ast.walk(statement.targets[0])]
                if got is None or not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store)) for n in names):
                    return None
                for name in (n.id for n in names if isinstance(n, ast.Name)):
                    local[name] = got
            elif isinstance(statement, ast.If):
                if self.value(statement.test, module, local) is None:
                    return None
                if self._block(statement.body, module, local, returns) is None \
                        or self._block(statement.orelse, module, local, returns) is None:
                    return None
            elif isinstance(statement, ast.Try):
                for block in (statement.body, *(h.body for h in statement.handlers), statement.orelse,
                              statement.finalbody):
                    if self._block(block, module, local, returns) is None:
                        return None
            elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
                for alias in statement.names:  # a runtime outside the upstream, queried for availability only
                    local.pop(alias.asname or alias.name, None)
                    module = _with_import(module, alias.asname or alias.name, statement.module or "")
            else:
                return None
        return True


def _with_import(module: _ModuleProbes, name: str, spec: str) -> _ModuleProbes:
    """``module`` with one more imported name (an import inside a function body)."""
    widened = object.__new__(_ModuleProbes)
    widened.__dict__.update(module.__dict__)
    widened.imported = {**module.imported, name: (spec, name)}
    return widened


def _probe_gate(test: ast.AST, module: _ModuleProbes, reading: _ProbeReading) -> str | None:
    """The part of an ``if`` test that makes it true only on a probed platform: the test itself when it
    computes from the platform only, one operand of an ``and`` that does, or the same inside a function
    whose body is ``return TEST`` (followed in this module or through an import). None otherwise: an
    ``or`` with any other operand, or a test a caller's value decides alone."""
    if reading.value(test, module, {}):
        return ast.unparse(test)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((found for operand in test.values if (found := _probe_gate(operand, module, reading))), None)
    if isinstance(test, ast.Call) and not test.keywords and isinstance(test.func, (ast.Name, ast.Attribute)):
        target = module.function(test.func.id) if isinstance(test.func, ast.Name) else (
            module.function(test.func.value.id, test.func.attr) if isinstance(test.func.value, ast.Name) else None)
        if target is None:
            return None
        other, definition = target
        body = [s for s in definition.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if definition.decorator_list or len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return None
        found = _probe_gate(body[0].value, other, reading)
        return f"{found} (in {definition.name})" if found else None
    return None


def _branch_of(module: ast.Module, wrapper: str, line: int) -> ast.If | None:
    """The innermost ``if`` of ``wrapper`` whose body (not its ``else``) holds ``line`` and ends by leaving
    the wrapper (``return``/``raise``), so the statements after it are the path every other case takes."""
    definition = next((n for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and n.name == wrapper and n.lineno <= line <= (n.end_lineno or n.lineno)), None)
    if definition is None:
        return None
    found = None
    for node in ast.walk(definition):
        if isinstance(node, ast.If) and node.body and node.body[0].lineno <= line <= (node.body[-1].end_lineno or 0):
            if found is None or node.lineno > found.lineno:
                found = node
    if found is None or not isinstance(found.body[-1], (ast.Return, ast.Raise)):
        return None
    return found


def platform_chosen_kernels(items: list[Delta], old: Signature, new: Signature, new_source: bytes | None,
                            path: str, read) -> list[Delta]:
    """``items`` with each new-kernel launch delta made a reader's (``platform-chosen-launch``) when upstream
    launches the new kernel only in an ``if`` whose test holds on a probed platform alone (a device probe,
    followed through the functions and imports the test calls, possibly ``and`` something else) and that
    leaves the wrapper, every kernel it launched before still launched after it: on every other platform the
    wrapper runs what it ran. ``read(path)`` is an upstream file at the commit, or None."""
    if not new_source or new.language != "python":
        return items
    added = [i for i in items if i.status is Status.BEHIND and i.rule == "launch-kernel" and i.evidence
             and i.evidence[0].side == "upstream-new" and i.evidence[0].line]
    before = {launch.kernel_normalised for launch in old.launches}
    if not added or not before or not before <= {launch.kernel_normalised for launch in new.launches}:
        return items
    module = _ModuleProbes(path, new_source, read, {path: None})
    if module.tree is None:
        return items
    module.seen[path] = module
    result: list[Delta] = []
    for item in items:
        branch = _branch_of(module.tree, bare_name(new.name), item.evidence[0].line) if item in added else None
        gate = _probe_gate(branch.test, module, _ProbeReading()) if branch is not None else None
        if gate is None:
            result.append(item)
            continue
        kept = [launch for launch in new.launches if launch.kernel_normalised in before
                and launch.line > (branch.end_lineno or branch.lineno)]
        if not kept:
            result.append(item)
            continue
        result.append(Delta("undecided", item.layer,
                            f"{item.message.split(',')[0]} only under `if {ast.unparse(branch.test)}:`, true only on "
                            f"a platform a probe names (`{gate}`), and launches {kept[0].kernel} as before "
                            "after it: a launch the wrapper picks by the device, which no caller supplies or "
                            "selects elsewhere, for a reader rather than a gap", item.evidence, geometry=item.geometry,
                            rule="platform-chosen-launch"))
    return result
