import pytest
import torch


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own empty experiment cache."""
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "cache"))
    torch.set_num_threads(2)
