"""Leased keys under real concurrency: 8 processes x threads on one key, against a moto server.

The server runs in a process of its own with ``make_dynamodb_atomic`` applied (as the local stack
does: moto's DynamoDB takes no lock of its own, and two threads of the server could both pass one
bucket's condition), the keys and principals tables made from template.yaml. Each worker process is
a warm Lambda process: its own client, store and ``KeyGate`` against the server's endpoint, calling
``admit`` from several threads. Two properties of ``admission.leases`` are checked:

- exact in total: every process together admits no more than the GCRA bucket allows over the run
  (its limit, plus the refill over the run's measured span), and not much less;
- bounded staleness: after a revocation, no process admits a call later than one lease age (plus one
  request, for a write decided just before the revocation whose answer is still on its way).
"""

from __future__ import annotations

import math
import multiprocessing
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from toolfront.admission.keyed import Demand, KeyGate
from toolfront.admission.ratelimit import WINDOW_US, BucketMemory
from toolfront.auth.keys import parse_key
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront.errors import StoreUnavailableError, UnauthenticatedError
from toolfront.settings import RateLimits

PROCESSES = 8
THREADS = 4
FLOOD_LEASE_AGE_MS = 1000  # RateLimits' default
REVOKE_LEASE_AGE_MS = 300
READ = Demand("admin", "catalogue.products:read", "catalogue", 1)
CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
SPAWN = multiprocessing.get_context("spawn")


@dataclass(frozen=True, slots=True)
class Job:
    """What every worker process runs: calls of one key from ``THREADS`` threads for ``seconds``,
    each thread pausing ``pause_s`` between its calls. A worker builds its gate and answers "armed";
    it then waits for the moment to start (wall clock, ``time.time()``), the same for every worker."""

    endpoint: str
    key: str
    lease_max_age_ms: int
    seconds: float
    pause_s: float = 0.0


@dataclass(slots=True)
class Report:
    """What one worker process saw. Times are ``time.time()``; ``admitted`` holds, per admitted
    call, when it started, when ``admit`` returned, and how many UpdateItems it sent itself."""

    admitted: list[tuple[float, float, int]] = field(default_factory=list)
    refused: int = 0  # 429s
    refused_requests: int = 0  # UpdateItems sent by the calls that were refused
    unauthenticated: list[float] = field(default_factory=list)  # when each 401 was answered
    unavailable: int = 0  # 503s (no decision after the gate's attempts)
    update_items: int = 0  # every UpdateItem this process's client sent
    first_call: float = float("inf")
    longest_write: float = 0.0  # the longest admitted call that sent a request (s)
    errors: list[str] = field(default_factory=list)

    def merge(self, other: Report) -> None:
        self.admitted += other.admitted
        self.refused += other.refused
        self.refused_requests += other.refused_requests
        self.unauthenticated += other.unauthenticated
        self.unavailable += other.unavailable
        self.first_call = min(self.first_call, other.first_call)
        self.longest_write = max(self.longest_write, other.longest_write)
        self.errors += other.errors


# --- the worker processes ---------------------------------------------------------------------


def _worker(jobs: Any, results: Any) -> None:
    """A warm process: runs each job it is given with a fresh client, store and gate."""
    import boto3  # noqa: F401  (imported before "ready": the job's clock starts warm)

    results.put("ready")
    while (job := jobs.get()) is not None:
        try:
            results.put(_run(job, jobs, results))
        except BaseException:  # the parent fails the test with it
            results.put(Report(errors=[traceback.format_exc()]))


