"""The daemon's HTTP API with clients that misbehave."""

from __future__ import annotations

import contextlib
import http.client
import logging
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from vaultmind import http_api, http_routes
from vaultmind.client import DaemonClient
from vaultmind.memory import Memory


def test_a_client_that_hangs_up_before_its_answer_costs_no_error_and_the_api_answers_on(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """A client that stopped waiting (its timeout passed while the daemon was busy) is not an
    error of the daemon: nothing is logged above debug, no traceback reaches stderr."""
    asked, release = threading.Event(), threading.Event()

    def slow(m: Memory, body: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        release.wait(10)
        return {"answer": "x" * 100_000}

    routes = http_routes.all_routes

    def with_slow() -> dict[tuple[str, str], Any]:
        return {**routes(), ("GET", "/v1/slow"): slow}

    monkeypatch.setattr(http_routes, "all_routes", with_slow)
    server = http_api.ApiServer(memory, "secret")
    server.start()
    caplog.set_level(logging.DEBUG, logger="vaultmind.http_api")
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as conn:
            conn.sendall(b"GET /v1/slow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n\r\n")
            assert asked.wait(10)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, not a clean close
        release.set()
        client = DaemonClient("127.0.0.1", server.port, "secret")
        assert client.call("GET", "/v1/health")["ok"] is True  # the API answers on
        deadline = time.monotonic() + 10  # the handler's write fails after the release, in its own thread
        while not any("left before its answer" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert any("left before its answer" in r.getMessage() for r in caplog.records)
    finally:
        release.set()
        server.stop()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err


def test_a_sync_or_reindex_through_the_daemon_answers_with_the_counts_a_local_one_gives(
    memory: Memory, vault: Path
) -> None:
    """`reindex --json` and `sync --json` have one shape whoever runs them: through the daemon
    they carry the notes and leaves counts too."""
    (vault / "a.md").write_text("# A\n\nalpha words\n\n## More\n\nbeta words\n")
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        client = DaemonClient("127.0.0.1", server.port, "secret")
        for route in ("/v1/reindex", "/v1/sync"):
            answer = client.call("POST", route, {})
            assert answer["notes"] == 1 and answer["chunks"] == answer["leaves"] == memory.counts()["leaves"] > 0
    finally:
        server.stop()


def test_the_api_returns_the_vaults_search_limit_of_hits_unless_asked_for_another(vault: Path) -> None:
    """`POST /v1/search` and `walk` / `search` through `/v1/query` returned 10 hits whatever the
    vault's `[search] limit`, which the command line honours."""
    from vaultmind.config import load_config

    (vault / ".vaultmind").mkdir(exist_ok=True)
    (vault / ".vaultmind" / "config.toml").write_text("[search]\nlimit = 3\n")
    for i in range(12):
        (vault / f"trip {i}.md").write_text(f"# Trip {i}\n\nthe lighthouse trip, day {i}\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        server = http_api.ApiServer(memory, "secret")
        server.start()
        try:
            client = DaemonClient("127.0.0.1", server.port, "secret")
            assert len(client.call("POST", "/v1/search", {"query": "lighthouse"})["hits"]) == 3
            for mode in ("walk", "search"):
                assert len(client.call("POST", "/v1/query", {"mode": mode, "args": {"query": "lighthouse"}})["hits"]) == 3
            assert len(client.call("POST", "/v1/search", {"query": "lighthouse", "limit": 5})["hits"]) == 5
        finally:
            server.stop()


def test_a_batch_whose_report_fails_is_still_answered_as_applied(
    memory: Memory, vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The daemon reports an API batch after it is committed (its log, `serve`'s output): a
    report that fails (a closed output) is logged, and the caller still hears the notes were
    applied — `ingest` must not take them for lost."""
    (vault / "a.md").write_text("# A\n\nalpha words\n")

    def broken(what: str, stats: object) -> None:
        raise OSError("output closed")

    server = http_api.ApiServer(memory, "secret", on_batch=broken)
    server.start()
    try:
        client = DaemonClient("127.0.0.1", server.port, "secret")
        with caplog.at_level(logging.ERROR, logger="vaultmind.http_routes"):
            answer = client.call("POST", "/v1/sync", {"paths": ["a.md"]})
        assert answer["added"] == 1
        assert any("the batch is applied" in r.getMessage() for r in caplog.records)
    finally:
        server.stop()


def test_a_burst_of_connections_waits_in_the_backlog_rather_than_being_refused(memory: Memory) -> None:
    """64 clients connecting at once (an agent's parallel tool calls) are all queued by the
    kernel until the server accepts them; a listen backlog of 5 dropped or reset most of them."""
    server = http_api.ApiServer(memory, "secret")  # listening, not yet accepting
    conns: list[socket.socket] = []
    try:
        for _ in range(64):
            conns.append(socket.create_connection(("127.0.0.1", server.port), timeout=0.5))
        server.start()
        for conn in conns[:3]:
            conn.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nConnection: close\r\n\r\n")
            conn.settimeout(10)
            assert b" 200 " in conn.recv(64).split(b"\r\n", 1)[0]
    finally:
        for conn in conns:
            conn.close()
        if server.thread.is_alive():
            server.stop()
        else:
            server.httpd.server_close()


def _ask(server: http_api.ApiServer, method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, Any]]:
    """(status, JSON answer) of one request to `server`, with its token."""
    import http.client
    import json

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Authorization": "Bearer secret"})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def test_every_wrong_request_gets_a_json_error_naming_what_to_fix_never_a_500(memory: Memory) -> None:
    import json

    server = http_api.ApiServer(memory, "secret")
    server.start()

    def ask(method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, Any]]:
        return _ask(server, method, path, body)

    def query(mode: str, **args: Any) -> tuple[int, dict[str, Any]]:
        return ask("POST", "/v1/query", json.dumps({"mode": mode, "args": args}).encode())

    try:
        wrong = [
            (query("query_source", source_id=5), "'source_id' must be a string"),
            (query("query_source", source_id="slack:x", query=42), "'query' must be a string"),
            (query("search_entities", query="alice", kind=["person"]), "'kind' must be a string"),
            (query("walk", query="\ud800"), "'query' is not valid Unicode"),
            (query("walk", query="budget", evidence="no"), "'evidence' must be true or false"),
            (query("walk", query="budget", budget=50), "unknown argument 'budget' for walk"),
            (query("fetch_leaves", ids=["\udcff"]), "'ids' is not valid Unicode"),
            (ask("POST", "/v1/search", b'{"query": "\xff\xfe"}'), "request body is not UTF-8"),
            (ask("POST", "/v1/search", b'{"query": ""}'), "'query' must be a non-empty string"),
            (ask("POST", "/v1/search", b'{"query": "x", "limit": true}'), "'limit' must be a positive integer"),
            (ask("POST", "/v1/search", b'{"query": "x", "limit": ' + b"9" * 5000 + b"}"), "request body is not JSON"),
            *((ask("POST", "/v1/query", json.dumps({"mode": "walk", "args": args}).encode()), "'args' must be an object") for args in ([], 0, False, "")),
            (ask("POST", "/v1/sync", json.dumps({"paths": ["a\u0000b.md"]}).encode()), "holds a NUL character"),
            (ask("POST", "/v1/sync", json.dumps({"paths": ["/a\u0000b.md"]}).encode()), "holds a NUL character"),
        ]
        for (status, answer), message in wrong:
            assert status == 400 and message in answer["error"]["message"], (message, status, answer)
        status, answer = ask("PUT", "/v1/query", b"{}")
        assert status == 405 and "method PUT is not allowed" in answer["error"]["message"]
        status, answer = ask("POST", "/v1/query", b" " * (http_api.MAX_BODY + 1))
        assert status == 413 and "too large" in answer["error"]["message"]
        status, answer = query("walk", query="budget", evidence=True, budget_tokens=200)
        assert status == 200 and "evidence" in answer
        for path in ("/etc/passwd", "../outside.md", "a/../../outside.md"):
            status, answer = ask("POST", "/v1/sync", json.dumps({"paths": [path]}).encode())
            assert status == 400 and "the vault" in answer["error"]["message"], answer
        (memory.config.vault / "abs.md").write_text("# Abs\n\nGiven by its absolute path.\n", encoding="utf-8")
        status, answer = ask("POST", "/v1/sync", json.dumps({"paths": [str(memory.config.vault / "abs.md")]}).encode())
        assert status == 200 and answer["added"] == 1, answer
        (memory.config.vault / "inner.md").write_text("# Inner\n\nThrough a dot-dot that stays inside.\n", encoding="utf-8")
        status, answer = ask("POST", "/v1/sync", json.dumps({"paths": ["sub/../inner.md"]}).encode())
        assert status == 200 and answer["added"] == 1, answer
        status, answer = ask("TRACE", "/v1/query")
        assert status == 405 and "method TRACE is not allowed" in answer["error"]["message"]
    finally:
        server.stop()


def test_a_misspelt_key_is_refused_on_every_route_never_read_as_absent(memory: Memory) -> None:
    """A key no route takes is named, with those it takes: read as absent, `{"pathz": […]}`
    synced the whole vault and `{"jobid": 2}` retried every failed job."""
    import json

    (memory.config.vault / "a.md").write_text("# A\n\nThe atlas launch.\n", encoding="utf-8")
    server = http_api.ApiServer(memory, "secret")
    server.start()

    def ask(method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if method == "GET":
            return _ask(server, "GET", path + "?" + "&".join(f"{k}={v}" for k, v in body.items()))
        return _ask(server, method, path, json.dumps(body).encode())

    try:
        status, answer = ask("POST", "/v1/sync", {"pathz": ["a.md"]})
        assert status == 400 and answer["error"]["message"] == "unknown key 'pathz' in the request", answer
        assert "gone, paths" in answer["error"]["hint"]
        assert memory.counts()["notes"] == 0, "nothing was synced"
        status, answer = ask("POST", "/v1/queue/retry", {"jobid": 2})
        assert status == 400 and "'jobid'" in answer["error"]["message"] and "job_id" in answer["error"]["hint"], answer
        for method, path in sorted({*http_routes.all_routes(), ("GET", "/v1/health")} - http_routes.QUERY_IGNORED):  # (the health check: its own test)
            status, answer = ask(method, path, {"zzz": 1})
            assert status == 400 and answer["error"]["message"] == "unknown key 'zzz' in the request", (path, status, answer)
    finally:
        server.stop()


def test_a_busy_daemon_is_said_to_be_busy_not_stopped(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request that waits longer than the client's timeout on a daemon that still answers its
    health check (a large batch holds it) is "busy", not "may have stopped"."""
    from vaultmind.errors import DaemonError

    release = threading.Event()
    routes = http_routes.all_routes
    monkeypatch.setattr(http_routes, "all_routes", lambda: {**routes(), ("GET", "/v1/slow"): lambda m, b: release.wait(10) and {}})
    server = http_api.ApiServer(memory, "secret")
    server.start()
    client = DaemonClient("127.0.0.1", server.port, "secret", timeout=0.5)
    try:
        with pytest.raises(DaemonError, match="is busy") as busy:
            client.call("GET", "/v1/slow")
        assert "ask again in a moment" in (busy.value.hint or "")
    finally:
        release.set()
        server.stop()
    with pytest.raises(DaemonError, match="cannot reach the daemon"):
        client.call("GET", "/v1/status")


def test_a_polled_status_never_holds_background_work_back(memory: Memory) -> None:
    """A status bar polling `/v1/status` every second had counted as someone waiting: background
    upkeep (names, summaries) waited for a pause that never came."""
    import time

    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        client = DaemonClient("127.0.0.1", server.port, "secret")
        before = memory._last_foreground
        time.sleep(0.01)
        client.call("GET", "/v1/status")
        client.call("GET", "/v1/health")
        assert memory._last_foreground == before, "polling is no foreground work"
        client.call("POST", "/v1/search", {"query": "anything"})
        assert memory._last_foreground > before, "a search is"
    finally:
        server.stop()


def test_every_error_an_agent_gets_has_one_shape_and_says_what_to_send_instead(memory: Memory) -> None:
    """A route asked with the method it does not take is 405 naming the one it takes (it was a
    404 "no route", as if the route did not exist); a wrong token's 401 and an unknown route's
    404 carry the `path` and `hint` every other error carries: where the token is (not the vault's
    path: the caller has not shown it may know it), which routes there are."""
    import http.client
    import json

    server = http_api.ApiServer(memory, "secret")
    server.start()

    def ask(method: str, path: str, token: str = "secret") -> tuple[int, dict[str, Any], str | None]:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            conn.request(method, path, body=b"{}" if method == "POST" else None, headers={"Authorization": f"Bearer {token}"})
            response = conn.getresponse()
            return response.status, json.loads(response.read()), response.getheader("Allow")
        finally:
            conn.close()

    try:
        status, answer, allow = ask("GET", "/v1/search")
        assert (status, allow) == (405, "POST"), answer
        assert answer["error"]["hint"] == "use POST /v1/search"
        status, answer, allow = ask("POST", "/v1/health")
        assert (status, allow) == (405, "GET") and answer["error"]["hint"] == "use GET /v1/health"
        status, answer, allow = ask("PUT", "/v1/search")  # a method no route takes: `Allow` all the same
        assert (status, allow) == (405, "POST") and answer["error"]["hint"] == "use POST /v1/search"
        status, answer, allow = ask("DELETE", "/v1/nowhere")
        assert (status, allow) == (405, "GET, POST") and answer["error"]["hint"] == "use GET or POST"
        status, answer, allow = ask("PUT", "/v1/search", token="stale")  # which routes exist: said to the token's holder only
        assert (status, allow) == (401, None) and ".vaultmind/daemon.json" in answer["error"]["hint"]

        status, answer, _ = ask("GET", "/v1/serach")
        assert status == 404 and set(answer["error"]) == {"code", "message", "path", "hint"}
        assert "POST /v1/search" in answer["error"]["hint"] and "GET /v1/status" in answer["error"]["hint"]

        status, answer, _ = ask("GET", "/v1/status", token="stale")
        assert status == 401 and set(answer["error"]) == {"code", "message", "path", "hint"}
        assert answer["error"]["path"] is None and ".vaultmind/daemon.json" in answer["error"]["hint"]

        status, answer, _ = ask("POST", "/v1/search")  # a known route with a bad body is still a 400
        assert status == 400 and answer["error"]["message"] == "'query' must be a non-empty string"
    finally:
        server.stop()


def test_an_unexpected_failure_is_answered_in_the_same_error_shape(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(m: Memory, body: dict[str, Any]) -> Any:
        raise RuntimeError("boom")

    routes = http_routes.all_routes
    monkeypatch.setattr(http_routes, "all_routes", lambda: {**routes(), ("GET", "/v1/broken"): broken})
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        import http.client
        import json

        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/v1/broken", headers={"Authorization": "Bearer secret"})
        response = conn.getresponse()
        answer = json.loads(response.read())
        conn.close()
        assert response.status == 500 and set(answer["error"]) == {"code", "message", "path", "hint"}
        assert answer["error"]["code"] == "internal" and "RuntimeError: boom" in answer["error"]["message"]
    finally:
        server.stop()


def test_a_sync_of_paths_names_the_ones_not_in_the_vault(memory: Memory, vault: Path) -> None:
    """`{"paths": ["nope.md"]}` answered all zeros, without a word that the path is not there.
    A note deleted since it was indexed is `deleted`, not missing; a path the ignore rules leave
    out syncs nothing and is named `ignored`; the `gone` paths (renamed notes' old places) are
    synced alike and never missing, though the watcher may have forgotten them first."""
    (vault / "here.md").write_text("# Here\n\nA note that exists.\n", encoding="utf-8")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "hidden.md").write_text("# Hidden\n\nObsidian's own.\n", encoding="utf-8")
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        client = DaemonClient("127.0.0.1", server.port, "secret")
        answer = client.call("POST", "/v1/sync", {"paths": ["nope.md", "here.md", "gone/", ".obsidian/hidden.md"]})
        assert answer["added"] == 1 and answer["missing"] == ["gone", "nope.md"], answer
        assert answer["ignored"] == [".obsidian/hidden.md"], answer
        (vault / "here.md").unlink()
        answer = client.call("POST", "/v1/sync", {"paths": ["here.md"]})
        assert answer["deleted"] == 1 and answer["missing"] == [] and answer["ignored"] == [], answer
        answer = client.call("POST", "/v1/sync", {"paths": [], "gone": ["here.md", "moved.md"]})
        assert answer["deleted"] == 0 and answer["missing"] == [], answer
        answer = client.call("POST", "/v1/sync", {})
        assert "missing" not in answer and "notes" in answer, answer
    finally:
        server.stop()


def test_a_chunked_body_is_refused_never_read_as_a_whole_vault_sync(memory: Memory, vault: Path) -> None:
    """A body without a Content-Length (chunked) is answered 411, not taken for `{}` — which,
    for `/v1/sync`, syncs the whole vault for a request that named one path — and read to its end
    first, so the client still sending it gets the answer instead of a broken pipe; a negative
    Content-Length is a 400."""
    import http.client
    import json

    (vault / "other.md").write_text("# Other\n\nNot named by the request.\n", encoding="utf-8")
    server = http_api.ApiServer(memory, "secret")
    server.start()
    headers = {"Authorization": "Bearer secret", "Content-Type": "application/json"}
    try:
        body = json.dumps({"paths": ["nope.md"], "pad": "x" * 4096}).encode()
        for _ in range(5):  # the body comes in many chunks, still being sent when the server has its headers
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            try:
                parts = iter([body[i:i + 64] for i in range(0, len(body), 64)])
                conn.request("POST", "/v1/sync", body=parts, headers=headers, encode_chunked=True)
                response = conn.getresponse()
                answer = json.loads(response.read())
            finally:
                conn.close()
            assert response.status == 411 and "Content-Length" in answer["error"]["message"]
        assert memory.index.scalar("SELECT count(*) FROM notes") == 0  # nothing synced
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.putrequest("POST", "/v1/sync")
        for name, value in {**headers, "Content-Length": "-5"}.items():
            conn.putheader(name, value)
        conn.endheaders()
        response = conn.getresponse()
        answer = json.loads(response.read())
        conn.close()
        assert response.status == 400 and "negative" in answer["error"]["message"]
        assert memory.index.scalar("SELECT count(*) FROM notes") == 0
    finally:
        server.stop()


def test_a_refused_request_is_answered_though_its_body_was_still_being_sent(memory: Memory) -> None:
    """A request refused before its body is read (a stale token, a route that is not there or
    does not take the method, a daemon stopping) was answered and its connection closed with the
    body unread: a client still sending it — any body past the socket's buffers, an `ingest` of
    many notes — got a broken pipe or a reset instead of the answer and its hint."""
    import http.client
    import json

    body = json.dumps({"paths": ["a.md"], "pad": "x" * (16 << 20)}).encode()  # past what the kernel buffers
    server = http_api.ApiServer(memory, "secret")
    server.start()

    def refused(method: str, path: str, token: str = "secret") -> int:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers={"Authorization": f"Bearer {token}"})
            response = conn.getresponse()
            assert json.loads(response.read())["error"]["hint"]
            return response.status
        finally:
            conn.close()

    try:
        assert refused("POST", "/v1/sync", token="stale") == 401
        assert refused("POST", "/v1/nowhere") == 404
        assert refused("POST", "/v1/health") == 405
        assert refused("PUT", "/v1/sync") == 405
        server.requests.drain(0.0, None)  # as `stop` begins: no new request is taken
        assert refused("POST", "/v1/sync") == 503
    finally:
        server.stop()
    assert memory.index.scalar("SELECT count(*) FROM notes") == 0


def test_a_refused_request_that_waits_to_be_told_to_send_its_body_is_answered_at_once(memory: Memory) -> None:
    """A client that sends `Expect: 100-continue` (curl does, for a body over 1 MB) sends its body
    only when told to, or once its own wait passes: a refused request is answered at once, not
    after the server waited for a body that never came (a minute, then the connection closed
    with no answer) or for the client's wait to pass and the whole body to be read."""
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        for path, token, status in (("/v1/nowhere", "secret", b" 404 "), ("/v1/sync", "stale", b" 401 ")):
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
                conn.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 5000000\r\nExpect: 100-continue\r\n\r\n".encode()
                )
                answer = b""
                while chunk := conn.recv(65536):  # (a socket timeout here: no answer within 10 s)
                    answer += chunk
            assert status in answer.split(b"\r\n", 1)[0] and b'"hint"' in answer
    finally:
        server.stop()


def test_a_refused_body_trickled_in_is_read_for_a_bounded_time(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The body of a refused request is read before the answer, so a client still sending it is
    not cut off — for `DRAIN_S` at most: one that sends a byte now and then (a request with no
    token too) held a thread for as long as it went on, its answer never given."""
    monkeypatch.setattr(http_api, "DRAIN_S", 1.0)
    server = http_api.ApiServer(memory, "secret")
    server.start()
    stop = threading.Event()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            conn.sendall(b"POST /v1/sync HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000\r\n\r\n")

            def trickle() -> None:
                with contextlib.suppress(OSError):
                    while not stop.wait(0.05):
                        conn.sendall(b" ")

            sender = threading.Thread(target=trickle)
            sender.start()
            started = time.monotonic()
            try:
                answer = conn.recv(65536)  # (a socket timeout here: no answer within 10 s)
            except ConnectionResetError:  # the answer, then the body left unread: the reset may come first
                answer = b""
            assert time.monotonic() - started < 8
            assert answer == b"" or answer.split(b"\r\n", 1)[0].endswith(b" 401 Unauthorized"), answer[:200]
            stop.set()
            sender.join(10)
    finally:
        stop.set()
        server.stop()


def test_a_refused_request_whose_body_never_comes_is_answered_after_the_drains_bound(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that announces a body and sends none (it waits for the answer first) is
    answered once `DRAIN_S` has passed, not left with no answer when the socket's timeout
    (`SOCKET_TIMEOUT_S`, a minute) ended the wait for the body."""
    monkeypatch.setattr(http_api, "DRAIN_S", 1.0)
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            conn.sendall(b"POST /v1/nowhere HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer secret\r\nContent-Length: 1000\r\n\r\n")
            answer = conn.makefile("rb").read()  # (a socket timeout here: no answer within 10 s)
        assert answer.split(b"\r\n", 1)[0].endswith(b" 404 Not Found") and b'"hint"' in answer, answer[:200]
    finally:
        server.stop()


def test_the_health_check_takes_a_cache_busting_query_and_head(memory: Memory) -> None:
    """Monitors and browsers probe with `GET /v1/health?_=1700000000`, uptime checkers and
    `curl -I` with HEAD: one was refused 400 ("unknown key '_'"), the other 405. The health
    check ignores its query; HEAD on a GET route answers the GET's status and headers, no body.
    Every other route still refuses a key it does not take."""
    import http.client
    import json

    server = http_api.ApiServer(memory, "secret")
    server.start()

    def ask(method: str, path: str) -> tuple[int, bytes, dict[str, str]]:
        if method == "HEAD":  # what the server sends, to its end (http.client reads no body after a HEAD)
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
                sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nConnection: close\r\n\r\n".encode())
                raw = b"".join(iter(lambda: sock.recv(65536), b""))
            head, _, body = raw.partition(b"\r\n\r\n")
            status_line, *lines = head.decode().split("\r\n")
            return int(status_line.split()[1]), body, dict(line.split(": ", 1) for line in lines)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            conn.request(method, path, headers={"Authorization": "Bearer secret"})
            response = conn.getresponse()
            return response.status, response.read(), dict(response.getheaders())
        finally:
            conn.close()

    try:
        status, body, _ = ask("GET", "/v1/health?_=1700000000")
        assert status == 200 and json.loads(body)["ok"] is True, body
        got, got_body, got_headers = ask("GET", "/v1/health")
        status, body, headers = ask("HEAD", "/v1/health")
        assert (status, body) == (200, b"") and headers["Content-Type"] == got_headers["Content-Type"]
        assert int(headers["Content-Length"]) > 0 and got == 200 and json.loads(got_body)["ok"] is True
        status, body, _ = ask("HEAD", "/v1/status?_=1")  # a GET route's refusal, headers only too
        assert (status, body) == (400, b"")
        status, body, headers = ask("HEAD", "/v1/search")  # no GET: the 405 as before, headers only
        assert (status, body, headers["Allow"]) == (405, b"", "POST")
        status, body, _ = ask("GET", "/v1/status?_=1")
        assert status == 400 and json.loads(body)["error"]["message"] == "unknown key '_' in the request"
    finally:
        server.stop()


def _raw_head(port: int, path: str) -> tuple[int, bytes, dict[str, str]]:
    """A HEAD's status, what the server sent after its headers (nothing, for a HEAD) and its
    headers, read from a raw socket: http.client reads no body after a HEAD."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nConnection: close\r\n\r\n".encode())
        raw = b"".join(iter(lambda: sock.recv(65536), b""))
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    return int(status_line.split()[1]), body, dict(line.split(": ", 1) for line in lines)


def test_a_head_on_a_path_no_route_has_is_the_gets_404(memory: Memory) -> None:
    """A monitor probing a mistyped path with HEAD learns what the GET would: the path is not
    there (404), not that HEAD is a method the API refuses (405 "use GET or POST")."""
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        status, body, headers = _raw_head(server.port, "/v1/helth")
        assert (status, body) == (404, b""), (status, body)
        assert "Allow" not in headers
    finally:
        server.stop()


def test_a_head_on_the_status_leaves_the_notice_for_the_get_that_says_it(memory: Memory) -> None:
    """`?notice=take` is the user's status, which says a quarantine's notice once and forgets
    it. A HEAD sends no body: taking the notice there lost it, never said to anyone."""
    import json

    from vaultmind.index.quarantine import QUARANTINE_DIR, keep_notice

    index_path = memory.config.index_path
    (index_path.parent / QUARANTINE_DIR).mkdir(parents=True, exist_ok=True)
    keep_notice(index_path, "the index was moved aside")
    server = http_api.ApiServer(memory, "secret")
    server.start()
    try:
        status, body, _ = _raw_head(server.port, "/v1/status?notice=take")
        assert (status, body) == (200, b"")
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("GET", "/v1/status?notice=take", headers={"Authorization": "Bearer secret"})
        answer = json.loads(conn.getresponse().read())
        conn.close()
        assert "the index was moved aside" in json.dumps(answer)
    finally:
        server.stop()
