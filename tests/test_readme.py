"""The README's first screen is true: its quick-start code prints what the README shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _quick_start() -> tuple[str, str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Quick start") :]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    printed = re.search(r"prints\n\n```text\n(.*?)```", section, re.DOTALL).group(1)
    return code, printed


def test_the_quick_start_prints_what_the_readme_shows(tmp_path):
    code, printed = _quick_start()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed


def test_the_quick_start_is_in_one_language():
    code, printed = _quick_start()
    assert 'language="en"' in code
    assert not re.search(r"[\u4e00-\u9fff]", printed)
