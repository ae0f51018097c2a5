"""Entities: extraction, canonical ids, the alias registry (entity notes) and the co-occurrence graph.

- `ids`: canonical ids and the one normalization used on ingest and queries;
- `extract`: regex extractors, NER label mapping, message authors;
- `ner`: spaCy loading (lazy, degrading) and the NER cache;
- `registry`: entity notes as an alias registry, exact and fuzzy matching, ambiguity;
- `resolve`: one text → the entities it mentions (shared by ingest and queries);
- `graph`: the sync deriver (occurrences, edges, entities) and `query_entities`;
- `notes`: creating entity notes for entities with enough evidence;
- `read`: listing and showing entities (CLI, API).
"""
