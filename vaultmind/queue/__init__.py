"""The durable work queue: jobs with leases, attempts, dedupe keys and typed failures.

- `store`      the `jobs` table: enqueue, claim with a lease, settle with the lease token, retry, status
- `failures`   failure classes, how each is retried, and their backoff
- `kinds`      job kinds (what a job does; which jobs should exist), the handler context
- `reconcile`  recreate missing jobs from index state, cancel orphans, recover expired leases
- `workers`    the worker pool with its bounded LLM gate
- `routes`     loopback-API routes (`/v1/queue`, `/v1/queue/retry`, `/v1/explain`)
"""
