"""House bots say their level: each existing house bot's description becomes its level and the house levels'
measured order (`engine_service.policies.house_level`), as `house_bot_ensure` writes it for new ones. Names
are unchanged (`house-<policy>` already names the level: house-greedy, house-search, house-mcts-25)."""

from django.db import migrations

from engine_service.policies import house_level


def describe_house_bots(apps, schema_editor):  # type: ignore[no-untyped-def]
    Bot = apps.get_model("bots", "Bot")
    for bot in Bot.objects.filter(is_house=True):
        bot.description = house_level(bot.house_policy).summary
        bot.save(update_fields=["description"])


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0003_versions"),
    ]

    operations = [
        migrations.RunPython(describe_house_bots, migrations.RunPython.noop),
    ]
