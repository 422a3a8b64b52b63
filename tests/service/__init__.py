"""Tests of the service as a whole: auth, root, telemetry, the CLI, docs, validators."""
