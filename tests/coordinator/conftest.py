"""Fixtures shared by the coordinator's parity suites."""

from tests.coordinator.mock_assignor import mock_assignor  # noqa: F401
