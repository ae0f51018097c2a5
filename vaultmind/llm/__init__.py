"""Language-model clients: the one place vaultmind talks to an LLM (Ollama, through its client)."""
