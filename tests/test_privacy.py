"""`[privacy] mode = "local_only"`: a setting that would send text off this machine is refused
when the configuration is read; `doctor` says what leaves under `standard`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_main, write
from vaultmind.config import load_config
from vaultmind.errors import ConfigError
from vaultmind.privacy import cloud_model

LOCAL = '[privacy]\nmode = "local_only"\n'


def _settings(vault: Path, text: str) -> None:
    write(vault, ".vaultmind/config.toml", text)


def test_cloud_models_are_told_by_their_tag() -> None:
    assert cloud_model("gpt-oss:120b-cloud") and cloud_model("gemma4:cloud") and cloud_model("Kimi-K2:1T-Cloud")
    assert not cloud_model("llama3.2") and not cloud_model("llama3.2:latest") and not cloud_model("cloudy:7b")


def test_the_defaults_keep_everything_here(vault: Path) -> None:
    _settings(vault, LOCAL)
    assert load_config(vault).privacy_mode == "local_only"


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ('[ollama]\nhost = "http://192.168.1.20:11434"\n', "[ollama] host: http://192.168.1.20:11434 is another machine (admission, summaries send text there)"),
        ('[ollama]\nchat_model = "gpt-oss:120b-cloud"\n', "the model gpt-oss:120b-cloud: runs in Ollama's cloud (admission and summaries)"),
        ('[embeddings]\nprovider = "ollama"\nmodel = "embed:cloud"\n[admission]\nllm = false\n[trees]\nsummarizer = "fallback"\n', "the model embed:cloud: runs in Ollama's cloud (embeddings)"),
        ('[trees]\nsummarizer_model = "qwen3:480b-cloud"\n', "the model qwen3:480b-cloud: runs in Ollama's cloud (summaries)"),
        ('[server]\nhost = "0.0.0.0"\n', "[server] host: 0.0.0.0 lets other machines ask the memory"),
    ],
)
def test_local_only_refuses_what_would_leave_naming_the_setting(vault: Path, settings: str, named: str) -> None:
    _settings(vault, LOCAL + settings)
    with pytest.raises(ConfigError) as caught:
        load_config(vault)
    assert caught.value.message == f'[privacy] mode = "local_only" keeps the memory on this machine, but {named}'
    assert caught.value.path == str(vault / ".vaultmind" / "config.toml")
    _settings(vault, settings)  # standard: the settings are followed
    assert load_config(vault).privacy_mode == "standard"


def test_a_remote_ollama_nothing_uses_is_no_egress(vault: Path) -> None:
    _settings(vault, LOCAL + '[ollama]\nhost = "http://gpu-box:11434"\n[admission]\nllm = false\n[trees]\nsummarizer = "fallback"\n')
    assert load_config(vault).ollama_host == "http://gpu-box:11434"


def test_the_environment_cannot_send_it_elsewhere_either(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settings(vault, LOCAL)
    monkeypatch.setenv("VAULTMIND_OLLAMA_HOST", "http://ollama.example.net:11434")
    with pytest.raises(ConfigError, match=r"\[ollama\] host: http://ollama.example.net:11434 is another machine"):
        load_config(vault)


def test_an_unknown_mode_is_named(vault: Path) -> None:
    _settings(vault, '[privacy]\nmode = "paranoid"\n')
    with pytest.raises(ConfigError, match=r"\[privacy\] mode = 'paranoid' is no privacy mode") as caught:
        load_config(vault)
    assert caught.value.hint == '"standard" or "local_only"'


def test_doctor_says_what_leaves_under_standard(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    _settings(vault, '[entities]\nner_model = "off"\n[embeddings]\nprovider = "none"\n[ollama]\nchat_model = "gpt-oss:20b-cloud"\nhost = "http://127.0.0.1:1"\n')
    _, data, _ = run_main(capsys, "doctor", "--vault", str(vault), "--json")
    check = next(c for c in data["checks"] if c["name"] == "privacy")
    assert check["detail"] == "standard: text leaves this machine — the model gpt-oss:20b-cloud: runs in Ollama's cloud (admission and summaries)"
    assert check["hint"] == 'to refuse it: [privacy] mode = "local_only"'
    _settings(vault, LOCAL + '[entities]\nner_model = "off"\n[embeddings]\nprovider = "none"\n[ollama]\nhost = "http://127.0.0.1:1"\n')
    _, data, _ = run_main(capsys, "doctor", "--vault", str(vault), "--json")
    check = next(c for c in data["checks"] if c["name"] == "privacy")
    assert check["detail"] == "local_only: nothing leaves this machine"
