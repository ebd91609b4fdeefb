"""The import rules of docs/architecture.md, checked on the source with ``ast``.

Every ``import`` statement counts, including those inside functions (the
lazy imports of torch and of sibling modules): a rule holds for what a module
may import at any time, not only at import time.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "skembed"

# The packages at the top of the arrows: nothing below them may import them.
TOP = ("skembed.model_selection", "skembed.cli", "skembed.dask")
# What utils/ may not import: the estimators' packages and everything on top of them.
ABOVE_UTILS = (
    "skembed.text",
    "skembed.tabular",
    "skembed.preprocessing",
    "skembed.graph",
    "skembed.interactions",
    *TOP,
)


def _module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def imported_modules(path, root=PACKAGE):
    """Absolute names of every module ``path`` (inside ``root``) imports, relative ones resolved."""
    name, is_package = _module_name(path, root)
    package = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.add(module)
            # ``from . import x`` / ``from .. import text`` import submodules by name
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def modules_under(*subpackages):
    paths = []
    for sub in subpackages:
        paths.extend(sorted((PACKAGE / sub).rglob("*.py")))
    return [pytest.param(path, id=str(path.relative_to(PACKAGE.parent))) for path in paths]


def _is_within(name, prefixes):
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_the_checker_resolves_relative_and_lazy_imports(tmp_path):
    fake = tmp_path / "skembed" / "utils"
    fake.mkdir(parents=True)
    source = fake / "_mod.py"
    source.write_text(
        "from ..text import bert\n"
        "from . import _compute\n"
        "def f():\n"
        "    import sklearn.base\n"
        "    from ..model_selection._runner import run\n"
    )
    found = imported_modules(source, root=tmp_path / "skembed")
    assert {"skembed.text.bert", "skembed.utils._compute", "sklearn.base"} <= found
    assert "skembed.model_selection._runner" in found
    assert _is_within("skembed.text.bert", ABOVE_UTILS)
    assert not _is_within("skembed.textual", ABOVE_UTILS)


@pytest.mark.parametrize("path", modules_under("kernels", "nn"))
def test_kernels_and_nn_know_nothing_of_scikit_learn(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, ("sklearn",)))
    assert not bad, f"{path.name} imports {bad}: kernels/ and nn/ must not import scikit-learn"


@pytest.mark.parametrize("path", modules_under("kernels"))
def test_kernels_do_not_import_torch(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, ("torch",)))
    assert not bad, f"{path.name} imports {bad}: kernels/ are numba only"


@pytest.mark.parametrize("path", modules_under("utils"))
def test_utils_import_no_estimator_package(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, ABOVE_UTILS))
    assert not bad, (
        f"{path.name} imports {bad}: utils/ serves the estimators and may not import "
        "their packages (move the shared piece down into utils/ instead)"
    )


@pytest.mark.parametrize(
    "path",
    modules_under(
        "kernels", "nn", "utils", "text", "tabular", "preprocessing", "graph", "interactions"
    ),
)
def test_nothing_below_imports_model_selection_cli_or_dask(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, TOP))
    assert not bad, f"{path.name} imports {bad}: model_selection/, cli.py and dask.py sit on top"


def test_architecture_page_names_every_package_and_public_module():
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for path in sorted(PACKAGE.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            if f"{path.name}/" not in page:
                missing.append(f"{path.name}/")
            for module in sorted(path.glob("*.py")):
                if not module.stem.startswith("_") and module.stem not in page:
                    missing.append(f"{path.name}/{module.name}")
        elif path.suffix == ".py" and path.name not in page:
            missing.append(path.name)
    assert not missing, f"docs/architecture.md does not mention {missing}: add one line each"


#: ``path.py:name`` in backticks on docs/architecture.md: a function, class or method of skembed/
PAGE_REFERENCE = re.compile(r"`((?:\w+/)*\w+\.py):([A-Za-z_][\w.]*)`")


def defined_names(path):
    """Dotted names that ``path`` defines: functions, classes, methods, nested functions."""
    names = set()

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(prefix + node.name)
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(path.read_text(encoding="utf-8")).body, "")
    return names


def broken_references(text, root=PACKAGE):
    """The ``path.py:name`` references of ``text`` whose file or name does not exist."""
    broken = []
    for where, name in sorted(set(PAGE_REFERENCE.findall(text))):
        path = root / where
        if not path.is_file():
            broken.append(f"{where}: no such file")
        elif name not in defined_names(path):
            broken.append(f"{where}:{name}")
    return broken


def test_architecture_page_references_name_real_functions():
    """The walk from ``fit`` to the hot loop names functions that exist where it says."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert len(set(PAGE_REFERENCE.findall(page))) >= 40
    assert "`kernels/word2vec.py:train_part_shared`" in page
    assert broken_references(page) == [], "docs/architecture.md names code that is not there"


