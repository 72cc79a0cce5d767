"""docs/quickstart.md is true: its install commands install from the repository, and every
output it shows is what the command prints in a real run.

Each shown output is a block

    ```text
    $ COMMAND
    what it prints
    ```

The command runs (in order, in one scratch folder, on a 100-column terminal) and its
output, stdout and stderr as a terminal shows them (Python warnings left out: they name
this machine's paths), must match the block, where a line
`[...]` stands for any number of lines and `[...]` inside a line for any text. For
`dialog-gym play` the lines after `you> ` are what the user types.

When the judge (or anything else that changes what the commands print) changes, refresh
the blocks from real runs and review the diff:

    python tests/test_quickstart.py --update

The update keeps each block's command and typed lines, cuts lines longer than 110
characters, replaces timings with `[...]`, and elides the middle of long outputs
(`KEEP`). The prose around the blocks is not touched: reread it after an update.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "docs" / "quickstart.md"
BLOCK = re.compile(r"```text\n\$ (?P<command>[^\n]+)\n(?P<body>.*?)```", re.DOTALL)
ELIDED = "[...]"
PROMPT = "you> "
COLUMNS = 100
MAX_LINE = 110
# Parts of an output that differ from run to run, shown as [...].
VOLATILE = (
    re.compile(r"\[\d\d:\d\d<[^\]]*\]"),  # tqdm: [00:21<00:00, 10.83s/it, ...]
    re.compile(r"\d+ new episodes in \d+\.\d+ s \(\d+\.\d+/s\)"),  # the eval's throughput (below its table)
)
# Outputs shown by their first and last lines only: (head, tail).
KEEP = {"dialog-gym demo": (6, 4)}


@dataclass
class Shown:
    command: str
    lines: list[str]
    start: int  # where the block's body starts and ends in the document
    end: int

    @property
    def typed(self) -> list[str]:
        """What the user types (`you> ` lines of a `dialog-gym play` transcript)."""
        return [line[len(PROMPT):] for line in self.lines if line.startswith(PROMPT)]


def shown_outputs(text: str) -> list[Shown]:
    return [Shown(m["command"], m["body"].splitlines(), m.start("body"), m.end("body")) for m in BLOCK.finditer(text)]


def argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "dialog-gym":
        return [sys.executable, "-m", "dialog_gym", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *(str(ROOT / w) if w.startswith("examples/") else w for w in words[1:])]
    raise ValueError(f"no way to run {command!r}")


_PROGRESS_BAR = re.compile(r"^(?P<label>[^|]*?):\s+\d+%\|")


def terminal_view(output: str, typed: list[str]) -> list[str]:
    """What a terminal shows: typed lines after their prompts, carriage-return overwrites
    resolved, and a progress bar that reports line by line (off a terminal) as its last state."""
    if typed:
        parts = output.split(PROMPT)
        output = parts[0] + "".join(
            PROMPT + (typed[i] + "\n" if i < len(typed) else "") + part for i, part in enumerate(parts[1:])
        )
    lines: list[str] = []
    for raw in output.split("\n"):
        line = raw.rsplit("\r", 1)[-1].rstrip()
        bar = _PROGRESS_BAR.match(line)
        previous = _PROGRESS_BAR.match(lines[-1]) if lines else None
        if bar and previous and bar["label"] == previous["label"]:
            lines[-1] = line  # the same bar, updated
            continue
        if bar and lines and not lines[-1]:
            lines.pop()  # the blank line a bar leaves before itself off a terminal
        lines.append(line)
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


_WARNING = re.compile(r"^\S+\.py:\d+: \w*Warning: ")


def without_warnings(lines: list[str]) -> list[str]:
    """`lines` without Python warnings (`FILE:LINE: XWarning: ...` and the source line
    under it): they name this machine's paths, and a newer env version is not the point."""
    out: list[str] = []
    skip_source = False
    for line in lines:
        if _WARNING.match(line):
            skip_source = True
            continue
        if skip_source and line.startswith("  "):
            skip_source = False
            continue
        skip_source = False
        out.append(line)
    return out


