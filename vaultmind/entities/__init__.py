"""Entities: extraction, canonical ids, the alias registry (entity notes) and the co-occurrence graph.

- `ids`: canonical ids and the one normalization used on ingest and queries;
- `extract`: regex extractors, NER label mapping, message authors;
- `ner`: spaCy loading (lazy, degrading) and running; `ner_process`: the model in a child
  process that stops when idle (the daemon's way); `ner_cache`: the NER cache and the texts
  still waiting for it;
- `registry`, `registry_store`: entity notes as an alias registry (exact and fuzzy matching,
  ambiguity, merges), read from the index;
- `resolve`: one text → the entities it mentions (shared by ingest and queries); `kinds`: one
  kind across the vault for a name read as a person, an organization, a product or a work;
  `shapes`: hits that are no name by their shape; `language`: texts the English model reads;
- `graph`: the sync deriver (occurrences, edges); `prep`: a leaf's mentions resolved where its
  note is parsed; `backfill`: NER outside the sync; `catalog`: the `entities` rows; `changes`:
  which leaves a registry edit affects; `tables`: row plumbing;
- `query`: `query_entities` for the read path (no NER model: known entities by their names);
- `notes`: creating entity notes for entities with enough evidence;
- `read`: listing and showing entities (CLI, API).
"""
