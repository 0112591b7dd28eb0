"""kafka_specgen.versions.Versions: parsing, set operations, printing, iteration."""

from __future__ import annotations

import pytest

from kafka_specgen.versions import ALL, MAX_VERSION, NONE, Versions


@pytest.mark.parametrize(
    ("text", "lo", "hi"),
    [
        ("0", 0, 0),
        ("7", 7, 7),
        ("0-3", 0, 3),
        ("2-2", 2, 2),
        ("4+", 4, MAX_VERSION),
        ("0+", 0, MAX_VERSION),
        ("  3-5\t", 3, 5),
        (" 2 - 4 ", 2, 4),
        ("\n1+ ", 1, MAX_VERSION),
        ("32767", MAX_VERSION, MAX_VERSION),
    ],
)
def test_parse(text: str, lo: int, hi: int) -> None:
    assert Versions.parse(text) == Versions(lo, hi)


@pytest.mark.parametrize("text", ["none", " none ", "none\n"])
def test_parse_none_is_empty(text: str) -> None:
    v = Versions.parse(text)
    assert v == NONE
    assert v.empty
    assert not v
    assert list(v) == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "abc",
        "-1",
        "1-",
        "-",
        "+",
        "3-1",
        "1+2",
        "1.5",
        "0x3",
        "1--2",
        "٣",
        "32768",
        "0-99999",
        "NONE",
        "None",
        "1++",
        "+1",
        "a+",
    ],
)
def test_parse_rejects_bad_strings(text: str) -> None:
    with pytest.raises(ValueError):
        Versions.parse(text)


def test_parse_error_names_the_text() -> None:
    with pytest.raises(ValueError, match="3-1"):
        Versions.parse("3-1")
    with pytest.raises(ValueError, match="above"):
        Versions.parse("40000")


def test_contains_int() -> None:
    v = Versions.parse("2-5")
    assert 2 in v and 5 in v and 3 in v
    assert 1 not in v and 6 not in v
    assert -1 not in v
    assert "3" not in v
    assert MAX_VERSION in Versions.parse("0+")
    assert 0 not in NONE and 1 not in NONE


def test_contains_range() -> None:
    v = Versions.parse("2-5")
    assert Versions.parse("2-5") in v
    assert Versions.parse("3-4") in v
    assert Versions.parse("3") in v
    assert Versions.parse("1-3") not in v
    assert Versions.parse("4-6") not in v
    assert Versions.parse("6+") not in v
    assert NONE in v  # the empty set is a subset of everything
    assert NONE in NONE
    assert v not in NONE
    assert Versions.parse("3+") in Versions.parse("2+")
    assert Versions.parse("2+") not in Versions.parse("3+")
    assert v in ALL


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("0-5", "3+", "3-5"),
        ("3+", "0-5", "3-5"),
        ("0-2", "3+", "none"),
        ("0-3", "3+", "3"),
        ("1+", "4+", "4+"),
        ("2-4", "2-4", "2-4"),
        ("0+", "none", "none"),
        ("none", "none", "none"),
        ("1-9", "4-6", "4-6"),
    ],
)
def test_intersect(a: str, b: str, expected: str) -> None:
    result = Versions.parse(a).intersect(Versions.parse(b))
    assert result == Versions.parse(expected)
    assert str(result) == expected
    assert Versions.parse(b).intersect(Versions.parse(a)) == result


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("0-5", "3+", "0-2"),
        ("0+", "0-3", "4+"),
        ("0-5", "0-5", "none"),
        ("2-4", "0+", "none"),
        ("0-2", "5+", "0-2"),
        ("0-5", "none", "0-5"),
        ("none", "0+", "none"),
        ("3-7", "0-3", "4-7"),
        ("3-7", "7", "3-6"),
    ],
)
def test_subtract(a: str, b: str, expected: str) -> None:
    assert Versions.parse(a).subtract(Versions.parse(b)) == Versions.parse(expected)


@pytest.mark.parametrize(("a", "b"), [("0-5", "2-3"), ("0+", "1-2"), ("0-2", "1")])
def test_subtract_split_raises(a: str, b: str) -> None:
    with pytest.raises(ValueError, match="splits"):
        Versions.parse(a).subtract(Versions.parse(b))


@pytest.mark.parametrize("text", ["none", "0", "12", "0-3", "5-32766", "0+", "9+"])
def test_str_round_trip(text: str) -> None:
    v = Versions.parse(text)
    assert str(v) == text
    assert Versions.parse(str(v)) == v


def test_str_normalises() -> None:
    assert str(Versions.parse("2-2")) == "2"
    assert str(Versions.parse(" 1 - 3 ")) == "1-3"
    assert str(Versions.parse("0-32767")) == "0+"
    assert str(Versions(5, 2)) == "none"


def test_iteration() -> None:
    assert list(Versions.parse("2-5")) == [2, 3, 4, 5]
    assert list(Versions.parse("4")) == [4]
    assert list(NONE) == []
    assert len(list(Versions.parse("32760+"))) == 8


def test_empty_and_open_ended() -> None:
    assert NONE.empty and not NONE.open_ended
    assert Versions(3, 1).empty
    assert not Versions.parse("0").empty
    assert Versions.parse("0").__bool__()
    assert Versions.parse("3+").open_ended
    assert not Versions.parse("3-4").open_ended
    assert ALL == Versions.parse("0+")


def test_frozen_and_hashable() -> None:
    v = Versions.parse("1-2")
    with pytest.raises(AttributeError):
        v.lo = 0  # type: ignore[misc]
    assert {v, Versions(1, 2)} == {v}
