"""The pipeline, report and capture commands fail loudly and early: one line on stderr and
a non-zero exit, before Spark starts, for input that holds nothing to read."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_specgen.cli import build_parser, main
from kafka_specgen.pipeline.job import Summary


def run_without_spark(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in a Python where pyspark cannot be imported: what fails here,
    fails before Spark would start."""
    script = (
        "import sys; sys.modules['pyspark'] = None\n"
        "from kafka_specgen.cli import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def missing(folder: Path) -> Path:
    return folder / "does" / "not" / "exist"


def empty_folder(folder: Path) -> Path:
    return folder


def empty_capture(folder: Path) -> Path:
    (folder / "empty.jsonl").write_text("")
    return folder


def capture_without_frames(folder: Path) -> Path:
    (folder / "no_frames.jsonl").write_text('{"ts": 1, "frame": ""}\nnot json\n')
    return folder


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (missing, "no such file or folder"),
        (empty_folder, "no capture files (.jsonl), pcap files or broker request logs in"),
        (empty_capture, "no Kafka frames"),
        (capture_without_frames, "no Kafka frames"),
    ],
)
def test_pipeline_input_with_nothing_to_read(
    tmp_path: Path, make: Callable[[Path], Path], message: str
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    path = make(folder)
    result = run_without_spark(["pipeline", "--input", str(path), "--out", "out"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_pipeline_help_names_every_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["pipeline", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for table in (
        "usage/",
        "conformance/",
        "messages/",
        "errors/",
        "batches/",
        "record_usage/",
        "readiness/",
        "report.html",
    ):
        assert table in text, table
    assert build_parser() is not None


def test_report_on_a_folder_without_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no usage/ or conformance/ table" in err


def test_capture_on_a_busy_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        args = [
            "capture",
            "--listen",
            f"127.0.0.1:{port}",
            "--upstream",
            "127.0.0.1:9",
            "--out",
            str(tmp_path / "c.jsonl"),
            "--duration",
            "1",
        ]
        assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in err


def summary(frames: int, unknown: int) -> Summary:
    return Summary(
        package="p",
        out="out",
        records=False,
        frames_read=frames,
        decoded=frames - unknown,
        errors=unknown,
        unknown_api_errors=unknown,
        reencoded_equal=0,
        mismatches=0,
        batches_read=0,
        batches=0,
        batch_errors=0,
        nothing_lost=True,
        usage_rows=0,
        conformance_rows=0,
        record_usage_rows=0,
        message_tables=[],
        messages_without_schema=[],
        readiness=None,
        readiness_rows=0,
        decode_s=1.0,
        job_s=1.0,
    )


def test_a_summary_of_mostly_unknown_apis_says_to_pass_specs() -> None:
    assert "hint:" in summary(212, 138).text()
    assert "--specs PATH" in summary(212, 138).text()
    assert "hint:" not in summary(212, 100).text()


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "handmade_requests.jsonl"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target-release", "9.9"], "no Kafka 9.9 in the release table"),
        (["--target-release", "4.0", "--target-specs", "x"], "not both"),
        (["--fail-on-unready"], "--fail-on-unready needs --target-release or --target-specs"),
    ],
)
def test_pipeline_target_mistakes(tmp_path: Path, extra: list[str], message: str) -> None:
    args = ["pipeline", "--input", str(GOLDEN), "--out", "out", *extra]
    result = run_without_spark(args, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--release", "2.3"], "kafka-specgen pipeline: Kafka's JSON specs start at 2.4: "),
        (["--release", "4.9"], "kafka-specgen pipeline: no bundled spec data for Kafka 4.9.0"),
        (["--release", "trunk"], "kafka-specgen pipeline: 'trunk' is not a Kafka release"),
    ],
)
def test_pipeline_release_mistakes(tmp_path: Path, extra: list[str], message: str) -> None:
    """A decode release the bundle cannot serve: one line, before Spark starts."""
    args = ["pipeline", "--input", str(GOLDEN), "--out", "out", *extra]
    result = run_without_spark(args, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(message), result.stderr


def test_pipeline_takes_a_release_to_decode_with(tmp_path: Path) -> None:
    """``--release 3.9`` is accepted: the run goes on until it needs Spark; with
    ``--specs`` too, it is refused."""
    args = ["pipeline", "--input", str(GOLDEN), "--out", "out", "--release", "3.9"]
    result = run_without_spark(args, tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("kafka-specgen pipeline: needs pyspark"), result.stderr
    result = run_without_spark([*args, "--specs", "specs"], tmp_path)
    assert result.returncode == 2
    assert "argument --specs: not allowed with argument --release" in result.stderr


def test_an_executor_failure_ends_in_one_line(tmp_path: Path) -> None:
    """Executors whose Python lacks pyarrow (the interpreter the venv was made from): the
    job fails in the executors' Python workers, and the command says why in one line,
    keeping the Java and Python traces in a file."""
    bare = getattr(sys, "_base_executable", None)
    probe = subprocess.run([bare or "", "-c", "import pyarrow"], capture_output=True)
    if not bare or probe.returncode == 0:
        pytest.skip("no Python without pyarrow to run the executors with")
    env = {**os.environ, "PYSPARK_PYTHON": bare}
    result = subprocess.run(
        [sys.executable, "-m", "kafka_specgen.cli", "pipeline", "--input", str(GOLDEN)]
        + ["--out", "out", "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 4, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    line = result.stderr.strip()
    assert line.startswith("kafka-specgen pipeline: the Spark job failed: ")
    assert "No module named 'pyarrow'" in line, line
    trace = Path(line.rsplit("(traces in ", 1)[1].rstrip(")"))
    assert "Traceback" in trace.read_text()
    trace.unlink()
