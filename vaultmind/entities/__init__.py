"""Entities: extraction, canonical ids, the alias registry (entity notes) and the co-occurrence graph.

- `ids`: canonical ids and the one normalization used on ingest and queries;
- `extract`: regex extractors, NER label mapping, message authors;
- `ner`: spaCy loading (lazy, degrading) and the NER cache;
- `registry`, `registry_store`: entity notes as an alias registry (exact and fuzzy matching,
  ambiguity, merges), read from the index;
- `resolve`: one text → the entities it mentions (shared by ingest and queries);
- `graph`: the sync deriver (occurrences, edges) and NER backfill; `catalog`: the `entities`
  rows; `changes`: which leaves a registry edit affects; `tables`: row plumbing;
- `query`: `query_entities` for the read path;
- `notes`: creating entity notes for entities with enough evidence;
- `read`: listing and showing entities (CLI, API).
"""
