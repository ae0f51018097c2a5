"""Fakes of the network edge (a loopback Ollama), driven through the real clients in tests."""

from .ollama_server import FakeOllama, RecordedRequest, fake_vector, free_port, silent_host

__all__ = ["FakeOllama", "RecordedRequest", "fake_vector", "free_port", "silent_host"]
