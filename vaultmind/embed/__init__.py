"""Embedders behind one narrow protocol, chosen by name from a registry."""
