"""The public names of `import moot`, which are loaded on first use."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import moot


@pytest.mark.parametrize("name", moot.__all__)
def test_every_public_name_is_the_object_its_module_defines(name: str) -> None:
    home = importlib.import_module(moot._EXPORTS.get(name, "moot.export"))
    assert getattr(moot, name) is getattr(home, name)


def test_export_is_the_function_even_after_its_subpackage_is_imported() -> None:
    importlib.import_module("moot.export.markdown")
    assert callable(moot.export) and moot.export.__name__ == "export"


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        moot.nope  # noqa: B018


@pytest.mark.subprocess
def test_the_cli_does_not_load_provider_sdks_until_a_debate_runs() -> None:
    code = "import sys, moot.cli.app; print('pydantic_ai.models' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
