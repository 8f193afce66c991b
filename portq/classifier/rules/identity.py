"""Identity rules: which upstream code is the port's, however upstream names or moves it, and who reaches the port however it is named (issue classes 1 to 3).

An anchor names an upstream definition where it was when the port was
written, and reachability finds callers by name. Both must survive what
upstream and the tree do to names: a definition renamed, moved into another
file or extracted into a helper stays the anchored definition
(``moved-definition``); a port imported under another name, re-exported by a
package or run by torch through its class is still called
(``reach-bound-names``); and what a ported definition reads at module level
— aliases, flags, constants, import-time code, here or in a module it
imports — is part of it (``module-level-use``).
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("moved-definition", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "An anchored definition whose body one commit carries elsewhere (renamed, moved to another file when a "
         "module is split, or extracted into a helper it now calls) keeps its identity: the move is shown "
         "(anchor lost at SHA: SYMBOL moved to PATH::NAME?) and is cosmetic when the body is unchanged, and every "
         "later change to the carrier is decided against the anchor's port, never not-ported.",
         "-def _fwd(x_ptr, ...):\n+def _fwd_kernel(x_ptr, ...):   (same body; a later body change to _fwd_kernel is "
         "the port of _fwd's)",
         "classifier.moves.follow_moves, classifier.verdicts.SymbolClassifier._moved"),
    Rule("module-level-use", ("NEEDS_REVIEW",),
         "A module-level alias, flag or constant is part of the surface of every ported definition that reads it, "
         "in its own file or through an import (absolute, relative, aliased, or the module itself): rebinding it "
         "needs review; import-time code changed in a file of copied (pinned) ports runs with the copies and "
         "needs review too.",
         "-exp = tl.exp\n+@triton.jit\n+def exp(x): return tl.exp(x.to(tl.float32))   (a ported kernel in "
         "another file does `from .utils import exp`)",
         "classifier.module_surface, classifier.verdicts.SymbolClassifier._module_level_use"),
    Rule("reach-bound-names", ("REAL_GAP",),
         "A port is reached under every name bound to it (import aliases, package re-exports, module-level "
         "bindings such as op = Function.apply) and through its class for the methods Python and torch run "
         "implicitly (forward/backward via Function.apply and Module.__call__, __init__, __call__): how a caller "
         "imports never turns REAL_GAP into INERT.",
         "# engine/loss.py: from kernels import xent as _x; _x.apply(logits)  → XentFunction.forward is reached",
         "tree.reachability.Reachability.names_reaching, classifier.verdicts.SymbolClassifier._gap"),
)
