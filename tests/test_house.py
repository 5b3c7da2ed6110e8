"""The house rules of the package, checked on its source: sizes, docstrings, private names, and
imports that run one way between the packages (docs/contributing.md, "The layout")."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kdtourney"
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 80
MAX_METHODS = 25
MAX_DOCSTRING_LINES = 15
# bottom to top: a module may import its own package and the packages listed before it
LAYERS = ["errors", "text", "interrupts", "engine", "stats", "bots", "external", "registry",
          "tournament", "match", "service", "store", "testing", "env", "report", "commands",
          "terminal", "cli", "__main__"]


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py"))


def name(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def is_kernel(node) -> bool:
    """A Numba kernel: decorated with engine.kernel_base's `kernel` (or numba's njit)."""
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if getattr(target, "id", getattr(target, "attr", "")) in ("kernel", "njit", "jit"):
            return True
    return False


def test_no_file_is_too_long():
    long = [f"{name(p)}: {n} lines" for p in modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES]
    assert not long, long


def nodes(*kinds):
    """(module path, node) for every node of these kinds in every module."""
    for p in modules():
        for node in ast.walk(tree(p)):
            if isinstance(node, kinds):
                yield p, node


def test_no_function_is_too_long_outside_kernels():
    long = [f"{name(p)}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
            for p, node in nodes(ast.FunctionDef, ast.AsyncFunctionDef)
            if not is_kernel(node) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, long


def test_no_class_has_too_many_methods():
    big = []
    for p, node in nodes(ast.ClassDef):
        methods = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in node.body)
        if methods > MAX_METHODS:
            big.append(f"{name(p)} {node.name}: {methods} methods")
    assert not big, big


def test_every_module_says_briefly_what_it_is_for():
    bad = []
    for p in modules():
        doc = ast.get_docstring(tree(p), clean=False)
        if not doc:
            bad.append(f"{name(p)}: no docstring")
        elif len(doc.strip().splitlines()) > MAX_DOCSTRING_LINES:
            bad.append(f"{name(p)}: a docstring of {len(doc.strip().splitlines())} lines")
    assert not bad, bad


def kdtourney_imports(path: Path):
    """(line, module imported, names imported) of every import of kdtourney in `path`."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kdtourney":
                    yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = parts[:-node.level] if path.name != "__init__.py" else \
                    parts[:len(parts) - node.level]
                module = ".".join(base + ([module] if module else []))
            if module.split(".")[0] == "kdtourney":
                yield node.lineno, module, [a.name for a in node.names]


def test_no_private_name_is_imported_from_another_module():
    private = [f"{name(p)}:{line} imports {n} from {module}"
               for p in modules() for line, module, names in kdtourney_imports(p)
               for n in names if n.startswith("_") and n != "__version__"]
    assert not private, private


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "kdtourney"


@pytest.mark.parametrize("path", modules(), ids=name)
def test_imports_run_down_the_layers(path):
    here = package_of(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
    if here in ("kdtourney", "__init__"):
        return  # the public face hands names on from every layer, lazily
    assert here in LAYERS, f"{name(path)}: a package the layers do not name"
    above = [f"line {line}: {module}" for line, module, _ in kdtourney_imports(path)
             if package_of(module) not in ("kdtourney", here)
             and LAYERS.index(package_of(module)) > LAYERS.index(here)]
    assert not above, f"{name(path)} imports from layers above its own ({here}): {above}"