def _run(job: Job, jobs: Any, results: Any) -> Report:
    import boto3

    client = boto3.client("dynamodb", endpoint_url=job.endpoint, **CREDENTIALS)
    store = DynamoDBKeyStore("KeysTable", "PrincipalsTable", client)
    limits = RateLimits(lease_max_age_ms=job.lease_max_age_ms)
    caller = Caller(KeyGate(store, "KeysTable", limits, BucketMemory(), client=client), job)
    for wire in (store.client, caller.gate.client):  # each wire's first request loads botocore's model
        wire.get_item(TableName="KeysTable", Key={"key_id": {"S": "warm"}})
    client.meta.events.register_first("before-send.dynamodb", caller.count)
    found = Report()
    caller.call(found, timed=False)  # the process's first call: exact, it learns the key's lease
    results.put("armed")
    start_at: float = jobs.get()
    reports = [Report() for _ in range(THREADS)]
    stop_at = start_at + job.seconds
    # A paced job spreads its threads' first calls over one pause (the workers are spread too).
    threads = [
        threading.Thread(target=caller.calls, args=(r, stop_at, i * job.pause_s / THREADS))
        for i, r in enumerate(reports)
    ]
    time.sleep(max(0.0, start_at - time.time()))
    caller.call(reports[0])  # one call takes the process's first lease before its threads join in
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for report in reports:
        found.merge(report)
    found.update_items = caller.update_items
    return found


class Caller:
    """A warm process's calls of one key, each noted with the UpdateItems it sent (its thread's)."""

    def __init__(self, gate: KeyGate, job: Job) -> None:
        parsed = parse_key(job.key)
        assert parsed is not None
        self.gate, self.parsed, self.pause_s = gate, parsed, job.pause_s
        self.sent = threading.local()
        self.update_items = 0
        self._lock = threading.Lock()

    def count(self, request: Any, **_: Any) -> None:
        """``before-send`` on the process's client (the store's and the gate's requests both pass)."""
        if request.headers["X-Amz-Target"].rpartition(".")[2] == "UpdateItem":
            self.sent.n = getattr(self.sent, "n", 0) + 1
            with self._lock:
                self.update_items += 1

    def calls(self, out: Report, stop_at: float, delay_s: float) -> None:
        """One thread's calls until ``stop_at``, the first after ``delay_s``."""
        time.sleep(delay_s)
        while time.time() < stop_at and not out.unauthenticated:  # a caller told 401 stops
            self.call(out)
            if self.pause_s:
                time.sleep(self.pause_s)

    def call(self, out: Report, *, timed: bool = True) -> None:
        self.sent.n = 0
        start = time.time()
        out.first_call = min(out.first_call, start)
        try:
            outcome = self.gate.admit(self.parsed, READ)
        except UnauthenticatedError:
            out.unauthenticated.append(time.time())
            outcome = None
        except StoreUnavailableError:
            out.unavailable += 1
            outcome = None
        end, sent = time.time(), self.sent.n
        if outcome is not None and outcome.refused is not None:
            out.refused += 1
            out.refused_requests += sent
        elif outcome is not None:
            assert outcome.decision is not None, "the key holds the scope and the permission"
            out.admitted.append((start, end, sent))
            if sent and timed:
                out.longest_write = max(out.longest_write, end - start)


# --- the server and the pool ------------------------------------------------------------------


def _serve(endpoints: Any, stop: Any) -> None:
    """moto's threaded server, each DynamoDB operation atomic (the local stack's patch)."""
    import os

    from toolfront_dev.aws import MotoServer
    from toolfront_dev.moto_atomic import make_dynamodb_atomic

    make_dynamodb_atomic()
    server = MotoServer(0)
    endpoint = server.start()
    os.environ["MOTO_PORT"] = str(server.port)  # moto's own callbacks find the threaded server
    endpoints.put(endpoint)
    stop.wait()
    server.stop()


