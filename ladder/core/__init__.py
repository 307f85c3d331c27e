"""Shared plumbing of the ladder's API: the error format, throttles and pagination. No models, no domain."""
