import importlib

import pytest

import deidlib.corpus as corpus


@pytest.mark.parametrize("name", corpus.__all__)
def test_public_name_resolves_to_its_submodule_object(name):
    value = getattr(corpus, name)
    modname = corpus._LAZY.get(name)
    if modname is not None:
        assert value is getattr(importlib.import_module(f"deidlib.corpus.{modname}"), name)


def test_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        corpus.nope  # noqa: B018
