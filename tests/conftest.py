"""Shared test set-up.

The tests import the installed package (`pip install .`), or a build tree when
PEREGRINE_LIBRARY points at a libperegrine.so built by meson.
"""
