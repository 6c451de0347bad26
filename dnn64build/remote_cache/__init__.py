"""A shared cache of action results over Bazel's HTTP cache protocol (see docs/ci.md)."""
