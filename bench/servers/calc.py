"""bench-calc: a calculator MCP server (MCPServer) with a "safe" evaluator (an AST walk that allows
numbers, + - * / // % ** and parentheses, nothing else) that still computes whatever power it is
given: `9**9**9` has 1.2 billion bits and never finishes. Bug CALC-1.

    python calc.py              # stdio; set BENCH_GROUND_TRUTH=FILE to record triggered bugs

The bug is recorded when a power's result would exceed 100,000 bits, then computed anyway (a million
bits take a quarter of a second here, ten million ~3 s, `9**9**9` hours). The clean look-alike
`evaluate_capped` is the same evaluator refusing such a power. Results too long to print (Python's
4300-digit limit) are refused by both.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Annotated, Any

import _truth
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

app = MCPServer("bench-calc", version="1.0.0", instructions="Arithmetic on demand.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
CAP_BITS = 100_000

Expression = Annotated[
    str, Field(min_length=1, max_length=200, description="An arithmetic expression, e.g. '2 * (3 + 4)'.")
]
Number = int | float | complex
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _power_bits(base: Number, exponent: Number) -> float:
    """About how many bits `base ** exponent` has, for an integer power that grows."""
    if not isinstance(base, int) or not isinstance(exponent, int) or exponent <= 0 or abs(base) <= 1:
        return 0.0
    return exponent * math.log2(abs(base))


def _eval(node: ast.AST, capped: bool) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body, capped)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value  # type: ignore[return-value]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, capped))  # type: ignore[no-any-return]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left, capped), _eval(node.right, capped)
        if isinstance(node.op, ast.Pow):
            bits = _power_bits(left, right)
            if capped and bits > CAP_BITS:
                raise ToolError("the result would be too large")
            if bits > CAP_BITS:
                # CALC-1: nothing stops a power that takes hours (9**9**9 has 1.2e9 bits).
                _truth.triggered("CALC-1")
        return _BINARY[type(node.op)](left, right)  # type: ignore[no-any-return]
    raise ToolError("only numbers, + - * / // % ** and parentheses are allowed")


def _evaluate(expression: str, capped: bool) -> str:
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ToolError("not an arithmetic expression") from None
    try:
        return str(_eval(tree, capped))
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except OverflowError:
        raise ToolError("the result is out of range") from None
    except ValueError:  # more digits than int -> str allows
        raise ToolError("the result has too many digits to show") from None
    except RecursionError:
        raise ToolError("the expression is nested too deeply") from None


@app.tool(annotations=READ_ONLY)
def evaluate(expression: Expression) -> str:
    """Evaluate an arithmetic expression."""
    return _evaluate(expression, capped=False)


# ------------------------------------------------------------------------------------------ clean


@app.tool(annotations=READ_ONLY)
def evaluate_capped(expression: Expression) -> str:
    """Evaluate an arithmetic expression (huge powers are refused)."""
    return _evaluate(expression, capped=True)


if __name__ == "__main__":
    app.run("stdio")
