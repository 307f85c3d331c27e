"""`caravan`: the local runner. Lists games, prints a game's reference bundle offline (`caravan schema`,
engine_service.cli_schema), plays matches and seat-rotated series with house bots, plays your own bot
against house bots through a local gateway (`caravan local`), looks at a running gateway (`caravan
gateway`, engine_service.cli_gateway), and verifies or shows recorded matches, with the same referee the
server uses.

Layer: a command-line front over engine_service.games, .referee and .policies; no Django. gRPC only in
`caravan local` and `caravan gateway`, which hand their arguments to `engine_service.gateway.local` and
`engine_service.cli_gateway` (imported only then).
Bad arguments get a one-line message and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NoReturn

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from engine_service.cli_dataset import add_parser as add_dataset_parser
from engine_service.cli_schema import SchemaError
from engine_service.cli_schema import add_parser as add_schema_parser
from engine_service.games import GameError, GameState, get_game, list_games
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, ReplayMismatch, frame_with_words, run_match, verify
from engine_service.referee.record import RecordError
from engine_service.referee.result import MatchResult

out = Console()
err = Console(stderr=True)


class UsageError(Exception):
    """A bad argument; the message is shown as is."""


def _fail(message: str) -> NoReturn:
    err.print(f"[bold red]caravan:[/] {message}", highlight=False)
    raise SystemExit(2)


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """`--option name=value` pairs; values are JSON when they parse (true, 3, "x"), else plain strings."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--option takes name=value, not {pair!r}")
        try:
            options[name] = json.loads(raw)
        except json.JSONDecodeError:
            options[name] = raw
    return options


def parse_bots(text: str, players: int) -> list[str]:
    bots = [b.strip() for b in text.split(",") if b.strip()]
    if len(bots) != players:
        raise UsageError(f"--bots names {len(bots)} bot(s) but --players is {players}")
    for name in bots:
        try:
            make_policy(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
    return bots


def policy_seed(match_seed: int, seat: int) -> int:
    return match_seed * 7919 + seat


def play_one(
    game_id: str, players: int, bots: Sequence[str], seed: int, options: dict[str, Any]
) -> MatchRecord:
    seats = [HouseSeat(make_policy(name, policy_seed(seed, i)), name) for i, name in enumerate(bots)]
    return run_match(game_id, players, seed, seats, options, match_id=f"local-{seed}")


# --- games ---------------------------------------------------------------------------------------------------
def cmd_games(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps([spec.describe() for spec in list_games()], indent=1))
        return 0
    table = Table(title="Games")
    for column in ("game", "name", "players", "options", "turn cap"):
        table.add_column(column)
    for spec in list_games():
        opts = "\n".join(
            f"{o.name}={json.dumps(o.default)}"
            + (f" ({'/'.join(json.dumps(c) for c in o.choices)})" if o.choices else "")
            + f": {o.description}"
            for o in spec.options
        )
        table.add_row(
            spec.game_id, spec.name, f"{spec.min_players}-{spec.max_players}", opts or "-", spec.turn_cap_note
        )
    out.print(table)
    return 0


# --- play ----------------------------------------------------------------------------------------------------
def cmd_play(args: argparse.Namespace) -> int:
    spec = get_game(args.game)
    options = parse_options(args.option)
    spec.resolve_options(options, args.players)
    bots = parse_bots(args.bots, args.players)
    seats = [HouseSeat(make_policy(name, policy_seed(args.seed, i)), name) for i, name in enumerate(bots)]
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=args.quiet,
    ) as progress:
        task = progress.add_task("starting", total=None)

        def on_step(state: GameState, record: MatchRecord) -> None:
            seat = state.current_seats()[0] if not state.is_over() else None
            progress.update(task, description=f"{args.game}: step {state.step}, deciding: seat {seat}")

        record = run_match(
            args.game, args.players, args.seed, seats, options, match_id=f"local-{args.seed}", on_step=on_step
        )
    if args.out:
        record.dump(args.out)
    _print_result(record, bots)
    if args.out:
        out.print(f"record written to {args.out} ({record.steps} steps)")
    return 0


def _print_result(record: MatchRecord, bots: Sequence[str]) -> None:
    result = MatchResult.of(record)
    title = f"{record.game_id}, seed {record.seed}: {result.game_reason} after {record.steps} steps"
    table = Table(title=title)
    for column in ("rank", "seat", "bot", "score", "tie-break", "faults"):
        table.add_column(column, justify="right" if column in ("rank", "seat", "score") else "left")
    for seat in sorted(result.seats, key=lambda s: s.rank):
        table.add_row(
            str(seat.rank),
            str(seat.seat),
            bots[seat.seat],
            str(seat.score),
            json.dumps(result.game["tiebreaks"][seat.seat]),
            str(len(seat.faults)) if seat.faults else "",
        )
    out.print(table)


