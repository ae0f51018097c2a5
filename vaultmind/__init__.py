"""vaultmind: an Obsidian-vault-native personal memory."""

import os as _os

# vaultmind's matrix products are matrix × vector (memory-bound): BLAS threads buy nothing and,
# on a busy machine, their spin-waiting made a search 5-10x slower (see docs/benchmarks-history.md).
# Set before numpy loads; an explicit setting in the environment wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")

__version__ = "0.1.0"
