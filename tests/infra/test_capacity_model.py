"""infra/README.md's capacity figures and tables are what `python -m bench capacity` computes from the
results files on disk (a rerun benchmark must be carried into the README with `--write`), and the model's
arithmetic holds on figures worked by hand."""

from __future__ import annotations

from bench import bench_capacity as capacity


def test_the_readme_holds_the_capacity_model_of_the_results_on_disk() -> None:
    written = capacity.readme_section(capacity.README.read_text())
    assert written == capacity.section(), "infra/README.md is stale: run `python -m bench capacity --write`"


def test_the_model_on_round_figures() -> None:
    model = capacity.Inputs(
        worker_cpu=1e-3,
        gateway_cpu=0.5e-3,
        overhead=0.25,
        worker_base_mb=100,
        per_match_mb=1.0,
        gateway_mb=50,
        games={"Expedition": (100.0, 10e-6), "Dragonda": (1000.0, 5e-6)},
    )
    # t = 1 s, o = 0.25 s: 800 decisions/s cost 0.8 of a worker core (2 processes at 0.7) but 1,000 matches
    # need 16 processes of 64; 0.4 gateway cores, 1 process; memory 16 x 100 + 1,000 x 1 + 50 MB
    assert capacity.concurrent_rows(model)[2] == "| 1 s | 800 | 0.8 | 0.4 | 16 + 1 | 2.6 GB |"
    # 864,000 matches of 100 decisions a day: 1,000 decisions/s, 1 worker core, 1,000 x (t + o) in flight;
    # Dragonda's engine is 5 µs cheaper per decision, twice over (played and re-simulated): 10,000 x 0.99 ms
    rows = capacity.daily_rows(model, per_day=864_000)
    assert rows[0].startswith("| Expedition | 1.0 + 0.5 | 250 / 350 / 1,250 |")
    assert rows[1].startswith("| Dragonda | 9.9 + 5.0 | 2,500 / 3,500 / 12,500 |")
