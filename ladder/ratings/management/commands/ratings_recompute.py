"""`manage.py ratings_recompute [--check]`: rebuild every rating from the append-only ledger.

Prints what differed. With --check nothing is written and the exit status is 1 when the stored table (or a
ledger row) does not match the rebuild.
"""

from django.core.management.base import BaseCommand, CommandError

from ladder.ratings.services import ratings_recompute


class Command(BaseCommand):
    help = "Rebuild every current rating from the rating ledger and report differences."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument(
            "--check", action="store_true", help="only compare; write nothing, exit 1 on drift"
        )

    def handle(self, *args, **options):  # type: ignore[no-untyped-def]
        report = ratings_recompute(write=not options["check"])
        for line in report.ledger_mismatches:
            self.stdout.write(f"ledger: {line}")
        for line in report.rating_differences:
            self.stdout.write(f"rating: {line}")
        self.stdout.write(
            f"{report.matches} matches, {report.ledger_rows} ledger rows replayed; "
            f"{len(report.rating_differences)} rating rows differed, {report.ratings_written} written; "
            f"{'identical' if report.identical else 'DIFFERENT'}"
        )
        if options["check"] and not report.identical:
            raise CommandError("stored ratings differ from the ledger rebuild")