# --- series --------------------------------------------------------------------------------------------------
@dataclass
class BotTally:
    name: str
    games: int = 0
    wins: float = 0.0
    ranks: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal confidence interval."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = sum(values) / n
    if n == 1:
        return mean, 0.0
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def series_schedule(bots: Sequence[str], games: int, seed: int) -> list[tuple[int, list[str], list[int]]]:
    """(seed, bots by seat, lineup index by seat) per game: each seed is played once per seat rotation, so
    every bot sits in every seat with the same cards and dice (duplicate format)."""
    n = len(bots)
    schedule = []
    for g in range(games):
        block, rotation = divmod(g, n)
        lineup = [(i + rotation) % n for i in range(n)]
        schedule.append((seed + block, [bots[j] for j in lineup], lineup))
    return schedule


def _series_game(job: tuple[str, int, list[str], int, dict[str, Any]]) -> dict[str, Any]:
    game_id, players, bots, seed, options = job
    record = play_one(game_id, players, bots, seed, options)
    result = MatchResult.of(record)
    return {
        "ranks": result.ranks,
        "scores": result.scores,
        "faults": len(record.faults),
        "reason": result.game_reason,
    }


def cmd_series(args: argparse.Namespace) -> int:
    spec = get_game(args.game)
    options = parse_options(args.option)
    spec.resolve_options(options, args.players)
    bots = parse_bots(args.bots, args.players)
    if args.games < 1:
        raise UsageError("--games must be at least 1")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    schedule = series_schedule(bots, args.games, args.seed)
    tallies = [BotTally(f"{name} (#{i})" if bots.count(name) > 1 else name) for i, name in enumerate(bots)]
    capped = 0
    jobs = [(args.game, args.players, seat_bots, seed, options) for seed, seat_bots, _ in schedule]
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=args.quiet,
    ) as progress:
        task = progress.add_task(f"{args.game} series", total=len(jobs))
        pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
        try:
            results = pool.map(_series_game, jobs) if pool else map(_series_game, jobs)
            for (_, _, lineup), result in zip(schedule, results, strict=True):
                capped += result["reason"] != "completed"
                winners = [s for s in range(args.players) if result["ranks"][s] == 1]
                for seat, bot_index in enumerate(lineup):
                    tally = tallies[bot_index]
                    tally.games += 1
                    tally.ranks.append(result["ranks"][seat])
                    tally.scores.append(result["scores"][seat])
                    if seat in winners:
                        tally.wins += 1 / len(winners)
                progress.advance(task)
        finally:
            if pool:
                pool.shutdown(cancel_futures=True)
    table = Table(
        title=f"{args.game}, {args.players} players, {args.games} games from seed {args.seed} "
        f"(seats rotated over each seed)"
    )
    for column in ("bot", "games", "wins", "win rate", "mean rank (95% CI)", "mean score (95% CI)"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    summary = []
    for tally in tallies:
        rank, rank_ci = mean_ci(tally.ranks)
        score, score_ci = mean_ci(tally.scores)
        rate = tally.wins / tally.games
        table.add_row(
            tally.name,
            str(tally.games),
            f"{tally.wins:g}",
            f"{rate:.1%}",
            f"{rank:.2f} ± {rank_ci:.2f}",
            f"{score:.1f} ± {score_ci:.1f}",
        )
        summary.append(
            {
                "bot": tally.name,
                "games": tally.games,
                "wins": tally.wins,
                "win_rate": rate,
                "mean_rank": rank,
                "mean_rank_ci95": rank_ci,
                "mean_score": score,
                "mean_score_ci95": score_ci,
            }
        )
    out.print(table)
    if capped:
        out.print(f"{capped} game(s) ended at the turn cap")
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(
                {
                    "game": args.game,
                    "players": args.players,
                    "games": args.games,
                    "seed": args.seed,
                    "options": options,
                    "bots": summary,
                    "turn_cap_games": capped,
                },
                fh,
                indent=1,
            )
    return 0


# --- replay --------------------------------------------------------------------------------------------------
def cmd_replay_verify(args: argparse.Namespace) -> int:
    record = MatchRecord.load(args.file)
    try:
        state = verify(record)
    except ReplayMismatch as exc:
        err.print(f"[bold red]does not verify:[/] {exc}", highlight=False)
        return 1
    out.print(
        f"verified: {record.game_id}, seed {record.seed}, {record.steps} steps, "
        f"{len(record.hashes)} hashes checked, final hash {state.state_hash()}"
    )
    return 0


def cmd_replay_show(args: argparse.Namespace) -> int:
    record = MatchRecord.load(args.file)
    if not 0 <= args.step <= record.steps:
        raise UsageError(f"--step must be within 0-{record.steps} for this match")
    if args.seat is not None and not 0 <= args.seat < record.num_players:
        raise UsageError(f"--seat must be within 0-{record.num_players - 1} for this match")
    try:
        frame = frame_with_words(record, args.step, args.seat, reveal=args.reveal)
    except ReplayMismatch as exc:
        err.print(f"[bold red]does not verify:[/] {exc}", highlight=False)
        return 1
    if args.json:
        print(json.dumps(frame, indent=1))
        return 0
    spec = get_game(record.game_id)
    who = f"seat {args.seat} ({record.seats[args.seat].name})" if args.seat is not None else "spectator"
    where = ", ".join(f"{k} {frame[k]}" for k in ("round", "turn") if frame[k] is not None)
    out.print(
        f"[bold]{record.game_id}[/] seed {record.seed}, frame {args.step}/{record.steps}"
        f"{', ' + where if where else ''}, as {who}"
    )
    out.print(spec.render_view(frame["view"]), highlight=False, markup=False)
    if frame["log"]:
        out.print("[bold]last events[/]")
        for line in frame["log"]:
            out.print(f"  {line['text']}", highlight=False, markup=False)
    if frame["next_action"]:
        nxt = frame["next_action"]
        out.print(f"next: seat {nxt['seat']} {nxt['text']}  [{nxt['action']}]", highlight=False, markup=False)
    if frame["result"]:
        out.print("[bold]result[/]")
        for line in frame["result"]["lines"]:
            out.print(f"  {line}", highlight=False, markup=False)
    return 0
    spec = get_game(record.game_id)
    who = f"seat {args.seat} ({record.seats[args.seat].name})" if args.seat is not None else "spectator"
    out.print(f"[bold]{record.game_id}[/] seed {record.seed}, frame {args.step}/{record.steps}, as {who}")
    out.print(spec.render_view(frame["view"]), highlight=False, markup=False)
    if frame["next_action"]:
        out.print(
            f"next: seat {frame['next_action']['seat']} plays {frame['next_action']['action']}",
            highlight=False,
        )
    return 0


# --- entry point ---------------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="caravan", description="Caravanserai's local runner: the server's referee on your machine."
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    games = sub.add_parser("games", help="list the games, their player counts and options")
    games.add_argument("--json", action="store_true", help="print JSON")
    games.set_defaults(func=cmd_games)

    def match_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("game", help="versioned game id, e.g. expedition-v1 (see `caravan games`)")
        p.add_argument("--players", type=int, required=True)
        p.add_argument(
            "--bots",
            required=True,
            help="house bots by seat, comma-separated: random, greedy, search, search-strong, mcts[:N]",
        )
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a game option")
        p.add_argument("--quiet", action="store_true", help="no progress display")

    play = sub.add_parser("play", help="play one local match and print the final table")
    match_args(play)
    play.add_argument("--out", help="write the match record (JSON) here")
    play.set_defaults(func=cmd_play)

    series = sub.add_parser("series", help="a seat-rotated series; wins, mean rank and score per bot")
    match_args(series)
    series.add_argument("--games", type=int, default=20)
    series.add_argument("--jobs", type=int, default=1, help="worker processes")
    series.add_argument("--json-out", help="also write the summary as JSON here")
    series.set_defaults(func=cmd_series)

    sub.add_parser(
        "local",
        add_help=False,
        help="your bot against house bots through a local gateway, as on the server (caravan local --help)",
    )
    sub.add_parser(
        "gateway",
        add_help=False,
        help="a running gateway's health, services, messages (reflection) and a token check "
        "(caravan gateway --help)",
    )

    add_schema_parser(sub)
    add_dataset_parser(sub)

    replay = sub.add_parser("replay", help="verify or show a recorded match")
    replay_sub = replay.add_subparsers(dest="replay_command", required=True, parser_class=_Parser)
    rverify = replay_sub.add_parser(
        "verify", help="re-simulate and check every hash; exit 0 only if it verifies"
    )
    rverify.add_argument("file")
    rverify.set_defaults(func=cmd_replay_verify)
    show = replay_sub.add_parser("show", help="a readable frame at a step, as a seat or the spectator")
    show.add_argument("file")
    show.add_argument("--step", type=int, default=0)
    show.add_argument("--seat", type=int, default=None)
    show.add_argument("--reveal", action="store_true", help="spectator view with every hand shown")
    show.add_argument("--json", action="store_true", help="print the frame as JSON")
    show.set_defaults(func=cmd_replay_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["local"]:
        from engine_service.gateway.local import main as local_main

        return local_main(argv[1:], prog="caravan local")
    if argv[:1] == ["gateway"]:
        from engine_service.cli_gateway import main as gateway_main

        return gateway_main(argv[1:], prog="caravan gateway")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (UsageError, GameError, RecordError, SchemaError) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except BrokenPipeError:  # `caravan schema ... | head`: the reader left, nothing more to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (Python's recipe: no second error at exit)
        return 0


if __name__ == "__main__":
    sys.exit(main())
