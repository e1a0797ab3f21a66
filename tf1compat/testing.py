"""Pytest helpers for migrating input pipelines: :func:`assert_pipelines_equal`,
:func:`tf1compat.compare` as an assertion (kept by :mod:`tf1compat.migrate.testing`)."""

from tf1compat.migrate.testing import assert_pipelines_equal

__all__ = ["assert_pipelines_equal"]