def test_a_stale_page_reference_is_found():
    text = (
        "`text/_base.py:BaseWordEmbedder.fit`, `text/word2vec/_training.py:train_epochs.epoch_step`"
        ", `text/_base.py:BaseWordEmbedder.fitt`, `nowhere.py:f`"
    )
    assert broken_references(text) == [
        "nowhere.py: no such file",
        "text/_base.py:BaseWordEmbedder.fitt",
    ]


def test_test_modules_do_not_import_each_other():
    tests = Path(__file__).resolve().parent
    bad = {}
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            names = [n for n in names if n.startswith(("test_", "tests.", "conftest"))]
            if names:
                bad.setdefault(path.name, []).extend(names)
    assert not bad, f"test modules import each other: {bad}; share helpers in tests/_helpers.py"


def test_tests_mirror_the_package():
    tests = Path(__file__).resolve().parent
    subdirs = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subdirs <= packages, (
        f"tests/{sorted(subdirs - packages)} has no skembed/ subpackage of that name: test "
        "modules live in the folder of the package they test (tests/ mirrors skembed/)"
    )
    for sub in subdirs:
        assert list((tests / sub).glob("test_*.py")), f"tests/{sub}/ holds no test module"
    no_init = sorted(
        str(folder.relative_to(tests.parent))
        for folder in [tests, *tests.rglob("*")]
        if folder.is_dir()
        and not folder.name.startswith((".", "_"))
        and list(folder.glob("test_*.py"))
        and not (folder / "__init__.py").is_file()
    )
    assert not no_init, (
        f"{no_init} hold test modules but no __init__.py: every tests/ folder is a package, so "
        "test modules of the same name in two folders do not collide"
    )


# ----------------------------------------------------------------------------------------
# The layout rules of issue 38: no circle, no private name across packages, small modules,
# a test module beside every module.

#: The declared shared layer: its private modules serve every package (``utils/_compute`` ...).
SHARED_LAYER = ("skembed.utils",)
#: Most code lines a module of skembed/ may have (docstrings, comments and blank lines not
#: counted: a cap on prose would push documentation out of the code).
MAX_MODULE_CODE_LINES = 500
#: Most code lines a function may have, outside :data:`LONG_FUNCTIONS`.
MAX_FUNCTION_CODE_LINES = 80
#: Functions allowed over :data:`MAX_FUNCTION_CODE_LINES`, each with the reason it is one piece.
LONG_FUNCTIONS: dict[str, str] = {}
#: A function over this many code lines counts as long ...
LONG_FUNCTION_CODE_LINES = 60
#: ... and the package may hold at most this many (an estimator's ``__init__`` that assigns
#: thirty parameters one per line is long and still reads top to bottom).
MAX_LONG_FUNCTIONS = 10
#: Most positional parameters a function may take: more are named structures.
MAX_POSITIONAL_PARAMETERS = 10


