"""Benchmarks: each `bench_*.py` module measures ratios side by side in one run and writes JSON under
bench/results/. Run them all with `make bench` (or `python -m bench [name ...]`). Never timed tests."""
