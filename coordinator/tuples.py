"""The converter for the tuple fields of frozen attrs values (messages, records, views, events).

``field(converter=tuple)`` works at run time, but mypy's attrs plugin cannot solve ``tuple``'s type
variable, so every constructor call would be typed against an unsolved ``Iterable[_T_co]`` and
fail to check. ``to_tuple`` takes any iterable; the field's own annotation (``tuple[X, ...]``)
types the attribute for readers. A generic ``Iterable[T] -> tuple[T, ...]`` has the same problem,
and ``converter=tuple[X, ...]`` type-checks but costs a failed ``__orig_class__`` assignment on
every call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:

    def to_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
        """``tuple(items)``, typed for mypy's attrs plugin."""
        ...

else:
    # At run time the converter is ``tuple`` itself: a C call with no Python frame (about
    # 215,000 conversions in the quick rolling restart, most of them of values that are already
    # tuples, which ``tuple`` returns as they are). Only mypy sees the typed signature above.
    to_tuple = tuple


def to_optional_tuple(items: Iterable[Any] | None) -> tuple[Any, ...] | None:
    """``None`` kept (a nullable array: "not provided"), any other iterable as a tuple."""
    return None if items is None else tuple(items)
