"""A float column whose missing values (``None``) lead it is packed without a Python pass
over it (``columns._led_by_nones``, issue 40); every float column, whatever its missing
values, still comes back as it was written, each ``None`` as ``None``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab.log.columns import _STORE_OF, Same, _led_by_nones, _store, plain

_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None)
@given(
    lead=st.integers(0, 5),
    values=st.lists(st.one_of(st.none(), _floats), min_size=0, max_size=40),
)
def test_a_float_column_comes_back(lead: int, values: list[float | None]) -> None:
    column = [None] * lead + values
    if not column:
        return
    stored = _store(list(column), _STORE_OF["head_before"])
    assert plain(stored, len(column)) == column
    if all(v is None for v in column):
        assert isinstance(stored, Same) and stored.value is None


@given(lead=st.integers(1, 5), rest=st.lists(_floats, min_size=1, max_size=20))
def test_leading_nones_are_packed_at_once(lead: int, rest: list[float]) -> None:
    assert _led_by_nones([None] * lead + rest) is not None
    # a None further on: not this case (the general way packs it)
    assert _led_by_nones([None] * lead + rest + [None, 1.0]) is None
