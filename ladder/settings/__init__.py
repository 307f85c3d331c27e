"""Settings package: `base` (environment-driven, the default) and `test` (the suite)."""
