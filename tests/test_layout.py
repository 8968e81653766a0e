"""The library's shape, read from its imports: layers that import only downward, no private
name shared across modules, the cached layer holding exactly what cache keys cover, and no
module over 500 lines (a newcomer reads a module whole before changing one experiment)."""

import ast
import importlib
from pathlib import Path

import pytest

import normbook
from normbook.runtime import cache

ROOT = Path(normbook.__file__).parent
BOOK = ROOT.parents[1] / "book"
MAX_LINES = 500

# Bottom to top; a module may import its own layer and those below it, never one above.
# Inside a paper: its data readers and the paper's own numbers, the cached computation, the
# measures, the orchestration of runs, the shared grading, then the chapters' own modules.
LAYERS = ["runtime", "grading", "pages", "data", "cached", "measures", "runs", "paper grading",
          "chapters", "book_pages", "publish", "tools"]  # fmt: skip


def layer(module: str) -> str:
    parts = module.split(".")[1:]
    if parts and parts[0] in ("paper_a", "paper_b"):
        sub = parts[1] if len(parts) > 1 else ""
        if sub in ("data", "paper_values"):
            return "data"
        if sub in ("cached", "measures", "runs"):
            return sub
        return "paper grading" if sub == "grading" else "chapters"
    return parts[0] if parts else "top"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def is_module(name: str) -> bool:
    base = ROOT.parent / name.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports(path: Path):
    """(imported normbook module, names taken from it, local aliases bound to modules) of one
    file; relative imports are resolved."""
    tree = ast.parse(path.read_text())
    here = module_name(path) if path.is_relative_to(ROOT) else "book"
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            if not base.startswith("normbook"):
                continue
            for a in node.names:
                if is_module(f"{base}.{a.name}"):
                    found.append((f"{base}.{a.name}", []))
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
                else:
                    found.append((base, [a.name]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.startswith("normbook")]
    return tree, found, aliases


LIBRARY = sorted(ROOT.rglob("*.py"))
CHAPTERS = sorted(BOOK.glob("*.py"))


def private_uses(path: Path) -> list[str]:
    tree, found, aliases = imports(path)
    bad = [f"{m}:{n}" for m, names in found for n in names
           if n.startswith("_") and not n.startswith("__")]  # fmt: skip
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):  # fmt: skip
            bad.append(f"{aliases[node.value.id]}.{node.attr}")
    return bad


@pytest.mark.parametrize("path", LIBRARY + CHAPTERS, ids=lambda p: p.name)
def test_no_private_name_crosses_a_module(path):
    """What two modules share is public in the lower one."""
    assert not private_uses(path), f"{path.name} uses private names: {private_uses(path)}"


def test_the_privacy_check_sees_both_forms(tmp_path):
    planted = ROOT / "grading" / "_planted_privacy.py"
    planted.write_text(
        "from normbook.grading.stats import _hidden\nfrom normbook.grading import claims\n"
        "x = claims._secret\n"
    )
    try:
        assert private_uses(planted) == ["normbook.grading.stats:_hidden",
                                         "normbook.grading.claims._secret"]  # fmt: skip
    finally:
        planted.unlink()


def upward(path: Path) -> list[str]:
    here = module_name(path)
    if here == "normbook":  # the package's docstring and version
        return []
    rank = LAYERS.index(layer(here))
    paper = here.split(".")[1] if here.split(".")[1] in ("paper_a", "paper_b") else None
    bad = []
    for m, _ in imports(path)[1]:
        if m == "normbook":
            continue
        other = m.split(".")[1]
        if LAYERS.index(layer(m)) > rank:
            bad.append(f"{m} ({layer(m)} above {layer(here)})")
        elif paper and other in ("paper_a", "paper_b") and other != paper:
            bad.append(f"{m} (the other paper)")
    return bad


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: module_name(p))
def test_no_import_from_a_lower_layer_to_a_higher_one(path):
    assert not upward(path), f"{module_name(path)} imports upward: {upward(path)}"


def test_every_module_has_a_layer():
    assert {layer(module_name(p)) for p in LIBRARY} - {"top"} <= set(LAYERS)


def test_the_cached_layers_hold_exactly_what_cache_keys_cover():
    """A module of ``paper_*/cached`` is covered by some cache key (editing it retrains); every
    module a key covers sits in a cached, measures or data layer, or in the run-time framework
    or the grading core (seeding, statistics)."""
    for name in ("paper_a.cached.cache_keys", "paper_a.runs.localization", "paper_a.cached.unet",
                 "paper_a.cached.grid2d", "paper_a.measures.detector_calibration",
                 "paper_b.cached.analysis", "paper_b.cached.stress_analyses",
                 "paper_b.cached.projections", "book_pages.methods"):  # fmt: skip
        importlib.import_module(f"normbook.{name}")
    covered = {cache.code_name(c).split(":")[0] for s in cache.STEPS.values() for c in s.code}
    covered = {c if is_module(f"normbook.{c}") else c.rpartition(".")[0] for c in covered}
    cached = {module_name(p).removeprefix("normbook.") for p in LIBRARY
              if layer(module_name(p)) == "cached" and p.name not in ("__init__.py",)}  # fmt: skip
    cached -= {"paper_a.cached.cache_keys", "paper_b.cached.cache_keys"}  # the declarations
    assert cached <= covered, f"in a cached layer, covered by no key: {cached - covered}"
    allowed = ("paper_a.cached.", "paper_b.cached.", "paper_a.measures.", "paper_b.data.",
               "runtime.", "grading.", "book_pages.methods")  # fmt: skip
    outside = {c for c in covered if not c.startswith(allowed)}
    assert not outside, f"covered by a key outside the computing layers: {outside}"


def test_no_library_module_is_over_500_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in LIBRARY
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"


def test_no_import_cycle_between_modules():
    """Modules of one layer import each other in one direction only (a cycle hides which one
    is the lower; the tools once imported each other)."""
    graph = {module_name(p): {m for m, _ in imports(p)[1]} for p in LIBRARY}
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            m = todo.pop()
            assert m != start, f"{start} imports itself through {sorted(seen)}"
            if m not in seen and m in graph:
                seen.add(m)
                todo += graph[m]
