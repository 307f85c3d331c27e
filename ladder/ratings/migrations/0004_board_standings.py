"""The maintained leaderboard's fields on Rating (`ladder.ratings.board`), filled for existing rows: each
row's conservative rating, and each ladder's current board placed by `ladder.ratings.standing.place`."""

from django.db import migrations, models

from ladder.ratings.standing import place


def fill_boards(apps, schema_editor):  # type: ignore[no-untyped-def]
    Ladder = apps.get_model("ladders", "Ladder")
    Rating = apps.get_model("ratings", "Rating")
    for ladder in Ladder.objects.all():
        rows = list(Rating.objects.filter(ladder_id=ladder.pk).order_by("id").select_related("bot"))
        for row in rows:
            row.conservative = row.mu - 3.0 * row.sigma
            row.position, row.leads_tier = None, False
        listed = [r for r in rows if r.bot.active and r.games >= 1 and r.season == ladder.season]
        previous_tier = 0
        skills = [(r.mu, r.sigma) for r in listed]
        for position, placed in enumerate(place(skills, provisional_sigma=5.0), start=1):
            row = listed[placed.index]
            row.position, row.leads_tier = position, placed.tier != previous_tier
            previous_tier = placed.tier
        Rating.objects.bulk_update(rows, ["conservative", "position", "leads_tier"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("ratings", "0003_seasons"),
    ]

    operations = [
        migrations.AddField(
            model_name="rating",
            name="conservative",
            field=models.FloatField(default=0.0, help_text="mu - 3 sigma, the board's ranking key."),
        ),
        migrations.AddField(
            model_name="rating",
            name="leads_tier",
            field=models.BooleanField(default=False, help_text="Opens a tier of the current board."),
        ),
        migrations.AddField(
            model_name="rating",
            name="position",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Place on the ladder's current board (1 = top); empty when not listed.",
                null=True,
            ),
        ),
        migrations.AddIndex(
            model_name="rating",
            index=models.Index(
                condition=models.Q(("position__isnull", False)),
                fields=["ladder", "position"],
                name="rating_board_position",
            ),
        ),
        migrations.AddIndex(
            model_name="rating",
            index=models.Index(
                condition=models.Q(("position__isnull", False)),
                fields=["ladder", "-conservative", "id"],
                name="rating_board_order",
            ),
        ),
        migrations.AddIndex(
            model_name="rating",
            index=models.Index(
                condition=models.Q(("leads_tier", True)),
                fields=["ladder", "position"],
                name="rating_board_tiers",
            ),
        ),
        migrations.RunPython(fill_boards, migrations.RunPython.noop),
    ]
