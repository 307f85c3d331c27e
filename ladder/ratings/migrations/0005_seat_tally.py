"""The maintained seat tally (`ladder.ratings.seats`), filled from the existing ledger rows."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count, Q, Sum


def fill_tallies(apps, schema_editor):  # type: ignore[no-untyped-def]
    RatingLedger = apps.get_model("ratings", "RatingLedger")
    SeatTally = apps.get_model("ratings", "SeatTally")
    totals = (
        RatingLedger.objects.order_by()
        .values("ladder_id", "seat")
        .annotate(
            games=Count("id"),
            wins=Count("id", filter=Q(rank=1)),
            rank_sum=Sum("rank"),
            scored=Count("score"),
            score_sum=Sum("score"),
        )
    )
    SeatTally.objects.bulk_create(
        [SeatTally(**{k: v or 0 for k, v in row.items()}) for row in totals], batch_size=1000
    )


class Migration(migrations.Migration):
    dependencies = [
        ("ladders", "0006_duplicate_sets_per_game"),
        ("ratings", "0004_board_standings"),
    ]

    operations = [
        migrations.CreateModel(
            name="SeatTally",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seat", models.PositiveSmallIntegerField()),
                ("games", models.PositiveIntegerField(default=0)),
                ("wins", models.PositiveIntegerField(default=0)),
                ("rank_sum", models.PositiveBigIntegerField(default=0)),
                (
                    "scored",
                    models.PositiveIntegerField(
                        default=0, help_text="Games of the seat with a score recorded."
                    ),
                ),
                ("score_sum", models.BigIntegerField(default=0)),
                (
                    "ladder",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="seat_tallies",
                        to="ladders.ladder",
                    ),
                ),
            ],
            options={
                "ordering": ["ladder_id", "seat"],
                "constraints": [
                    models.UniqueConstraint(fields=("ladder", "seat"), name="seat_tally_unique_seat")
                ],
            },
        ),
        migrations.RunPython(fill_tallies, migrations.RunPython.noop),
    ]
