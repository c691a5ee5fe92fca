"""Text of one byte width (1 to 8 bytes) is hashed as the integers its bytes make: the same cells, counts and key
sums as text hashed as text, for every width, multi-byte characters, sliced and chunked arrays, and text that
does not qualify (several widths, longer values, empty strings)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from cellsafe.io._coded import _fixed_width_text
from cellsafe.io._coded_frames import aggregate_frame_codes


def _cells(table, names, key=None):
    res = aggregate_frame_codes(table, names, key, n_keys=None if key is None else 256)
    assert res is not None
    sizes = [len(d) for d in res.dictionaries]
    codes = np.column_stack(np.unravel_index(res.index, sizes))
    sums = res.key_sums if res.key_sums is not None else [None] * len(res.counts)
    return {tuple(d[i] for d, i in zip(res.dictionaries, row)): (int(c), None if s is None else int(s))
            for row, c, s in zip(codes, res.counts, sums)}


def _expected(columns, keys):
    counts, sums = Counter(), Counter()
    for cell, k in zip(zip(*columns), keys):
        counts[cell] += 1
        sums[cell] += int(k)
    return {c: (counts[c], sums[c] % 256) for c in counts}


VALUES = {
    1: ["M", "F", "X", "\x00"],
    2: ["ab", "é", "00", "a\x00"],        # 'é' is two bytes, like 'ab'
    3: ["E01", "W07", "aé", "€"],         # '€' is three bytes
    4: ["E017", "G003", "éé", "€a"],
    5: ["00-04", "05-09", "90+  ", "é€"],
    6: ["abcdef", "ABCDEF", "ééé", "€€"],
    7: ["E060001", "W060002", "é€ab", "S070003"],
    8: ["E0600001", "W0600002", "€€ab", "éééé"],
}


@pytest.mark.parametrize("width", sorted(VALUES))
def test_one_width_of_text_counts_as_text(width):
    rng = np.random.default_rng(width)
    n = 3_000
    values = VALUES[width]
    assert {len(v.encode()) for v in values} == {width}
    a = [values[i] for i in rng.integers(0, len(values), n)]
    b = [["p", "qq"][i] for i in rng.integers(0, 2, n)]  # two widths: hashed as text
    keys = rng.integers(0, 256, n)
    table = pa.table({"a": pa.array(a, type=pa.large_string()), "b": b, "k": keys})
    assert _fixed_width_text(table.column("a").chunk(0)) is not None
    assert _fixed_width_text(table.column("b").chunk(0)) is None
    assert _cells(table, ["a", "b"], "k") == _expected([a, b], keys)
    # sliced (an offset into the buffers) and chunked at odd rows, string and large_string
    for kind in (pa.string(), pa.large_string()):
        whole = pa.array(a, type=kind)
        parts = pa.chunked_array([whole.slice(0, 7), whole.slice(7, 1000), whole.slice(1007)])
        t = pa.table({"a": parts, "b": b, "k": keys})
        assert _cells(t, ["a", "b"], "k") == _expected([a, b], keys)
        assert _cells(t.slice(5, 2000), ["a"]) == {k: (v[0], None) for k, v in _expected([a[5:2005]], keys[5:2005]).items()}


@pytest.mark.parametrize("values", [["", ""], ["abcdefghi", "ABCDEFGHI"], ["a", "bb", "a"]])
def test_text_that_does_not_qualify(values):
    """Empty strings, values longer than 8 bytes, several widths: hashed as text, the same cells."""
    chunk = pa.array(values, type=pa.large_string())
    assert _fixed_width_text(chunk) is None
    table = pa.table({"a": chunk})
    assert _cells(table, ["a"]) == {(v,): (values.count(v), None) for v in set(values)}
