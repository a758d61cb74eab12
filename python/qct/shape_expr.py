"""Metadata shape expressions (docs/kernel-abi.md grammar) over int-like values.

The runtime's evaluator (C++, reached as qct.runtime.eval_expr) is the one launches use. This one
exists for torch's fake tensors: under torch.compile with dynamic shapes M, K and G are SymInts,
which only Python arithmetic can carry. tests/python/test_shape_expr.py checks that both agree on
every expression the bundled kernels use.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(.))")
_CALLS = ("cdiv", "rup", "min", "max")


class ShapeExprError(ValueError):
    """An expression outside the grammar, or an unknown name."""


def _tokens(text: str) -> list[str]:
    out = []
    for number, name, other in _TOKEN.findall(text):
        token = number or name or other
        if token.strip():
            out.append(token)
    return out


def _cdiv(a: Any, b: Any) -> Any:
    return (a + b - 1) // b


def _min(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    import torch

    return torch.sym_min(a, b)


def _max(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    import torch

    return torch.sym_max(a, b)


_FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    "cdiv": _cdiv, "rup": lambda a, b: _cdiv(a, b) * b, "min": _min, "max": _max}


class _Parser:
    def __init__(self, text: str, names: Mapping[str, Any]):
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0
        self.names = names

    def fail(self, why: str) -> ShapeExprError:
        return ShapeExprError(f"shape expression '{self.text}': {why}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, want: str | None = None) -> str:
        token = self.peek()
        if token is None or (want is not None and token != want):
            raise self.fail(f"expected {want or 'a term'}, found {token or 'the end'}")
        self.pos += 1
        return token

    def expr(self) -> Any:
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self) -> Any:
        value = self.factor()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value = value * self.factor()
            else:
                # Exact by the metadata's constraints (the runtime checks them before any launch).
                value = value // self.factor()
        return value

    def factor(self) -> Any:
        token = self.take()
        if token.isdigit():
            return int(token)
        if token == "(":
            value = self.expr()
            self.take(")")
            return value
        if token in _CALLS:
            self.take("(")
            a = self.expr()
            self.take(",")
            b = self.expr()
            self.take(")")
            return _FUNCTIONS[token](a, b)
        if token in self.names:
            return self.names[token]
        raise self.fail(f"unknown name '{token}'")


def evaluate(text: str, names: Mapping[str, Any]) -> Any:
    """The value of `text` with M, K, G and knob names bound by `names` (ints or SymInts)."""
    parser = _Parser(text, names)
    value = parser.expr()
    if parser.peek() is not None:
        raise parser.fail(f"unexpected '{parser.peek()}'")
    return value
