"""`manage.py ratings_recompute [--check] [--ladder ID]`: rebuild every rating from the append-only ledger,
or, with --check, audit the ratings against the match records themselves.

Without --check: the rating rows are rebuilt from the ledger (`ratings.services.ratings_recompute`) and what
differed is printed. With --check nothing is written: the ledger rebuild is compared with the rating rows,
and every rating is rebuilt from the DONE rated matches' records (`ratings.audit.ratings_audit`: ranks,
forfeits, seasons, versions, resets) and compared with the ledger and the rating rows; every difference is
printed on its own line and the exit status is 1 when there is any.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ladder.ladders.models import Ladder
from ladder.ratings.audit import AuditReport, ratings_audit
from ladder.ratings.services import RecomputeReport, ratings_recompute


class Command(BaseCommand):
    help = (
        "Rebuild every current rating from the rating ledger; with --check, write nothing and audit the "
        "ledger and the ratings against the match records."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="only compare (ledger rebuild and the audit from the match records); exit 1 on any difference",
        )
        parser.add_argument(
            "--ladder", type=int, default=None, help="audit one ladder (with --check; the id of the ladder)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ladder_id = options["ladder"]
        if ladder_id is not None and not options["check"]:
            raise CommandError("--ladder goes with --check (a recompute rebuilds every ladder)")
        if ladder_id is not None and not Ladder.objects.filter(pk=ladder_id).exists():
            raise CommandError(f"no ladder with id {ladder_id}")
        if not options["check"]:
            self._print_recompute(ratings_recompute(write=True))
            return
        try:
            recompute = ratings_recompute(write=False)
        except ValueError as exc:  # a ledger match whose rows cannot be rated (a row deleted, a rank edited)
            self.stdout.write(f"ledger: the ledger cannot be replayed: {exc}")
            ledger_identical = False
        else:
            self._print_recompute(recompute)
            ledger_identical = recompute.identical
        audit = ratings_audit(ladder_id=ladder_id)
        self._print_audit(audit)
        if not ledger_identical or not audit.identical:
            raise CommandError("the ratings differ from the ledger rebuild or from the match records")

    def _print_recompute(self, report: RecomputeReport) -> None:
        for line in report.ledger_mismatches:
            self.stdout.write(f"ledger: {line}")
        for line in report.rating_differences:
            self.stdout.write(f"rating: {line}")
        self.stdout.write(
            f"{report.matches} matches, {report.ledger_rows} ledger rows replayed; "
            f"{len(report.rating_differences)} rating rows differed, {report.ratings_written} written; "
            f"{'identical' if report.identical else 'DIFFERENT'}"
        )

    def _print_audit(self, report: AuditReport) -> None:
        for difference in report.differences:
            self.stdout.write(f"audit: {difference.line()}")
        counts = ", ".join(f"{n} {kind}" for kind, n in report.counts().items() if n)
        self.stdout.write(
            f"audit from the match records: {report.matches} matches replayed, {report.ledger_rows} ledger "
            f"rows and {report.ratings} rating rows compared; "
            + (f"{len(report.differences)} differences ({counts}): DIFFERENT" if counts else "identical")
        )
