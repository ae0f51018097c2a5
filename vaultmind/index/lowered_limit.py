"""A lowered DuckDB memory limit for the length of a large sync (`LoweredLimit`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultmind.index.pool import limit_setting, size_bytes

if TYPE_CHECKING:
    from vaultmind.index.store import Index


class LoweredLimit:
    """Lowers DuckDB's memory limit for a while, never raising it; `restore` puts it back."""

    def __init__(self, index: Index):
        self.index = index
        self.original: str | None = None  # the limit before `lower`, while lowered

    def lower(self, limit: str) -> None:
        with self.index.lock:
            current = str(self.index.scalar("SELECT current_setting('memory_limit')"))
            if self.original is None and size_bytes(limit) < size_bytes(current):
                with self.index.con.cursor() as own:  # (as `restore`)
                    own.execute(f"SET memory_limit = '{limit}'")
                self.original = current

    def restore(self) -> bool:
        """Put the limit back; False when it was not lowered."""
        if self.original is None:
            return False
        with self.index.lock, self.index.con.cursor() as own:  # a connection of its own: one a failed
            own.execute(f"SET memory_limit = '{limit_setting(self.original)}'")  # write aborted refuses a SET
            self.original = None
        return True
