"""The command line's manners: progress only on a terminal, one-line errors, help texts."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_specgen.cli import TerminalProgress, build_parser, main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_CAPTURE = ROOT / "tests" / "golden" / "handmade_requests.jsonl"


def test_progress_is_rewritten_in_place_and_ends_the_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    progress = TerminalProgress(after=0)
    for done in (1, 2, 3):
        progress(done, 3)
    err = capsys.readouterr().err
    assert err == "\rformatting 1/3 modules\rformatting 2/3 modules\rformatting 3/3 modules\n"


def test_progress_waits_until_a_run_is_long(capsys: pytest.CaptureFixture[str]) -> None:
    progress = TerminalProgress(after=3600)
    progress(1, 2)
    progress(2, 2)
    assert capsys.readouterr().err == ""


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kafka_specgen.cli", "generate", "--specs", str(ROOT / "specs")]
        + ["--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"KAFKA_SPECGEN_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "formatting" not in result.stderr
    assert "kafka_messages" in result.stdout


def test_every_command_has_help() -> None:
    parser = build_parser()
    out = io.StringIO()
    parser.print_help(out)
    for command in ("generate", "capture", "broker-versions", "diff", "pipeline"):
        assert command in out.getvalue()
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0


def test_every_option_of_every_command_has_help() -> None:
    import argparse

    commands = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [
        f"{name} {'/'.join(action.option_strings) or action.dest}"
        for group in commands
        for name, sub in group.choices.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction)
        and (not action.help or action.help == argparse.SUPPRESS)
    ]
    assert len(commands) == 1 and len(commands[0].choices) >= 6
    assert missing == []


def test_a_bad_spec_is_one_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "FooRequest.json").write_text(
        '{"apiKey": 1, "type": "request", "name": "FooRequest", "validVersions": "0",'
        ' "flexibleVersions": "none", "fields": [{"name": "X", "type": "int32",'
        ' "versions": "0+", "nulableVersions": "0+"}]}'
    )
    code = main(["generate", "--specs", str(tmp_path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert "FooRequest.json" in err and "nullableVersions" in err and "[rule: unknown-key]" in err


def test_pipeline_without_the_spark_extra_says_which_extra_to_install(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['pyspark'] = None\n"  # as if pyspark were not installed
        "from kafka_specgen.cli import main\n"
        f"sys.exit(main(['pipeline', '--input', {str(GOLDEN_CAPTURE)!r}, '--out', "
        f"{str(tmp_path / 'out')!r}]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "pip install 'kafka-specgen[spark]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_version_comes_from_the_package_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.strip() == f"kafka-specgen {version('kafka-specgen')}"


def test_check_names_the_tools_own_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = ROOT / "specs"
    assert main(["generate", "--specs", str(specs), "--out", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert "make generate" not in err
    assert f"kafka-specgen generate --specs {specs} --out {tmp_path}" in err


def run_without_black(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in a Python where black cannot be imported (as after a plain
    ``pip install kafka-specgen``)."""
    script = (
        "import sys; sys.modules['black'] = None\n"
        "from kafka_specgen.cli import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_generation_needs_no_black_and_black_changes_nothing(tmp_path: Path) -> None:
    specs = str(ROOT / "specs")
    plain = run_without_black(["generate", "--specs", specs, "--out", "plain"], tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert main(["generate", "--specs", specs, "--out", str(tmp_path / "black"), "--black"]) == 0
    files = sorted(p.relative_to(tmp_path / "plain") for p in (tmp_path / "plain").rglob("*.py"))
    assert len(files) > 20
    for name in files:
        assert (tmp_path / "plain" / name).read_bytes() == (
            tmp_path / "black" / name
        ).read_bytes(), name
        assert (tmp_path / "plain" / name).read_bytes() == (
            ROOT / "generated" / name
        ).read_bytes(), name


def test_black_option_without_black_says_what_to_install(tmp_path: Path) -> None:
    args = ["generate", "--specs", str(ROOT / "specs"), "--out", "o", "--black"]
    result = run_without_black(args, tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "pip install 'kafka-specgen[black]'" in result.stderr


def test_a_template_bug_is_one_clear_error() -> None:
    from kafka_specgen.format import GeneratedCodeError, format_files
    from kafka_specgen.render import GeneratedFile

    broken = GeneratedFile("broken.py", "def f(:\n    pass\n")
    with pytest.raises(GeneratedCodeError, match=r"generated broken\.py is not valid Python"):
        format_files([GeneratedFile("fine.py", "x = 1\n"), broken])


def bad_request(name: str, key: int, field: str) -> str:
    return (
        f'{{"apiKey": {key}, "type": "request", "name": "{name}", "validVersions": "0",'
        ' "flexibleVersions": "none", "fields": [' + field + "]}"
    )


def test_every_independent_spec_error_is_reported_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one file with two schema mistakes, one with a model mistake, a pair missing its half
    (tmp_path / "TwoMistakesRequest.json").write_text(
        bad_request(
            "TwoMistakesRequest",
            1,
            '{"name": "A", "type": "int32", "versions": "0+", "nulableVersions": "0+"},'
            ' {"name": "B", "type": "int33", "versions": "0+"}',
        )
    )
    (tmp_path / "BadDefaultRequest.json").write_text(
        bad_request(
            "BadDefaultRequest",
            2,
            '{"name": "C", "type": "int8", "versions": "0+", "default": "999"}',
        )
    )
    code = main(["generate", "--specs", str(tmp_path), "--out", str(tmp_path / "out")])
    lines = capsys.readouterr().err.splitlines()
    assert code == 1
    assert all(line.startswith("kafka-specgen: error: ") for line in lines)
    schema = [line for line in lines if "TwoMistakesRequest.json" in line]
    assert len(schema) == 2, lines
    assert "[rule: unknown-key]" in schema[0] and "int33" in schema[1]
    # the schema errors stop the run before the model looks at the files
    assert not any("BadDefaultRequest" in line for line in lines)
    (tmp_path / "TwoMistakesRequest.json").unlink()
    (tmp_path / "OtherRequest.json").write_text(
        bad_request(
            "OtherRequest", 3, '{"name": "D", "type": "int16", "versions": "0+", "default": "x"}'
        )
    )
    code = main(["generate", "--specs", str(tmp_path), "--out", str(tmp_path / "out")])
    lines = capsys.readouterr().err.splitlines()
    assert code == 1
    assert len([line for line in lines if "[rule: bad-default]" in line]) == 2, lines


def test_spec_errors_are_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(60):
        (tmp_path / f"R{n}Request.json").write_text(
            bad_request(f"R{n}Request", n, '{"name": "A", "type": "int33", "versions": "0+"}')
        )
    assert main(["generate", "--specs", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 51 and lines[-1] == "kafka-specgen: error: ... and 10 more spec errors"
