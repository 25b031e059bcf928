"""The ranking's speed-ups keep every question: the questions asked along fixed walks (film
pools and the benchmark's synthetic N = 200 and 1000 pools; ``planned`` and ``expected-depth``
over the mixed vocabulary, value questions on and off) are the recorded ones
(``python -m tests.question_walks`` records them; see its docstring)."""

from __future__ import annotations

import json

from tests.question_walks import FIXTURE, fingerprint, pools


def test_the_questions_along_every_walk_are_the_recorded_ones() -> None:
    want = json.loads(FIXTURE.read_text())
    got = json.loads(json.dumps(fingerprint(pools())))
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], f"the questions of walk {key} changed"
    assert sum(len(w) for w in want.values()) > 150  # the walks ask something
