"""Revert rules at the level of one definition (DESIGN §5: a change and its revert inside the range are
net-zero).

The whole-commit, partial and whole-file pairings live with the ownership rules (``net-zero``,
``partial-revert``, ``file-revert``); the rule here pairs what those leave: one ported definition that a
commit changes and a later commit of the range puts back, when both commits change other things too.
The code that finds the pairs reads only the range's diffs (``portq.classifier.classify.definition_reverts``);
this module must not import the verdict table or anything after the classifier, and a rule never names a
corpus symbol, path or commit.
"""

from __future__ import annotations

from portq.classifier.rules import Rule

RULES = (
    Rule("definition-revert", ("NOT_APPLICABLE",),
         "A ported definition that one commit changes and the next commit of the range to touch what that commit "
         "made in it takes back, line for line and in place (every line the first added that the later one "
         "removes, every run the first removed put back where it was, and no other change to the definition in "
         "the later commit), is as it was over the pair: NOT_APPLICABLE/net-zero for that definition in both "
         "commits, whatever else either commit changes (and whatever other commits change in the definition "
         "between them, elsewhere). A Python binding the first commit added that the later one keeps is allowed "
         "only when, right after the first commit, nothing in the definition but the lines taken back and the "
         "kept bindings themselves reads it (a value only the taken-back lines used). Leaving any other part of "
         "the change, keeping a line that is read or that binds nothing, changing the definition otherwise, or "
         "changing a definition it calls that the first commit left alone (the change may have moved there) is "
         "no revert; a commit that itself takes back an earlier change is never a first side, and a commit "
         "that puts the change back later is decided on its own.",
         "entry 4: kernel gains `NUM_PROGS: tl.constexpr`, host adds `progs = query()` and passes "
         "`NUM_PROGS=progs` (and another file changes); entry 9: both go back, `progs = query()` stays, a "
         "sibling is added",
         "classifier.classify.definition_reverts, classifier.classify.StructuralClassifier._definition_revert"),
)
