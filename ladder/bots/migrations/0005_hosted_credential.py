"""A hosted bot's own credential: `hosted_token_hash` beside the owner's `token_hash`, so hosting a version
never replaces the owner's token. None for every existing bot (a host issues one when it next starts the bot);
house bots have neither."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0004_house_levels"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="bot",
            name="house_bot_shape",
        ),
        migrations.AddField(
            model_name="bot",
            name="hosted_token_created_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="bot",
            name="hosted_token_hash",
            field=models.CharField(
                blank=True,
                help_text="The bot host's credential (sha256).",
                max_length=64,
                null=True,
                unique=True,
            ),
        ),
        migrations.AddConstraint(
            model_name="bot",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("house_policy", ""), ("is_house", False)),
                    models.Q(("hosted_token_hash", None), ("is_house", True), ("token_hash", None)),
                    _connector="OR",
                ),
                name="house_bot_shape",
            ),
        ),
    ]
