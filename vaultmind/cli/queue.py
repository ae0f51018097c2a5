"""`vaultmind queue` and `vaultmind retry`: the work queue, its failures, and requeueing.

    vaultmind queue [--list] [--run] [--vault V] [--json]
    vaultmind retry [--failed | --all | JOB_ID] [--vault V] [--json]

`queue` shows the depth (ready, deferred, running), failures grouped by cause with what to do,
and admission counts; `--list` adds the jobs not done; `--run` (without a daemon) syncs, then
works the queue in the foreground until nothing is ready. `retry` requeues failed jobs
(default), failed and deferred ones (`--all`), or one job, with fresh attempts. Both go
through the daemon (`GET /v1/queue`, `POST /v1/queue/retry`) when one runs for the vault.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import config_from_args, through_daemon_or_local
from vaultmind.cli.output import emit, format_queue
from vaultmind.errors import UsageError
from vaultmind.plural import counted
from vaultmind.shell import command_line

RUN_TIMEOUT_S = 600.0  # how long `queue --run` works the queue unless --timeout says otherwise

if TYPE_CHECKING:
    from vaultmind.memory import Memory


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "queue",
        help="background work: queue depth, failures and their causes",
        description=(
            "Show the durable work queue: jobs ready, deferred (waiting for a backoff, e.g. while Ollama "
            "is unreachable), running and failed, the causes of failures with what to do, and admission "
            "counts. With --run (no daemon running), work the queue in the foreground."
        ),
    )
    p.add_argument("--list", action="store_true", help="also list the jobs that are not done (up to 50)")
    p.add_argument("--run", action="store_true", help="sync, then run the queue here until nothing is ready")
    p.add_argument(
        "--timeout", type=float, default=None, help=f"with --run: stop after this many seconds (default {RUN_TIMEOUT_S:g})"
    )
    vault_args(p)
    p.set_defaults(handler=cmd_queue)

    r: argparse.ArgumentParser = sub.add_parser(
        "retry",
        help="requeue failed jobs (or one job) with fresh attempts",
        description=(
            "Requeue jobs now with fresh attempts: failed ones (default, e.g. after `ollama pull`), failed "
            "and deferred ones (--all), or the job JOB_ID."
        ),
    )
    which = r.add_mutually_exclusive_group()
    which.add_argument("--failed", action="store_true", help="requeue failed jobs (the default)")
    which.add_argument("--all", action="store_true", help="requeue failed and deferred jobs")
    which.add_argument("job_id", nargs="?", type=int, metavar="JOB_ID", help="requeue this job")
    vault_args(r)
    r.set_defaults(handler=cmd_retry)


def cmd_queue(args: argparse.Namespace) -> int:
    from vaultmind.claim import daemon_pid

    config = config_from_args(args)  # a bad [queue] value is named with the vault's config file
    if args.run:  # a daemon running, or one starting (it holds the claim before it has an address)
        pid = daemon_pid(config)
        if pid is not None:
            raise UsageError(
                f"the daemon for {config.vault} (pid {pid}) already runs the queue with its workers",
                hint=f"drop --run, or stop the daemon first: `{command_line('stop', '--vault', config.vault)}`",
            )
    if args.timeout is not None and not args.run:  # (it was ignored without a word)
        raise UsageError("--timeout is how long --run works the queue", hint="add --run, or leave --timeout out")
    timeout = RUN_TIMEOUT_S if args.timeout is None else args.timeout
    if timeout <= 0:
        raise UsageError("--timeout must be positive")

    def local(memory: Memory) -> dict[str, Any]:
        from vaultmind.queue.routes import queue_report
        from vaultmind.queue.workers import WorkerPool

        pool = WorkerPool(config, memory)
        ran = None
        if args.run:
            from vaultmind.queue.status import queue_status

            memory.sync()
            pool.reconcile()
            ready = int(queue_status(memory.index).get("ready") or 0)  # (a job may add others: the total grows)
            progress = memory.syncer.progress or (lambda phase, done, total: None)
            ran = pool.drain(timeout_s=timeout, on_job=lambda done: progress("queue jobs", done, max(ready, done)))
        else:
            pool.reconcile()  # recreate work derivable from the index (cheap, idempotent)
        report = queue_report(memory.index, vault=memory.config.vault, jobs=args.list)
        if ran is not None:
            report["ran"] = ran
            report["processed"] = pool.status()["processed"]
        pool.context.close()
        return report

    def remote(client: Any) -> dict[str, Any]:
        report: dict[str, Any] = client.call("GET", "/v1/queue")
        if not args.list:
            report.pop("jobs", None)
        return report

    report = through_daemon_or_local(config, remote, local, progress=args.run)
    if args.json:
        emit(report)
    else:
        print("\n".join(format_queue(report, jobs=args.list)))
    return 0


def cmd_retry(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    body: dict[str, Any] = {"failed": True, "deferred": bool(args.all)}
    if args.job_id is not None:
        body["job_id"] = args.job_id

    def local(memory: Memory) -> dict[str, Any]:
        from vaultmind.queue.routes import retry_request

        return retry_request(memory.index, body, config=memory.config)

    result = through_daemon_or_local(config, lambda c: c.call("POST", "/v1/queue/retry", body), local)
    if args.json:
        emit(result)
    else:
        if result.get("note"):
            print(f"vaultmind: {result['note']}")
        else:
            ids = result.get("ids") or []
            shown = ", ".join(f"#{i}" for i in ids[:10]) + (" …" if len(ids) > 10 else "")
            print(f"vaultmind: requeued {counted(result['requeued'], 'job')}{': ' + shown if ids else ''}")
    return 0
