"""The generation worker's protocol: requests answered in order, and posted requests (draw these
chunks ahead) whose replies nobody waits for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fuzzgate.generate._worker import GenerationWorker

SCHEMA = {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "integer"}}}
COMMON = {"schema": SCHEMA, "max_string": 64, "count": 8}


def _draw(seed: int, *, ahead: tuple[int, ...] = ()) -> dict[str, Any]:
    prefetch = [{"stream": "conform", "seed": then} for then in ahead]
    return {"op": "draw", **COMMON, "stream": "conform", "seed": seed, "prefetch": prefetch}


@pytest.fixture
def worker() -> Iterator[GenerationWorker]:
    made = GenerationWorker()
    yield made
    made.close()


def test_posted_prefetches_are_not_waited_for_and_their_replies_are_not_taken_for_the_next(
    worker: GenerationWorker,
) -> None:
    fresh = GenerationWorker()
    try:
        expected = {seed: fresh.request(_draw(seed))[0] for seed in (2, 3)}
    finally:
        fresh.close()
    worker.request(_draw(1))
    for seed in (2, 3):
        worker.post({"op": "prefetch", **COMMON, "prefetch": [{"stream": "conform", "seed": seed}]})
    # Sent, and their replies left unread: the caller went on without waiting for the draws.
    assert worker._unread == 2
    drawn, ready = worker.request(_draw(2, ahead=(3,)))
    # The request's own reply, not a post's; and the chunk drawn ahead handed over with it.
    assert drawn == expected[2]
    assert ready == [["conform", 3, expected[3]]]
    assert worker._unread == 0


def test_a_post_to_a_worker_not_running_is_dropped(worker: GenerationWorker) -> None:
    worker.post({"op": "prefetch", **COMMON, "prefetch": [{"stream": "conform", "seed": 4}]})
    assert worker._unread == 0
    # The first request starts the worker, which then has nothing of the dropped post to answer.
    assert worker.request(_draw(4))[0]