def run(shown: Shown, cwd: Path) -> list[str]:
    env = {**os.environ, "COLUMNS": str(COLUMNS), "PYTHONUNBUFFERED": "1"}
    stdin = "".join(line + "\n" for line in shown.typed)
    result = subprocess.run(argv(shown.command), input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=cwd, env=env, timeout=600)
    lines = without_warnings(terminal_view(result.stdout, shown.typed))
    assert result.returncode == 0, f"$ {shown.command} exited {result.returncode}:\n" + "\n".join(lines[-30:])
    return lines


def _pattern(line: str) -> re.Pattern[str]:
    parts = [re.escape(part) for part in re.split(r"\s*\[\.\.\.\]\s*", line)]
    return re.compile(r"(?:\s.*?\s|.*?)".join(parts) if len(parts) > 1 else parts[0])


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` fits `expected`, a line `[...]` standing for any lines (none included)."""
    patterns = [None if line.strip() == ELIDED else _pattern(line.rstrip()) for line in expected]
    reachable = {0}  # positions in `actual` after matching a prefix of `expected`
    for pattern in patterns:
        if pattern is None:
            reachable = set(range(min(reachable), len(actual) + 1)) if reachable else set()
        else:
            reachable = {i + 1 for i in reachable if i < len(actual) and pattern.fullmatch(actual[i])}
        if not reachable:
            return False
    return len(actual) in reachable


def render(shown: Shown, actual: list[str]) -> list[str]:
    """`actual` as the document shows it (see the module docstring)."""
    lines = []
    for line in actual:
        for volatile in VOLATILE:
            line = volatile.sub(ELIDED, line)
        if len(line) > MAX_LINE and not (line.startswith(PROMPT) and line[len(PROMPT):] in shown.typed):
            cut = line.rfind(" ", 0, MAX_LINE - len(ELIDED) - 1)
            line = line[: cut if cut > MAX_LINE // 2 else MAX_LINE - len(ELIDED) - 1].rstrip() + " " + ELIDED
        lines.append(line)
    keep = next((k for prefix, k in KEEP.items() if shown.command.startswith(prefix)), None)
    if keep is not None and len(lines) > sum(keep) + 1:
        head, tail = keep
        lines = [*lines[:head], ELIDED, *lines[-tail:]]
    return lines


def _needs(shown: Shown) -> str | None:
    """Why a shown command cannot run here, or None."""
    if "train_grpo.py" in shown.command and importlib.util.find_spec("torch") is None:
        return "the train extra (torch) is not installed"
    if shown.command.startswith("dialog-gym report") and importlib.util.find_spec("matplotlib") is None:
        return "the report extra (matplotlib) is not installed"
    return None


def update() -> None:
    text = QUICKSTART.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="quickstart-") as tmp:
        outputs = []
        for shown in shown_outputs(text):
            why = _needs(shown)
            if why is not None:
                raise SystemExit(f"cannot refresh `$ {shown.command}`: {why}")
            print(f"$ {shown.command}", file=sys.stderr)
            outputs.append(render(shown, run(shown, Path(tmp))))
    for shown, lines in reversed(list(zip(shown_outputs(text), outputs))):  # from the end: offsets stay valid
        text = text[: shown.start] + "".join(line + "\n" for line in lines) + text[shown.end :]
    QUICKSTART.write_text(text, encoding="utf-8")
    print(f"rewrote {len(outputs)} outputs in {QUICKSTART}; review the diff", file=sys.stderr)


# -- the tests ------------------------------------------------------------------------------
SHOWN = shown_outputs(QUICKSTART.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def outputs() -> dict[str, list[str] | str]:
    """Every shown command run in order in one folder (the report reads the eval's run)."""
    results: dict[str, list[str] | str] = {}
    with tempfile.TemporaryDirectory(prefix="quickstart-") as tmp:
        for shown in SHOWN:
            results[shown.command] = _needs(shown) or run(shown, Path(tmp))
    return results


@pytest.mark.parametrize("shown", SHOWN, ids=[s.command.split(" --")[0] for s in SHOWN])
def test_each_shown_output_is_what_the_command_prints(shown, outputs):
    actual = outputs[shown.command]
    if isinstance(actual, str):
        pytest.skip(actual)
    assert matches(shown.lines, actual), (
        f"docs/quickstart.md shows for `$ {shown.command}`:\n" + "\n".join(shown.lines)
        + "\n\nbut it prints:\n" + "\n".join(render(shown, actual))
        + "\n\n(refresh with `python tests/test_quickstart.py --update` and review the diff)"
    )


def test_the_quickstart_shows_several_commands():
    commands = [s.command.split()[:2] for s in SHOWN]
    assert ["dialog-gym", "play"] in commands and ["dialog-gym", "eval"] in commands and len(commands) >= 5


def test_install_commands_install_from_the_repository():
    text = QUICKSTART.read_text(encoding="utf-8")
    install = text[text.index("## Install") : text.index("## Your first hour")]
    commands = [line.split("#")[0].strip() for block in re.findall(r"```bash\n(.*?)```", install, re.DOTALL)
                for line in block.splitlines()]
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = pyproject[pyproject.index("[project.optional-dependencies]") :].split("\n[", 1)[0]
    extras = set(re.findall(r"^([\w-]+) = \[", section, re.MULTILINE))
    assert {"llm", "report", "dev"} <= extras
    pips = [part.strip() for command in commands for part in command.split("&&") if part.strip().startswith("pip install")]
    assert pips and any(p == "pip install -e ." for p in pips)
    for pip in pips:
        words = shlex.split(pip)[2:]
        if "--no-deps" in words:  # a pinned helper package, as .ci/run installs it
            assert (ROOT / ".ci" / "run").read_text().count(words[-1]) >= 1
            continue
        assert words[0] == "-e", f"{pip!r} installs from a registry; dialog-gym is not on PyPI"
        requested = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", words[1])
        assert requested, f"{pip!r}: expected -e . or -e .[extras]"
        assert set(filter(None, (requested.group(1) or "").split(","))) <= extras
    assert any(c.startswith("git clone ") for c in commands)
    assert not re.search(r"pip install [\"']?dialog-gym\b", text)


def test_the_python_example_runs(tmp_path):
    text = QUICKSTART.read_text(encoding="utf-8")
    code = re.search(r"\*\*3\. The same in Python\.\*\*.*?```python\n(.*?)```", text, re.DOTALL).group(1)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "reward" in result.stdout and "ended by" in result.stdout


def test_the_matcher_reads_elisions_as_documented():
    assert matches(["a", ELIDED, "d"], ["a", "b", "c", "d"]) and matches(["a", ELIDED, "b"], ["a", "b"])
    assert matches(["user  it was [...] awful. [...]"], ["user  it was really quite awful. I know."])
    assert not matches(["a", "d"], ["a", "b", "d"]) and not matches(["a [...] z"], ["b c z"])
    assert terminal_view("bar 1\rbar 2\nyou> answer\nyou> ", ["hi", "/quit"]) == ["bar 2", "you> hi", "answer", "you> /quit"]
    assert terminal_view("\nrun:   0%|  | 0/2\nrun:  50%|# | 1/2\nrun: 100%|##| 2/2\ndone", []) == ["run: 100%|##| 2/2", "done"]
    assert without_warnings(["/x/registration.py:511: DeprecationWarning: old", "  logger.deprecation(", "ok"]) == ["ok"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python tests/test_quickstart.py --update   (then review the diff of docs/quickstart.md)")
    update()