@dataclass
class Pool:
    endpoint: str
    jobs: list[Any]
    results: Any

    def start(self, job: Job) -> float:
        """Give every worker ``job``; once all are armed, the moment they start (shortly after; a
        paced job's workers one after the other within one pause)."""
        for jobs in self.jobs:
            jobs.put(job)
        armed = [self.results.get(timeout=60) for _ in self.jobs]
        assert armed == ["armed"] * len(self.jobs), armed
        start_at = time.time() + 0.1
        for i, jobs in enumerate(self.jobs):
            jobs.put(start_at + i * job.pause_s / len(self.jobs))
        return start_at

    def reports(self) -> list[Report]:
        reports = [self.results.get(timeout=60) for _ in self.jobs]
        errors = [e for r in reports for e in r.errors]
        assert not errors, "\n".join(errors)
        return reports

    def store(self) -> DynamoDBKeyStore:
        """A store of the parent's own (the CLI's side: keys issued, revoked)."""
        import boto3

        client = boto3.client("dynamodb", endpoint_url=self.endpoint, **CREDENTIALS)
        return DynamoDBKeyStore("KeysTable", "PrincipalsTable", client)


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    """The moto server (its own process) with the keys and principals tables, and 8 warm workers."""
    import boto3

    from tests.aws import template_tables

    endpoints, stop = SPAWN.Queue(), SPAWN.Event()
    server = SPAWN.Process(target=_serve, args=(endpoints, stop), daemon=True)
    results = SPAWN.Queue()
    jobs = [SPAWN.Queue() for _ in range(PROCESSES)]
    workers = [SPAWN.Process(target=_worker, args=(j, results), daemon=True) for j in jobs]
    server.start()
    for worker in workers:
        worker.start()
    try:
        endpoint = endpoints.get(timeout=60)
        client = boto3.client("dynamodb", endpoint_url=endpoint, **CREDENTIALS)
        for name in ("KeysTable", "PrincipalsTable"):
            props = template_tables()[name]
            client.create_table(
                TableName=name,
                KeySchema=props["KeySchema"],
                AttributeDefinitions=props["AttributeDefinitions"],
                BillingMode="PAY_PER_REQUEST",
            )
        assert [results.get(timeout=60) for _ in workers] == ["ready"] * PROCESSES
        yield Pool(endpoint, jobs, results)
    finally:
        for j in jobs:
            j.put(None)
        stop.set()
        for process in [*workers, server]:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()


def _key(store: DynamoDBKeyStore, owner: str, rate_limit: int, lease: int) -> str:
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    key, _ = issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=rate_limit, lease=lease)
    return key


def _merged(reports: list[Report]) -> Report:
    found = Report(update_items=sum(r.update_items for r in reports))
    for report in reports:
        found.merge(report)
    return found


# --- the tests --------------------------------------------------------------------------------