def code_lines(source):
    """Line numbers of ``source`` that hold code: no docstring, comment or blank line."""
    tree = ast.parse(source)
    prose = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    prose.update(range(first.lineno, first.end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip and tok.type != tokenize.ENDMARKER:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines - prose


def long_functions(path):
    """``{"file:function": code lines}`` of the functions of ``path`` over the cap."""
    source = path.read_text(encoding="utf-8")
    lines = code_lines(source)
    where = path.relative_to(PACKAGE).as_posix()
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = sum(node.lineno <= line <= node.end_lineno for line in lines)
            if n > MAX_FUNCTION_CODE_LINES:
                out[f"{where}:{node.name}"] = n
    return out


def _all_modules(root=PACKAGE):
    """``{module name: path}`` of every module of skembed/ (packages by their ``__init__``)."""
    return {_module_name(path, root)[0]: path for path in sorted(root.rglob("*.py"))}


def _package_of(name, modules):
    """The package a module belongs to: itself for a package, else its parent."""
    path = modules[name]
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _resolve(imported, modules):
    """The skembed module an imported dotted name denotes (``a.b.func`` → ``a.b``), or None."""
    while imported and imported not in modules:
        if "." not in imported:
            return None
        imported = imported.rsplit(".", 1)[0]
    return imported


def import_edges(path, root=PACKAGE):
    """``(module, names)`` pairs of every skembed import of ``path``: ``names`` are the
    imported names (empty for ``import a.b``); ``from . import sub`` yields the submodule."""
    name, is_package = _module_name(path, root)
    package = name.split(".") if is_package else name.split(".")[:-1]
    edges = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            edges.extend((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            edges.append((module, tuple(alias.name for alias in node.names)))
    return [(m, names) for m, names in edges if m == "skembed" or m.startswith("skembed.")]


def _graph():
    modules = _all_modules()
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for module, names in import_edges(path):
            targets = []
            for imported in names:  # ``from pkg import sub``: the submodule, not the package
                if f"{module}.{imported}" in modules:
                    targets.append(f"{module}.{imported}")
            if not targets or len(targets) < len(names):
                targets.append(_resolve(module, modules))
            graph[name].update(t for t in targets if t and t != name)
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_cycle_finder_finds_a_circle_and_ignores_a_chain():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_circle():
    circles = _cycles(_graph())
    assert not circles, (
        f"import circles: {circles}; move the shared piece into a module both can import "
        "(the entry points of kernels/ live in kernels/scheduler.py for this reason)"
    )


def _is_private(dotted):
    return any(part.startswith("_") and part != "__init__" for part in dotted.split(".")[1:])


def private_crossings(path, root=PACKAGE):
    """Imports of ``path`` that reach another package's private module or private name.

    Allowed: anything of the module's own package and of the packages above it (a
    subpackage uses its parent's shared private modules, ``text.word2vec`` →
    ``text._analyzer``), except the root package ``skembed`` itself; the private modules
    (not names) of :data:`SHARED_LAYER`.
    """
    modules = _all_modules(root)
    name = _module_name(path, root)[0]
    own = _package_of(name, modules)
    allowed = [own]
    while "." in allowed[-1] and allowed[-1].count(".") > 1:
        allowed.append(allowed[-1].rsplit(".", 1)[0])
    bad = []
    for module, names in import_edges(path, root):
        target = _resolve(module, modules) or module
        target_package = _package_of(target, modules) if target in modules else target
        if target_package in allowed:
            continue
        shared = _is_within(target, SHARED_LAYER)
        if _is_private(module) and not shared:
            bad.append(module)
        for imported in names:
            if imported.startswith("_") and f"{module}.{imported}" not in modules:
                bad.append(f"{module}.{imported}")
            elif imported.startswith("_") and not shared:
                bad.append(f"{module}.{imported}")
    return bad


@pytest.mark.parametrize("path", modules_under("."))
def test_no_private_name_crosses_packages(path):
    bad = private_crossings(path)
    assert not bad, (
        f"{path.relative_to(PACKAGE.parent)} imports {bad}: another package's private module "
        "or name. Make the shared piece public where it is shared, or move it down into "
        "utils/ (the declared shared layer)"
    )


def test_private_crossing_rule_on_known_cases(tmp_path):
    root = tmp_path / "skembed"
    files = {
        "__init__.py": "",
        "keyedvectors.py": "def _hashes(): pass\n",
        "kernels/__init__.py": "",
        "kernels/_phases.py": "def partition(): pass\n",
        "utils/__init__.py": "",
        "utils/_compute.py": "def resolve(): pass\ndef _inner(): pass\n",
        "text/__init__.py": "",
        "text/_analyzer.py": "",
        "text/word2vec/__init__.py": "",
        "text/word2vec/_fit.py": (
            "from .. import _analyzer\n"  # the parent's shared private module: allowed
            "from ...utils._compute import resolve\n"  # the shared layer's module: allowed
            "from ...utils._compute import _inner\n"  # a private name of it: not allowed
            "from ...kernels._phases import partition\n"  # another package's private module
            "from ...keyedvectors import _hashes\n"  # a private name of the root package
        ),
        "text/count/__init__.py": "",
        "text/count/_lsa.py": "from ..word2vec._fit import x\n",  # a sibling's private module
    }
    for name, source in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(source)
    assert sorted(private_crossings(root / "text/word2vec/_fit.py", root)) == [
        "skembed.kernels._phases",
        "skembed.keyedvectors._hashes",
        "skembed.utils._compute._inner",
    ]
    assert private_crossings(root / "text/count/_lsa.py", root) == ["skembed.text.word2vec._fit"]


def test_code_lines_leave_out_docstrings_comments_and_blank_lines():
    source = '''"""Module."""

def f(a):
    """Doc
    string."""
    # a comment
    return (a +
            1)  # trailing
'''
    assert sorted(code_lines(source)) == [3, 7, 8]


@pytest.mark.parametrize("path", modules_under("."))
def test_module_has_at_most_500_code_lines(path):
    n_lines = len(code_lines(path.read_text(encoding="utf-8")))
    assert n_lines <= MAX_MODULE_CODE_LINES, (
        f"{path.relative_to(PACKAGE.parent)} has {n_lines} code lines "
        f"(> {MAX_MODULE_CODE_LINES}): split it by responsibility"
    )


@pytest.mark.parametrize("path", modules_under("."))
def test_functions_are_at_most_80_code_lines(path):
    too_long = {f: n for f, n in long_functions(path).items() if f not in LONG_FUNCTIONS}
    assert not too_long, (
        f"functions over {MAX_FUNCTION_CODE_LINES} code lines: {too_long}; cut them into named "
        "steps (or, for a numba hot loop, say why in LONG_FUNCTIONS)"
    )


def _functions(path):
    """``(file:function, code lines, positional parameters)`` of every function of ``path``."""
    source = path.read_text(encoding="utf-8")
    lines = code_lines(source)
    where = path.relative_to(PACKAGE).as_posix()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = sum(node.lineno <= line <= node.end_lineno for line in lines)
            yield f"{where}:{node.name}", n, len(node.args.posonlyargs) + len(node.args.args)


def _all_functions():
    return [f for path in sorted(PACKAGE.rglob("*.py")) for f in _functions(path)]


def test_few_functions_are_over_60_code_lines_and_none_over_100():
    functions = _all_functions()
    long = sorted((n, name) for name, n, _ in functions if n > LONG_FUNCTION_CODE_LINES)
    assert len(long) <= MAX_LONG_FUNCTIONS, (
        f"{len(long)} functions over {LONG_FUNCTION_CODE_LINES} code lines (at most "
        f"{MAX_LONG_FUNCTIONS}): {long}; cut the longest into named steps"
    )
    huge = [(n, name) for n, name in long if n > 100]
    assert not huge, f"functions over 100 code lines: {huge}"


def test_no_function_takes_more_than_10_positional_parameters():
    many = sorted((k, name) for name, _, k in _all_functions() if k > MAX_POSITIONAL_PARAMETERS)
    assert not many, (
        f"functions with more than {MAX_POSITIONAL_PARAMETERS} positional parameters: {many}; "
        "pass named structures (a NamedTuple, which numba compiles too) or keyword-only ones"
    )


def test_the_function_checks_count_code_lines_and_positional_parameters():
    source = 'def f(a, b, /, c, *args, d, **kw):\n    """Doc."""\n    # why\n\n    return a\n'
    node = ast.parse(source).body[0]
    assert len(node.args.posonlyargs) + len(node.args.args) == 3  # d is keyword-only
    assert sorted(code_lines(source)) == [1, 5]


def test_the_long_function_allow_list_names_only_long_functions():
    found = {}
    for path in PACKAGE.rglob("*.py"):
        found.update(long_functions(path))
    stale = sorted(set(LONG_FUNCTIONS) - set(found))
    assert not stale, f"no longer over {MAX_FUNCTION_CODE_LINES} code lines: drop {stale}"


def mirrored_test_path(path):
    """``skembed/a/_b.py`` → ``tests/a/test_b.py``."""
    relative = path.relative_to(PACKAGE)
    return PACKAGE.parent / "tests" / relative.parent / f"test_{relative.stem.lstrip('_')}.py"


@pytest.mark.parametrize(
    "path", [p for p in modules_under(".") if p.values[0].name != "__init__.py"]
)
def test_every_module_has_a_mirrored_test_module(path):
    expected = mirrored_test_path(path)
    assert expected.is_file(), (
        f"{path.relative_to(PACKAGE.parent)} has no test module at "
        f"{expected.relative_to(PACKAGE.parent)}: tests mirror skembed/ module by module"
    )


# ----------------------------------------------------------------------------------------
# No block of six or more lines written twice in skembed/ (docstrings, imports and parameter
# lists aside: a constraint table, a def's signature, a call that only passes names along).

DUPLICATE_WINDOW = 6
#: Repeated blocks still in the tree, by the files they stand in: each is a place to remove, and
#: a new one fails the test. (Empty it as they go; the test also fails when one is gone, so the
#: list stays true.)
KNOWN_DUPLICATES = {
    # numba inner loops of the word2vec family: the negative-sampling update and the window
    # walk are written out in each train_part (a helper over array rows costs reference counts,
    # CONVENTIONS §6); to be folded into scalar-taking helpers of _core with a speed check
    ("skembed/kernels/windows.py",): "the dynamic-window walk of skipgram_pairs / cbow_windows",
    ("skembed/kernels/doc2vec.py", "skembed/kernels/word2vec.py"): "train_part loops",
    ("skembed/kernels/word2vec.py",): "train_part / train_part_shared / train_part_bag loops",
    # the torch-batched engine: skip-gram and CBOW steps unpack a part the same way
    ("skembed/nn/sgns.py",): "_skipgram_step / _cbow_step prologue",
}


def _simple(node):
    if isinstance(node, ast.keyword):
        node = node.value
    if isinstance(node, ast.Call):
        return False
    return isinstance(node, (ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.UnaryOp))


def significant_lines(source):
    """``(line number, text)`` of the lines that count: no docstring, import, comment, blank
    line, bare punctuation, ``def`` signature, ``self.x = x`` parameter store, constant-keyed
    table or name-passing call."""
    tree = ast.parse(source)
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    skip.update(range(first.lineno, first.end_lineno + 1))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skip.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip.update(range(node.lineno, node.body[0].lineno))
        if isinstance(node, ast.Dict) and node.end_lineno - node.lineno >= 3:
            if all(isinstance(key, ast.Constant) for key in node.keys if key is not None):
                skip.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, ast.Assign) and len(node.targets) == 1:  # ``self.x = x``
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Attribute) and isinstance(value, ast.Name):
                if target.attr == value.id:
                    skip.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, ast.Call) and node.end_lineno > node.lineno:
            if all(_simple(arg) for arg in [*node.args, *node.keywords]):
                skip.update(range(node.lineno + 1, node.end_lineno + 1))
    lines = []
    for number, line in enumerate(source.splitlines(), 1):
        text = " ".join(line.split())
        if number in skip or not text or text.startswith("#") or not text.strip("()[]{},:"):
            continue
        lines.append((number, text))
    return lines


def repeated_blocks(paths, root):
    """``{block text: [(file, first line), ...]}`` of every window of
    :data:`DUPLICATE_WINDOW` significant lines that stands in more than one place."""
    places = {}
    for path in paths:
        lines = significant_lines(path.read_text(encoding="utf-8"))
        name = str(path.relative_to(root))
        for k in range(len(lines) - DUPLICATE_WINDOW + 1):
            block = "\n".join(text for _, text in lines[k : k + DUPLICATE_WINDOW])
            places.setdefault(block, []).append((name, lines[k][0]))
    return {block: where for block, where in places.items() if len(where) > 1}


def test_repeated_block_finder_on_a_known_case(tmp_path):
    body = "".join(f"    x{i} = compute({i}) + y\n" for i in range(6))
    (tmp_path / "a.py").write_text(f'def f(y):\n    """Doc."""\n{body}    return x0\n')
    (tmp_path / "b.py").write_text(f"import os\n\n\ndef g(y):\n{body}    return os\n")
    (tmp_path / "c.py").write_text(
        "def h(a, b, c, d, e, f):\n    return call(\n        a,\n        b,\n        c,\n"
        "        d,\n        e,\n        f,\n    )\n"
    )
    (tmp_path / "d.py").write_text((tmp_path / "c.py").read_text().replace("def h", "def k"))
    found = repeated_blocks(sorted(tmp_path.glob("*.py")), tmp_path)
    assert [sorted(f for f, _ in where) for where in found.values()] == [["a.py", "b.py"]]


def test_no_block_of_six_lines_is_repeated():
    found = repeated_blocks(sorted(PACKAGE.rglob("*.py")), PACKAGE.parent)
    groups = {}
    for where in found.values():
        groups.setdefault(tuple(sorted({f for f, _ in where})), []).append(where)
    new = {files: where for files, where in groups.items() if files not in KNOWN_DUPLICATES}
    gone = sorted(set(KNOWN_DUPLICATES) - set(groups))
    assert not new, (
        f"blocks of {DUPLICATE_WINDOW}+ lines written twice: {new}. Give the logic one home "
        "(a helper in the module, or utils/ when two packages share it)"
    )
    assert not gone, f"KNOWN_DUPLICATES lists {gone}, which no longer repeat: remove them"


# ----------------------------------------------------------------------------------------
# Comments and docstrings say what and why; the history of a line lives in git and its figures
# in docs/benchmarks/.

#: what a history note looks like: an issue number, a date, an old version (a measured
#: constant keeps its measurement's machine and load beside it: CONVENTIONS 1)
HISTORY = re.compile(r"\bissue \d+|\b20\d\d-\d\d-\d\d\b|\bbefore skembed \d", re.IGNORECASE)


def _prose(source):
    """``(line, text)`` of the comments and docstrings of ``source``."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield node.body[0].lineno, doc


@pytest.mark.parametrize("path", modules_under("."))
def test_comments_and_docstrings_hold_no_history(path):
    notes = [
        f"line {line}: {HISTORY.search(text).group()!r}"
        for line, text in _prose(path.read_text(encoding="utf-8"))
        if HISTORY.search(text)
    ]
    assert not notes, (
        f"{path.relative_to(PACKAGE.parent)}: {notes}; say why the code is as it is, and move "
        "dates and issue numbers to docs/benchmarks/ (or drop them)"
    )


@pytest.mark.parametrize("path", modules_under("."))
def test_no_hand_formatting(path):
    where = path.relative_to(PACKAGE).as_posix()
    skips = [line for line, text in _prose(path.read_text(encoding="utf-8")) if "fmt: skip" in text]
    assert not skips, (
        f"{where} lines {skips}: '# fmt: skip' keeps code out of the formatter; name structures "
        "instead of lining up long argument lists by hand"
    )
