"""The import graph runs one way: no module imports a layer above its own.

Layers, bottom-up: core; personas and backends; simulators; the dialogue session; envs (and
the baseline agents); episodes; rollouts, with the adapters beside them (multiagent,
integrations, the judge's red team, the test server); eval; cli; and on top the package's
own `__init__`, which registers the replay simulator. So episodes < rollouts < eval < cli: the records know
nothing of the engine that plays them, the engine nothing of the benchmark, the benchmark
nothing of the command line. Every import counts, including those inside functions, which
a plain "import it and look at sys.modules" check would miss.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dialog_gym"

# (layer, module prefixes), bottom-up. A module belongs to the layer of its longest prefix.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("dialog_gym._version", "dialog_gym._async", "dialog_gym._jsonl", "dialog_gym._options",
              "dialog_gym._resources", "dialog_gym.types", "dialog_gym.mood", "dialog_gym.text_guard", "dialog_gym._text_cache")),
    ("personas, backends", ("dialog_gym.personas", "dialog_gym.backends")),
    ("simulators", ("dialog_gym.simulators",)),
    ("session", ("dialog_gym.session",)),
    ("envs, agents", ("dialog_gym.envs", "dialog_gym.agents", "dialog_gym.listening_agent", "dialog_gym._listening_phrases",
                      "dialog_gym._user_reading")),
    ("episodes", ("dialog_gym.episodes", "dialog_gym._progress")),
    ("rollouts, adapters", ("dialog_gym.rollouts", "dialog_gym.multiagent", "dialog_gym.integrations",
                            "dialog_gym.redteam", "dialog_gym.testing")),
    ("eval", ("dialog_gym.eval",)),
    ("cli", ("dialog_gym.cli", "dialog_gym.__main__")),
    ("package", ("dialog_gym",)),
]


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if prefix == "dialog_gym" and module != "dialog_gym":
                    continue  # the package root names only itself
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) of every dialog_gym import in `source`, relative ones resolved."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
    return [(line, name) for line, name in found if name == "dialog_gym" or name.startswith("dialog_gym.")]


def upward_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    own = layer_of(module)
    assert own is not None, f"{module} belongs to no layer: add it to LAYERS in tests/test_layers.py"
    problems = []
    for line, target in imported_modules(source, module, is_package):
        theirs = layer_of(target)
        assert theirs is not None, f"{module}:{line} imports {target}, which belongs to no layer"
        if theirs > own:
            problems.append(f"{module}:{line} ({LAYERS[own][0]}) imports {target} ({LAYERS[theirs][0]})")
    return problems


def package_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_belongs_to_a_layer():
    unplaced = [module_name(p) for p in package_modules() if layer_of(module_name(p)) is None]
    assert not unplaced, f"modules in no layer (add them to LAYERS): {unplaced}"


def test_no_module_imports_a_layer_above_its_own():
    problems = []
    for path in package_modules():
        problems += upward_imports(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")
    assert not problems, "upward imports:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("module", "source", "bad"),
    [
        ("dialog_gym.simulators.replay", "def f():\n    from dialog_gym.session import DialogSession\n", True),
        ("dialog_gym.episodes.record", "from dialog_gym.session import DialogSession\n", False),
        ("dialog_gym.simulators.rule", "from ..envs import spaces\n", True),
        ("dialog_gym.personas.persona", "import dialog_gym.types\n", False),
        ("dialog_gym.mood", "import dialog_gym\n", True),
        ("dialog_gym.episodes.replay", "from dialog_gym.rollouts import arollout\n", True),
        ("dialog_gym.rollouts", "def f():\n    from dialog_gym.eval.runner import aevaluate\n", True),
        ("dialog_gym.eval.runner", "from dialog_gym.cli.eval import simulator_options\n", True),
        ("dialog_gym.cli.eval", "from dialog_gym.eval.runner import aevaluate\n", False),
        ("dialog_gym.eval.runner", "from dialog_gym.rollouts import arollout\n", False),
    ],
)
def test_the_checker_sees_lazy_relative_and_plain_imports(module, source, bad):
    assert bool(upward_imports(source, module)) == bad


def test_importing_the_package_pulls_in_no_optional_integration():
    """`import dialog_gym` stays light: no trainer framework, no PettingZoo, no torch."""
    code = (
        "import sys, dialog_gym\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'trl', 'pettingzoo', 'verl', 'openai') if m in sys.modules)\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == ""
