"""Products of one definition, computed once per content.

The classifier asks the same questions of the same definition text many
times in a scan: a definition touched by consecutive commits is the new
side of one comparison and the old side of the next, and a port is
compared with every commit that touches what it ports. What it asks —
comment-free tokens, alpha-renamed tokens, a Python ``ast`` dump — depends
only on the definition's own syntax: its language, node type, the column it
starts at (Python's blocks are read by indentation) and its text. So each
such product is kept here by a digest of exactly those and of the
product's name, and computed only the first time that content is seen.

``per_definition(product)`` marks a function ``f(node, *args)`` of hashable
``args`` as such a product (``per_text`` one of a source text, for rules
that compare texts). Only functions that read nothing outside the
node's subtree may be marked: a signature, which follows calls into other
definitions of its file, is not one (its cache is keyed by blob, in
``portq.tree.symbol_cache``).

``MEMO`` holds the products in memory (at most ``bound`` of them, least
recently used dropped first) and may be given a ``backing`` store that
outlives the scan (``portq.tree.product_store``): products it misses are
asked of the store, and computed ones are handed to it as JSON text. A
product read back that does not decode is computed again, never trusted.
``PORTQ_PRODUCT_MEMO=off`` in the environment (or ``disabled()``) turns the
memo off: every product is computed, as if there were none; a test and
``bench_rescan.py --check-uncached`` compare the verdicts both ways.

This module parses nothing, reads no file and decides nothing; it imports no
other part of portq.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

DEFAULT_BOUND = 20_000
"""Products held in memory; a few hundred bytes to a few KB each."""


class Backing(Protocol):
    def get(self, product: str, key: str) -> str | None: ...

    def put(self, product: str, key: str, text: str) -> None: ...


class ProductMemo:
    """Products by (product name, content key), bounded, least recently used dropped first."""

    def __init__(self, bound: int = DEFAULT_BOUND) -> None:
        self.bound = bound
        self.enabled = os.environ.get("PORTQ_PRODUCT_MEMO", "on").lower() not in ("off", "0", "no")
        self.backing: Backing | None = None
        self._items: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self.computed = 0  # products computed (misses)
        self.reused = 0  # answered from memory
        self.recalled = 0  # answered by the backing store

    def clear(self) -> None:
        self._items.clear()
        self.computed = self.reused = self.recalled = 0

    def __len__(self) -> int:
        return len(self._items)

    def lookup(self, product: str, key: str, compute: Callable[[], Any], codec: "Codec") -> Any:
        items = self._items
        slot = (product, key)
        if slot in items:
            items.move_to_end(slot)
            self.reused += 1
            return items[slot]
        value, found = None, False
        if self.backing is not None:
            text = self.backing.get(product, key)
            if text is not None:
                try:
                    value, found = codec.decode(json.loads(text)), True
                    self.recalled += 1
                except (ValueError, TypeError, KeyError, AttributeError):
                    found = False  # a damaged row is never trusted: computed again
        if not found:
            value = compute()
            self.computed += 1
            if self.backing is not None:
                self.backing.put(product, key, json.dumps(codec.encode(value), separators=(",", ":")))
        items[slot] = value
        if len(items) > self.bound:
            items.popitem(last=False)
        return value


class Codec:
    """How a product is written as JSON for a backing store, and read back."""

    def __init__(self, encode: Callable[[Any], Any] = lambda v: v, decode: Callable[[Any], Any] = lambda v: v):
        self.encode = encode
        self.decode = decode


JSON = Codec()
STRINGS = Codec(decode=lambda v: [str(s) for s in v] if isinstance(v, list) else _wrong(v))
TEXT_OR_NONE = Codec(decode=lambda v: v if v is None or isinstance(v, str) else _wrong(v))


def _wrong(value):
    raise TypeError(f"unexpected stored product {type(value).__name__}")


MEMO = ProductMemo()
"""The process's memo (one scan per process; tests may share it: keys are content)."""

_PRODUCT_MODULES: dict[str, str] = {}  # product name -> the file of the function that computes it


def content_key(node, args: tuple = ()) -> str:
    """The digest of what a per-definition product may read of ``node``:
    its type, starting column and text, and the product's arguments."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{node.type}\x1f{node.start_point[1]}\x1f{args!r}\x1f".encode())
    digest.update(node.text)
    return digest.hexdigest()


def content_digest(text: str) -> str:
    """A digest of ``text``, for a product that is only ever compared (an ``ast`` dump): equal
    texts give equal digests, and a memo or store keeps 40 characters instead of the text."""
    return hashlib.blake2b(text.encode("utf-8", errors="surrogatepass"), digest_size=20).hexdigest()


def _register(product: str, function) -> None:
    """Record the source file of ``product``'s function: the memo's version digests those files."""
    try:
        _PRODUCT_MODULES[product] = inspect.getsourcefile(function) or ""
    except TypeError:
        _PRODUCT_MODULES[product] = ""


def per_definition(product: str, codec: Codec = JSON):
    """Mark ``f(node, *args)`` as a product of the node's content alone (see the module's docstring)."""

    def mark(function):
        _register(product, function)

        @functools.wraps(function)
        def memoised(node, *args):
            if not MEMO.enabled or node is None:
                return function(node, *args)
            return MEMO.lookup(product, content_key(node, args), lambda: function(node, *args), codec)

        memoised.uncached = function
        return memoised

    return mark


def per_text(product: str, codec: Codec = JSON):
    """Mark ``f(text, *args)`` (``text`` a str) as a product of that text and the arguments alone."""

    def mark(function):
        _register(product, function)

        @functools.wraps(function)
        def memoised(text: str, *args):
            if not MEMO.enabled:
                return function(text, *args)
            digest = hashlib.blake2b(f"{args!r}\x1f".encode(), digest_size=20)
            digest.update(text.encode("utf-8", errors="surrogatepass"))
            return MEMO.lookup(product, digest.hexdigest(), lambda: function(text, *args), codec)

        memoised.uncached = function
        return memoised

    return mark


def products_version() -> str:
    """What stored products depend on: every marked product's name and a digest
    of the source files that compute them (a changed rule there is a new version)."""
    digest = hashlib.sha256()
    for product, path in sorted(_PRODUCT_MODULES.items()):
        digest.update(product.encode() + b"\0")
        try:
            digest.update(Path(path).read_bytes())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()[:16]


@contextmanager
def disabled() -> Iterator[None]:
    """Every product computed within, none reused (the uncached path)."""
    was = MEMO.enabled
    MEMO.enabled = False
    try:
        yield
    finally:
        MEMO.enabled = was
