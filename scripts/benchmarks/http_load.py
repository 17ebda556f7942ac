"""Section 2: full turns through the HTTP API at 1, 8 and 32 concurrent clients.

The real app runs in a child process (`scripts.benchmarks.serve`: default settings, embedded
store seeded with the local MiniLM embedder, offline reranker and chat model; rate limits
lifted and the embedding disk cache off, see there) on 127.0.0.1, so the load generator does
not share the server's interpreter. Each client signs in as one of the seed's English-speaking
customers (round robin), opens its own session and conversation, and sends its messages one
after another (JSON, not streamed), drawn from a fixed list of support questions answerable
from the seed corpus. A conversation that gets handed to a person is replaced by a fresh one
(the bot stays silent while a person has it, which would make later turns artificially cheap);
how often that happened is reported.

Before the measured levels, a warm-up of a few turns runs so first-use costs are not counted.
Every request has a timeout and every level a deadline; traffic goes only to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from app.identity import mint_identity
from scripts.benchmarks.common import (
    fmt_ratio,
    heading,
    percentile,
    progress,
    ratio,
    summary_ms,
    table,
)

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
CUSTOMERS = (
    "cus_brightwater",
    "cus_castellan",
    "cus_lumendental",
    "cus_quillfeather",
    "cus_tidewater",
    "cus_harrowgate",
    "cus_ortegabakery",
)
QUESTIONS = (
    "How do I reset my password?",
    "Since this morning everyone gets AUTH_302 when signing in through Okta",
    "How do I connect Google Calendar so room bookings show up there?",
    "The room panel LED is blinking amber, what does that mean?",
    "How do I update the firmware on a room panel?",
    "How do I replace the battery in a desk tag?",
    "Where do I add our VAT number so it shows on invoices?",
    "How do I invite new users to our workspace?",
    "Our sync keeps getting RATE_429 from the API. What should we change?",
    "How do I set up the visitor kiosk to print badges?",
    "Can the room panel be powered over PoE?",
    "How do I turn on two-factor authentication?",
    "How long does shipping take for hardware orders?",
    "How can I export our booking data?",
    "What does AUTH_304 mean?",
    "How do I pair a desk tag?",
)
READY_TIMEOUT_S = 420.0
REQUEST_TIMEOUT_S = 120.0
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def thread_cpu(pid: int | None) -> dict[str, float]:
    """CPU seconds used so far by each thread of process `pid`, keyed "loop" for its main
    thread (the event loop) and "other" for the rest (the embedding worker, thread pools)
    summed; empty where /proc is not available. CPU time, unlike latency, barely moves with
    what else the machine is running."""
    out = {"loop": 0.0, "other": 0.0}
    if pid is None:
        return {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended
        seconds = (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
        out["loop" if tid == str(pid) else "other"] += seconds
    return out


class Server:
    """The app in a child process; `async with Server() as base_url: ...`."""

    def __init__(self) -> None:
        self.identity_secret = secrets.token_hex(32)
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in __aexit__
            prefix="bench-server-", suffix=".log", delete=False
        )
        self._proc: asyncio.subprocess.Process | None = None
        self.startup_s = 0.0
        self.base_url = ""

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def __aenter__(self) -> Server:
        env = {
            **os.environ,
            "IDENTITY_SECRET": self.identity_secret,
            "SESSION_SECRET": secrets.token_hex(32),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        env.pop("MONGODB_URI", None)
        start = time.perf_counter()
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "scripts.benchmarks.serve",
            cwd=ROOT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._log,
        )
        assert self._proc.stdout is not None
        line = await asyncio.wait_for(self._proc.stdout.readline(), 120)
        if not line.startswith(b"PORT "):
            raise RuntimeError(f"server did not start: {line!r}; log {self._log.name}")
        self.base_url = f"http://{HOST}:{int(line.split()[1])}"
        deadline = time.monotonic() + READY_TIMEOUT_S
        async with httpx.AsyncClient(base_url=self.base_url, timeout=10) as client:
            while True:
                if self._proc.returncode is not None:
                    raise RuntimeError(f"server exited; see {self._log.name}")
                with contextlib.suppress(httpx.TransportError):
                    r = await client.get("/readyz")
                    if r.status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server not ready in {READY_TIMEOUT_S}s: {self._log.name}")
                await asyncio.sleep(0.5)
        self.startup_s = time.perf_counter() - start
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._proc is not None and self._proc.returncode is None:
            self._proc.terminate()
            try:
                await asyncio.wait_for(self._proc.wait(), 30)
            except TimeoutError:
                self._proc.kill()
                await self._proc.wait()
        self._log.close()
        with contextlib.suppress(OSError):
            os.unlink(self._log.name)


class Client:
    """One customer: a session, a conversation, messages sent one at a time."""

    def __init__(self, http: httpx.AsyncClient, customer: str, secret: str, offset: int) -> None:
        self.http = http
        self.customer = customer
        self.secret = secret
        self.offset = offset
        self.headers: dict[str, str] = {}
        self.conversation = ""
        self.latencies: list[float] = []
        self.server_ms: list[float] = []
        self.errors: dict[str, int] = {}
        self.bands: dict[str, int] = {}
        self.handoffs = 0

    async def open(self) -> None:
        token = mint_identity(self.customer, self.secret, minutes=60)
        r = await self.http.post("/v1/sessions", json={"identityToken": token})
        r.raise_for_status()
        self.headers = {"Authorization": f"Bearer {r.json()['sessionToken']}"}
        await self.new_conversation()

    async def new_conversation(self) -> None:
        r = await self.http.post("/v1/conversations", headers=self.headers)
        r.raise_for_status()
        self.conversation = str(r.json()["id"])

    async def send(self, text: str) -> None:
        start = time.perf_counter()
        try:
            r = await self.http.post(
                f"/v1/conversations/{self.conversation}/messages",
                headers=self.headers,
                json={"content": text},
            )
        except httpx.HTTPError as exc:
            key = type(exc).__name__
            self.errors[key] = self.errors.get(key, 0) + 1
            return
        elapsed = time.perf_counter() - start
        if r.status_code != 200:
            key = str(r.status_code)
            self.errors[key] = self.errors.get(key, 0) + 1
            return
        self.latencies.append(elapsed)
        reply = r.json().get("reply") or {}
        meta = reply.get("meta") or {}
        band = str(meta.get("confidence"))
        self.bands[band] = self.bands.get(band, 0) + 1
        total = (meta.get("latencyMs") or {}).get("total")
        if isinstance(total, int | float):
            self.server_ms.append(float(total))
        if not reply or meta.get("escalated"):
            self.handoffs += 1
            await self.new_conversation()

    async def run(self, messages: int) -> None:
        for i in range(messages):
            await self.send(QUESTIONS[(self.offset + i) % len(QUESTIONS)])

    async def stream(self, text: str) -> tuple[float, float] | None:
        """One streamed turn: seconds to the first SSE event, and to the end of the stream."""
        start = time.perf_counter()
        first: float | None = None
        headers = {**self.headers, "Accept": "text/event-stream"}
        url = f"/v1/conversations/{self.conversation}/messages"
        try:
            async with self.http.stream("POST", url, headers=headers, json={"content": text}) as r:
                if r.status_code != 200:
                    self.errors[str(r.status_code)] = self.errors.get(str(r.status_code), 0) + 1
                    return None
                escalated = False
                async for line in r.aiter_lines():
                    if first is None and line.startswith("event:"):
                        first = time.perf_counter() - start
                    escalated = escalated or '"escalated": true' in line
        except httpx.HTTPError as exc:
            self.errors[type(exc).__name__] = self.errors.get(type(exc).__name__, 0) + 1
            return None
        if escalated:
            await self.new_conversation()
        return (first if first is not None else math.nan), time.perf_counter() - start


async def first_event(http: httpx.AsyncClient, secret: str, turns: int) -> dict[str, Any]:
    """One client, streamed turns: how soon the first event (the stored message) arrives."""
    client = Client(http, CUSTOMERS[0], secret, offset=0)
    await client.open()
    firsts: list[float] = []
    totals: list[float] = []
    for i in range(turns):
        got = await client.stream(QUESTIONS[i % len(QUESTIONS)])
        if got is not None:
            firsts.append(got[0])
            totals.append(got[1])
    return {
        "turns_ok": len(firsts),
        "errors": client.errors,
        "first_event": summary_ms(firsts),
        "stream_total": summary_ms(totals),
    }


async def run_level(
    http: httpx.AsyncClient,
    secret: str,
    clients: int,
    messages: int,
    deadline_s: float,
    server_pid: int | None = None,
) -> dict[str, Any]:
    pool = [
        Client(http, CUSTOMERS[i % len(CUSTOMERS)], secret, offset=3 * i) for i in range(clients)
    ]
    await asyncio.gather(*(c.open() for c in pool))
    cpu_before = thread_cpu(server_pid)
    start = time.perf_counter()
    timed_out = False
    try:
        await asyncio.wait_for(asyncio.gather(*(c.run(messages) for c in pool)), deadline_s)
    except TimeoutError:
        timed_out = True
    wall = time.perf_counter() - start
    cpu_after = thread_cpu(server_pid)
    latencies = [x for c in pool for x in c.latencies]
    server_ms = [x for c in pool for x in c.server_ms]
    errors: dict[str, int] = {}
    bands: dict[str, int] = {}
    for c in pool:
        for k, v in c.errors.items():
            errors[k] = errors.get(k, 0) + v
        for k, v in c.bands.items():
            bands[k] = bands.get(k, 0) + v
    return {
        "clients": clients,
        "messages_per_client": messages,
        "turns_ok": len(latencies),
        "errors": errors,
        "timed_out": timed_out,
        "wall_s": round(wall, 3),
        "req_per_s": round(len(latencies) / wall, 3) if wall > 0 else 0.0,
        "latency": summary_ms(latencies),
        "server_total_ms_p50": round(percentile(server_ms, 50), 1),
        "confidence": bands,
        "handoffs": sum(c.handoffs for c in pool),
        # the server's CPU per answered turn: the event-loop thread is the one that serialises
        "server_cpu_ms_per_turn": {
            k: round(1000 * (cpu_after[k] - cpu_before[k]) / len(latencies), 1)
            for k in cpu_after
            if k in cpu_before and latencies
        },
    }


async def run(
    levels: Sequence[tuple[int, int]],
    warmup_turns: int = 4,
    deadline_s: float = 240.0,
    streamed_turns: int = 20,
) -> dict[str, Any]:
    """`levels`: (concurrent clients, messages per client) pairs, measured in order."""
    progress("starting the app (seeding the embedded store with MiniLM)")
    async with Server() as server:
        progress(f"app ready in {server.startup_s:.1f}s at {server.base_url}")
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(
            base_url=server.base_url, timeout=REQUEST_TIMEOUT_S, limits=limits, trust_env=False
        ) as http:
            warm = await run_level(http, server.identity_secret, 1, warmup_turns, deadline_s)
            results: dict[str, Any] = {}
            for clients, messages in levels:
                progress(f"{clients} concurrent clients x {messages} messages")
                results[str(clients)] = await run_level(
                    http, server.identity_secret, clients, messages, deadline_s, server.pid
                )
            progress(f"1 client x {streamed_turns} streamed turns (time to first SSE event)")
            streamed = await first_event(http, server.identity_secret, streamed_turns)
    base = results[str(levels[0][0])]
    ratios = {
        name: {
            "req_per_s": ratio(r["req_per_s"], base["req_per_s"]),
            "p50": ratio(r["latency"]["p50_ms"], base["latency"]["p50_ms"]),
            "p95": ratio(r["latency"]["p95_ms"], base["latency"]["p95_ms"]),
        }
        for name, r in results.items()
        if name != str(levels[0][0])
    }
    return {
        "method": (
            "uvicorn child process on 127.0.0.1, default settings (embedded store seeded, local "
            "MiniLM, offline reranker and chat model) with rate limits lifted and the disk "
            "embedding cache off (the questions repeat); httpx "
            "AsyncClient in the parent; signed-in customers; JSON (non-streamed) turns; a "
            "conversation handed to a person is replaced by a new one"
        ),
        "startup_s": round(server.startup_s, 1),
        "warmup": {"turns_ok": warm["turns_ok"], "errors": warm["errors"]},
        "levels": results,
        "ratios_vs_first": ratios,
        "streamed": streamed,
    }


def render(result: dict[str, Any]) -> list[str]:
    lines = heading(2, "Full turns through the HTTP API (offline provider, local MiniLM)")
    rows = []
    for r in result["levels"].values():
        lat = r["latency"]
        errors = sum(r["errors"].values())
        rows.append(
            [
                str(r["clients"]),
                r["turns_ok"],
                errors,
                r["wall_s"],
                r["req_per_s"],
                lat["p50_ms"],
                lat["p95_ms"],
                r["server_total_ms_p50"],
                r["handoffs"],
                " ".join(f"{k}:{v}" for k, v in sorted(r["confidence"].items())),
            ]
        )
    lines += table(
        [
            "clients",
            "turns",
            "errors",
            "wall s",
            "req/s",
            "p50 ms",
            "p95 ms",
            "in-turn p50 ms",
            "handoffs",
            "confidence bands",
        ],
        rows,
        digits=1,
    )
    lines.append(
        "  p50/p95: client-side request latency; in-turn: the reply's meta.latencyMs.total "
        "(storing the message → end of generation, as the engine times it); the rest is "
        "HTTP, auth, rate-limit counters, storing the reply and the conversation's counters"
    )
    cpu = [
        f"{r['clients']} clients {r['server_cpu_ms_per_turn']['loop']:.1f} ms loop + "
        f"{r['server_cpu_ms_per_turn']['other']:.1f} ms other threads"
        for r in result["levels"].values()
        if {"loop", "other"} <= set(r.get("server_cpu_ms_per_turn", {}))
    ]
    if cpu:
        lines.append("  server CPU per turn: " + "; ".join(cpu))
    first = next(iter(result["levels"]))
    for name, rr in result["ratios_vs_first"].items():
        lines.append(
            f"  {name} clients vs {first}: throughput {fmt_ratio(rr['req_per_s'])}, "
            f"p50 {fmt_ratio(rr['p50'])}, p95 {fmt_ratio(rr['p95'])}"
        )
    st = result["streamed"]
    lines.append(
        f"  streamed, 1 client, {st['turns_ok']} turns: first SSE event (the stored message) "
        f"p50 {st['first_event']['p50_ms']:.1f} ms, p95 {st['first_event']['p95_ms']:.1f} ms; "
        f"whole stream p50 {st['stream_total']['p50_ms']:.1f} ms"
    )
    lines.append(
        f"  app start-up (process start to /readyz 200, incl. seeding with MiniLM): "
        f"{result['startup_s']:.1f}s"
    )
    return lines


if __name__ == "__main__":  # pragma: no cover - manual use
    print("\n".join(render(asyncio.run(run([(1, 6), (4, 3)])))))
