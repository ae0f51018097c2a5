from vaultmind.cli.entry import run

raise SystemExit(run())
