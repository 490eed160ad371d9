"""One atomic swap (issue 15 item 3): a search runs on one state object; a policy reload replaces it whole.

Two policies that disagree on everything a response shows (the match tier's thresholds and ceilings, the trust
multipliers) are swapped back and forth while searches run on four threads: every response must equal, field
for field, the response of the policy it names, computed with no swap running.
"""

from __future__ import annotations

import threading
import time

from trustindex.schemas.policy import Policy

QUERIES = ("legacy wallet API", "How do witness functions supply private data to a circuit?")
# Everything is "high" under A, everything "low" under B; B also changes trust, so its scores differ too.
# (the tier follows answer_confidence under the built-in calibration, the best cosine without one: both are pinned)
_ALL_HIGH = {"high_probability": 0.0, "mid_probability": 0.0, "high_threshold": -1.0, "mid_threshold": -1.0}
_ALL_LOW = {"high_probability": 1.0, "mid_probability": 1.0, "high_threshold": 1.0, "mid_threshold": 1.0}
POLICY_A = Policy.from_dict({"match": {**_ALL_HIGH, "min_answer_confidence": 0.0}})
POLICY_B = Policy.from_dict(
    {
        "match": {**_ALL_LOW, "low_ceiling": 0.2},
        "deprecation": {"multiplier": 0.05},
        "attribution": {"tiers": {"foundation": 0.5}},
    }
)


def _shape(response: dict) -> tuple:
    """What a mixed state would change: the tier, its ceiling and the trust of each hit, in order."""
    hits = tuple((h["chunk_id"], h["trust_score"], h["display_confidence"]) for h in response["hits"])
    return response["match_tier"], response["abstained"], hits


def test_concurrent_searches_never_mix_two_policies(refreshed):
    from trustindex.query.index import Index

    idx = Index.open(data_dir=refreshed["data"], warm=True)
    expected: dict[tuple[str, str], tuple] = {}
    for policy in (POLICY_A, POLICY_B):
        idx.reload_policy(policy)
        for q in QUERIES:
            expected[(policy.policy_id, q)] = _shape(idx.search(q, k=5))
    assert POLICY_A.policy_id != POLICY_B.policy_id
    assert expected[(POLICY_A.policy_id, QUERIES[0])][0] == "high"
    assert expected[(POLICY_B.policy_id, QUERIES[0])][0] == "low"
    assert expected[(POLICY_A.policy_id, QUERIES[0])][2] != expected[(POLICY_B.policy_id, QUERIES[0])][2]

    stop = threading.Event()
    seen: list[str] = []
    mismatches: list[tuple] = []
    errors: list[BaseException] = []
    swaps = 0

    def searcher(n: int) -> None:
        try:
            for j in range(n):
                if stop.is_set():
                    return
                q = QUERIES[j % len(QUERIES)]
                r = idx.search(q, k=5)
                seen.append(r["policy_id"])
                if _shape(r) != expected[(r["policy_id"], q)]:
                    mismatches.append((r["policy_id"], q, _shape(r)))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=searcher, args=(40,)) for _ in range(4)]
    deadline = time.monotonic() + 120  # bounded in count (4 × 40 searches) and in time
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        idx.reload_policy(POLICY_A if swaps % 2 else POLICY_B)
        swaps += 1
        time.sleep(0.002)
    stop.set()
    for t in threads:
        t.join(timeout=30)

    assert not errors, errors[0]
    assert not mismatches, mismatches[:3]
    assert swaps > 10 and {POLICY_A.policy_id, POLICY_B.policy_id} <= set(seen)
