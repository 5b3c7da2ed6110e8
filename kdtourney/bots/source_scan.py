"""The bots of a Python module read from its source without running it (`bots_in_source`): how
the harness lists a folder bot it must not execute (`--sandbox`, where a bot's code runs only in
its sandbox).

A bot is found when it is written plainly: a top-level class with a base class, a class attribute
`name = "literal"`, and parameters as keyword arguments of its own `__init__` whose defaults are
literals (`def __init__(self, depth=2, greedy=True)`). Its description is the first line of its
docstring, as `Bot.description` gives. What only running the module would tell (a name computed,
parameters inherited) is not seen: such a bot is reported as not found.
"""

from __future__ import annotations

import ast


def bots_in_source(source: str, origin: str) -> list[tuple[str, str, dict]]:
    """(name, description, parameters) of every bot class of `source`. SyntaxError as compile
    would raise it; ValueError naming the class for a parameter whose default is not a literal."""
    tree = ast.parse(source, origin)
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not node.bases:
            continue
        name = _class_name(node)
        if not name:
            continue
        doc = ast.get_docstring(node) or ""
        found.append((name, doc.splitlines()[0] if doc else "", _parameters(node)))
    return found


def _class_name(node: ast.ClassDef) -> str | None:
    for item in node.body:
        if isinstance(item, ast.Assign) and len(item.targets) == 1:
            target, value = item.targets[0], item.value
        elif isinstance(item, ast.AnnAssign) and item.value is not None:
            target, value = item.target, item.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "name" \
                and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value or None
    return None


def _parameters(node: ast.ClassDef) -> dict:
    init = next((item for item in node.body
                 if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
    if init is None:
        return {}
    args = init.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults))[1:] + list(zip(args.kwonlyargs, args.kw_defaults))
    parameters = {}
    for arg, default in pairs:
        if arg in args.posonlyargs:
            continue
        if default is None:
            raise ValueError(f"{node.name}: every parameter needs a default; {arg.arg} has none")
        try:
            parameters[arg.arg] = ast.literal_eval(default)
        except ValueError:
            raise ValueError(f"{node.name}: the default of {arg.arg} is not a literal, so it "
                             "cannot be read without running the module") from None
    return parameters


__all__ = ["bots_in_source"]