def test_a_leased_key_admits_its_bucket_exactly_across_8_processes(pool: Pool) -> None:
    # 8 x 4 threads calling as fast as they can, far above the limit: the first 600 units go in
    # leases of 10, then the refill (10 units a second) goes call by call. The lease age is the
    # default: under this flood a write to the moto server takes up to ~0.35 s, and a lease counts
    # its age from before its write, so a 300 ms lease would mostly expire unspent (fewer admitted,
    # never more).
    limit, lease = 600, 10
    key = _key(pool.store(), "hot", limit, lease)
    pool.start(Job(pool.endpoint, key, FLOOD_LEASE_AGE_MS, 2.5))
    reports = pool.reports()
    run = _merged(reports)
    admitted = len(run.admitted)
    last = max(end for _, end, _ in run.admitted)
    # GCRA (admission.ratelimit): the bucket starts full, and each write moves tat by its units; so
    # the units taken by writes whose clock read between t0 and t1 are at most
    # (t1 - t0 + window) / interval. Every unit admitted was taken by a write whose clock read no
    # earlier than the first call's start and no later than its own admission's end.
    span_us = math.ceil((last - run.first_call) * 1_000_000) + 1  # + 1: time.time()'s float rounding
    interval_us = -(-WINDOW_US // limit)
    bound = (span_us + WINDOW_US) // interval_us
    written = sum(n for *_, n in run.admitted)
    summary = (
        f"admitted {admitted}, bound {bound} ({limit} + the refill over {span_us / 1e6:.3f} s); "
        f"UpdateItems {run.update_items}: {written} by the admitted calls, {run.refused_requests} by "
        f"{run.refused} refused calls; 503s {run.unavailable}; admitted by process "
        f"{[len(r.admitted) for r in reports]}; UpdateItems per admitted call "
        f"{sorted(Counter(n for *_, n in run.admitted).items())}"
    )
    print(summary)
    assert admitted <= bound, f"more admitted than the bucket holds: {summary}"
    assert admitted >= limit - PROCESSES * lease, f"more stranded than a lease per process: {summary}"
    # The admitted calls' own writes (each refused call also sends its own: they are reported).
    assert written * 2 <= admitted, f"the leases did not spare writes: {summary}"
    assert run.unavailable == 0, summary


def test_a_revoked_leased_key_is_refused_everywhere_within_one_lease_age(pool: Pool) -> None:
    # A limit the run cannot reach, and threads pacing their calls (about 100 a second a process)
    # so that a lease of 50 outlives its age: what ends the leases here is the age, not the spending.
    # (When a lease ends, a process's 4 threads all write at once: 32 writes queue at the server,
    # so a write may take a few hundred ms here; the bound counts the longest one measured.)
    age_ms = REVOKE_LEASE_AGE_MS
    store = pool.store()
    key = _key(store, "revoked", 60_000, 50)
    parsed = parse_key(key)
    assert parsed is not None
    start = pool.start(Job(pool.endpoint, key, age_ms, 1.8, pause_s=0.04))
    time.sleep(max(0.0, start + 1.0 - time.time()))
    revoking = time.time()
    store.revoke_key(parsed.key_id, datetime.now(UTC))
    revoked = time.time()  # the revocation is stored: every write from now on is refused
    reports = pool.reports()
    run = _merged(reports)
    # A lease is spent at most its age after its write was planned (before the revocation was
    # stored); a write applied before the revocation may answer up to one request later: the
    # longest admitted call that wrote, measured in this run.
    bound = revoked + age_ms / 1000 + run.longest_write
    after = [(s, e, n) for s, e, n in run.admitted if e > revoking]
    last = max(e for _, e, _ in run.admitted)
    first_401 = sorted(round(1000 * (min(r.unauthenticated, default=0) - revoked)) for r in reports)
    # Exactly (no duration involved): a call admitted by a write began before the revocation was
    # stored, and a call answered from a lease began before the revocation + one lease age (its
    # decision, after its start, came before the lease's end: its write's clock + the age).
    late_writes = [s - revoked for s, _, n in run.admitted if n and s >= revoked]
    lease_end = revoked + age_ms / 1000 + 1e-5  # + 10 µs: time.time() against the gate's µs clock
    late_spends = [s - revoked for s, _, n in run.admitted if not n and s >= lease_end]
    summary = (
        f"revoked {revoking - start:.3f} s in (stored {1000 * (revoked - revoking):.1f} ms later); "
        f"bound = stored + lease age {age_ms} ms + the longest admitted call that wrote "
        f"({1000 * run.longest_write:.1f} ms) = {1000 * (bound - revoked):.1f} ms after; "
        f"admitted {len(run.admitted)}, {len(after)} after the revoke began "
        f"({sum(1 for *_, n in after if n == 0)} from leases), the last {1000 * (last - revoked):.1f} ms "
        f"after it was stored; UpdateItems {run.update_items}; 401s {len(run.unauthenticated)}, each "
        f"process's first {first_401} ms after it was stored"
    )
    print(summary)
    assert last < bound, f"an admission after the staleness bound: {summary}"
    assert not late_writes, f"admitted by a write begun after the revocation: {late_writes} {summary}"
    assert not late_spends, f"answered from a lease older than its age: {late_spends} {summary}"
    assert after, f"no admission after the revoke began: the bound was not exercised: {summary}"
    assert all(len(r.unauthenticated) == THREADS for r in reports), f"a thread never saw a 401: {summary}"
