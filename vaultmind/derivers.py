"""The derivers a sync runs after writing leaf rows, in order.

Each feature that derives rows from leaves (entities and their co-occurrence graph, admission
decisions, …) plugs in here; `sync.Deriver` is the protocol.
"""

from __future__ import annotations

from vaultmind.config import Config
from vaultmind.sync_derive import Deriver


def build_derivers(config: Config) -> list[Deriver]:
    derivers: list[Deriver] = []
    from vaultmind.entities.graph import EntityDeriver

    derivers.append(EntityDeriver.from_config(config))
    from vaultmind.admission.deriver import AdmissionDeriver

    derivers.append(AdmissionDeriver(config))
    from vaultmind.tree.deriver import TreeDeriver

    derivers.append(TreeDeriver())
    return derivers
