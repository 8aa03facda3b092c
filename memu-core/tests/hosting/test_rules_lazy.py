"""The redaction rules compile on first use, and only the ones a view's literals can reach
(ADR 0026's third amendment): a steady ``prepare`` of a few plain records compiles none of them.
Each token shape's literals are the triggers' (a shape searched only behind a wrong literal
would let its secrets through)."""

from __future__ import annotations

import subprocess
import sys

from memu_core._bridge import _rules

PROBE = """
from memu_core._bridge import _rules
lazies = [p for _, _, p, _ in _rules._TOKENS] + [p for _, p in _rules._ASSIGN]
lazies += [_rules._PRIVATE_KEY, _rules._URL, _rules._BEARER, _rules._AUTHORIZATION, _rules._AWS_AFTER_WORD]
lazies += [_rules._AWS_AFTER_ID, _rules._DOTTED, _rules._IDENT]
def compiled():
    return sum(p._compiled is not None for p in lazies)
print(compiled())
assert _rules.find(b"the build fails when the fixture races; rerun it with -x") == []
print(compiled())
spans = _rules.find(b"export API_TOKEN=a1b2c3d4e5f6g7h8")
assert [kind for _, _, kind in spans] == ["secret"], spans
print(compiled())
"""


def test_nothing_compiles_at_import_and_a_plain_view_compiles_nothing() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # Import: none; plain prose: none; one assigned token (digits: no name check): its keyword's rule.
    assert done.stdout.split() == ["0", "0", "1"], done.stdout


def test_every_token_shape_is_searched_behind_trigger_literals_only() -> None:
    assert len(_rules._TOKENS) == len(_rules._TOKEN_SHAPES)
    for needs, _kinds, _pattern, _mixed in _rules._TOKENS:
        assert needs and set(needs) <= set(_rules.TRIGGERS), needs
    assert {literal for literal, _ in _rules._ASSIGN} <= set(_rules.TRIGGERS_ANY_CASE)
