"""Kafka release names: parsing, the padded form, lines and order."""

from __future__ import annotations

import pytest

from kafka_specgen.release_names import Release, ReleaseNameError


@pytest.mark.parametrize(
    "text, parts, full, short",
    [
        ("4.0", (4, 0, 0, 0), "4.0.0", "4.0"),
        ("4.1.1", (4, 1, 1, 0), "4.1.1", "4.1"),
        ("0.10.2", (0, 10, 2, 0), "0.10.2.0", "0.10.2"),
        ("0.10.2.1", (0, 10, 2, 1), "0.10.2.1", "0.10.2"),
        (" 2.8 ", (2, 8, 0, 0), "2.8.0", "2.8"),
    ],
)
def test_names_parse_to_four_parts(
    text: str, parts: tuple[int, ...], full: str, short: str
) -> None:
    release = Release.parse(text)
    assert release.parts == parts
    assert str(release) == full
    assert release.short == short


def test_releases_order_as_released() -> None:
    names = ["4.0.1", "0.9", "2.8", "0.10.2.1", "0.10.2", "4.0", "1.1", "0.8.2"]
    ordered = sorted(names, key=Release.parse)
    assert ordered == ["0.8.2", "0.9", "0.10.2", "0.10.2.1", "1.1", "2.8", "4.0", "4.0.1"]


def test_patch_and_line() -> None:
    assert Release.parse("4.0.2").line == (4, 0)
    assert Release.parse("4.0.2").patch == 2
    assert Release.parse("0.10.2.1").line == (0, 10, 2)
    assert Release.parse("0.10.2.1").patch == 1


@pytest.mark.parametrize("text", ["", "4", "4.x", "v4.0", "4.0.0.1", "4..0", "all"])
def test_bad_names_are_refused_in_one_line(text: str) -> None:
    with pytest.raises(ReleaseNameError) as info:
        Release.parse(text)
    assert "\n" not in str(info.value)
    assert repr(text.strip()) in str(info.value)
