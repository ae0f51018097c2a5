"""vaultmind: an Obsidian-vault-native personal memory."""

__version__ = "0.1.0"
