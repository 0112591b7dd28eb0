"""The pre-commit and CI recipes of docs/spec-bumps.md work as written: they name this
version and a hook this repo ships, and the command they run passes on an up-to-date
package and fails on a stale one."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_specgen import __version__

ROOT = Path(__file__).resolve().parents[2]
RECIPES = (ROOT / "docs" / "spec-bumps.md").read_text()
HOOKS = (ROOT / ".pre-commit-hooks.yaml").read_text()


def yaml_blocks(text: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", text, re.S)


def specgen() -> list[str]:
    """The installed command, as a recipe runs it."""
    found = shutil.which("kafka-specgen", path=str(Path(sys.executable).parent))
    assert found, "kafka-specgen is not installed next to this interpreter"
    return [found]


def hook_entry(hook_id: str) -> list[str]:
    """The ``entry`` of the hook ``hook_id`` in .pre-commit-hooks.yaml."""
    hooks = re.split(r"^- id: ", HOOKS, flags=re.M)[1:]
    for hook in hooks:
        if hook.split("\n", 1)[0].strip() == hook_id:
            match = re.search(r"^\s+entry: (.+)$", hook, re.M)
            assert match, f"hook {hook_id} has no entry"
            return shlex.split(match.group(1))
    raise AssertionError(f"no hook {hook_id!r} in .pre-commit-hooks.yaml")


def in_folder(args: list[str], folder: Path) -> list[str]:
    """The recipe's arguments, with its ``specs`` folder standing for this repo's specs and
    its output folder inside ``folder``."""
    out = []
    for previous, arg in zip(["", *args], args):
        if previous == "--specs":
            out.append(str(ROOT / "specs"))
        elif previous == "--out":
            out.append(str(folder / arg))
        else:
            out.append(arg)
    return out


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def stale_and_fresh_exit_codes(
    command: list[str], args: list[str], folder: Path
) -> tuple[int, int]:
    """Exit codes of ``command`` on a freshly generated package, then after one edit."""
    generate = [a for a in args if a != "--check"]
    made = run([*specgen(), "generate", *generate])
    assert made.returncode == 0, made.stderr
    fresh = run(command).returncode
    out = Path(args[args.index("--out") + 1]) / args[args.index("--package") + 1]
    registry = out / "registry.py"
    registry.write_text(registry.read_text() + "\n# edited by hand\n")
    stale = run(command)
    assert "out of date" in stale.stderr
    return fresh, stale.returncode


def test_pre_commit_recipe_pins_this_version_and_runs_a_shipped_hook(tmp_path: Path) -> None:
    [recipe] = [b for b in yaml_blocks(RECIPES) if "kafka-specgen-check" in b]
    rev = re.search(r"^\s*rev: (\S+)$", recipe, re.M)
    assert rev and rev.group(1) == f"v{__version__}"
    # the example in the hooks file's own header says the same
    assert f"rev: v{__version__}" in HOOKS
    hook_id = re.search(r"- id: (\S+)", recipe)
    args = re.search(r"args: \[(.*)\]", recipe)
    assert hook_id and args
    recipe_args = in_folder([a.strip() for a in args.group(1).split(",")], tmp_path)
    entry = hook_entry(hook_id.group(1))
    assert entry[0] == "kafka-specgen"
    command = [*specgen(), *entry[1:], *recipe_args]
    assert stale_and_fresh_exit_codes(command, recipe_args, tmp_path) == (0, 1)


def test_ci_recipe_pins_this_version_and_its_check_fails_on_a_stale_package(
    tmp_path: Path,
) -> None:
    [recipe] = [b for b in yaml_blocks(RECIPES) if "pip install kafka-specgen" in b]
    steps = re.findall(r"^- run: (.+)$", recipe, re.M)
    assert len(steps) == 2, recipe
    assert steps[0] == f"pip install kafka-specgen=={__version__}"
    check = shlex.split(steps[1])
    assert check[0] == "kafka-specgen" and "--check" in check
    args = in_folder(check[2:], tmp_path)
    command = [*specgen(), check[1], *args]
    assert stale_and_fresh_exit_codes(command, args, tmp_path) == (0, 1)


@pytest.mark.parametrize("text", [RECIPES, HOOKS], ids=["spec-bumps.md", "hooks"])
def test_no_recipe_names_another_version(text: str) -> None:
    named = set(re.findall(r"(?:rev: v|kafka-specgen==)(\d+\.\d+\.\d+)", text))
    assert named <= {__version__}, named
