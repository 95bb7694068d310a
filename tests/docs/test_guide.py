"""The plugin author guide's example runs as written."""

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugin-author-guide.md"


def test_guide_example_runs_and_passes_the_kit(fresh_registry, capsys):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    example = next(b for b in blocks if "class ForcedResponse" in b)
    exec(compile(example, str(GUIDE), "exec"), {"__name__": "guide"})
    printed = capsys.readouterr().out
    assert "exact_privacy: ok" in printed and "unbiased: ok" in printed and "FAILED" not in printed


def test_guide_names_every_hook_with_its_signature():
    text = GUIDE.read_text()
    from ldpest.contract import hookspecs

    for hook in ("register_mechanisms", "register_estimators", "register_bases"):
        assert f"def {hook}(register)" in text and hasattr(hookspecs, hook)
