"""Launch rules: which kernels a definition launches, and how (DESIGN §6, §7).

Launches pair old with new by the arguments they share; grids compare as
canonical expressions (locals resolved through their bindings, ``cdiv``
forms one operator, the SM count one leaf), never as text.
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("launch-kernel", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "A kernel upstream now launches (or stopped launching) that the port does not (or still does) leaves it "
         "behind; a kernel replaced in place with the same grid and only derived arguments added is for a reader.",
         "-    old_k[grid](x, n)\n+    new_k[grid](x, n, BLOCK=64)",
         "classifier.deltas._launch_items, ._new_kernel_grid_item"),
    Rule("launch-geometry", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "A paired launch whose grid, block, `num_warps` or `num_stages` changed, compared as canonical "
         "expressions against the port's launch: behind when the port keeps the old form, in sync when it has "
         "the new one, for a reader when neither.",
         "-dim3 grid((n + 255) / 256)\n+dim3 grid(std::min((n + 255) / 256, 4 * num_sms))",
         "classifier.deltas._geometry_items, ._grid_item, ._grid_form_item"),
    Rule("launch-arguments", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "The arguments a paired launch passes, bound to the kernel's parameters: an argument upstream added or "
         "stopped passing that the port's launch does not follow leaves it behind.",
         "-    k[grid](x, out, n)\n+    k[grid](x, out, n, stride)",
         "classifier.deltas._argument_items, ._bound_items"),
    Rule("program-decomposition", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "How a kernel's program id is read and decomposed (axes, `pid // H`, `num_programs`) against the port's.",
         "-    pid = tl.program_id(0)\n+    pid_m = tl.program_id(0); pid_n = tl.program_id(1)",
         "classifier.deltas._program_id_items"),
    Rule("callee-path", ("REAL_GAP", "IN_SYNC", "NEEDS_REVIEW"),
         "An unported helper whose body changed, called by a ported definition that passes on its own parameter, "
         "is the caller's change through the call: for each value the helper compares that parameter with, a new "
         "launch reached where none was is a new path the port must launch too (IN_SYNC if it does, REAL_GAP if "
         "it certainly raises, NEEDS_REVIEW if it cannot be placed).",
         "     elif style == NEOX:\n-        raise NotImplementedError\n+        _neox[grid](x)",
         "classifier.callees, classifier.verdicts.SymbolClassifier._through_ported_callers"),
)
