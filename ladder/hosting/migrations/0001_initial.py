import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("bots", "0003_versions"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="HostedVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=64)),
                ("runtime", models.CharField(max_length=16)),
                ("entry", models.CharField(max_length=255)),
                ("sha256", models.CharField(max_length=64)),
                ("size", models.PositiveIntegerField()),
                ("file_count", models.PositiveIntegerField()),
                ("archive", models.BinaryField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "bot",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="hosted_versions",
                        to="bots.bot",
                    ),
                ),
                (
                    "parent",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="children",
                        to="hosting.hostedversion",
                    ),
                ),
                (
                    "uploaded_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["bot_id", "created_at", "id"],
                "constraints": [
                    models.UniqueConstraint(fields=("bot", "name"), name="hosted_version_unique_name")
                ],
            },
        ),
        migrations.CreateModel(
            name="HostedBot",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("enabled", models.BooleanField(default=True, help_text="False: no host runs it.")),
                ("host_id", models.CharField(blank=True, default="", max_length=64)),
                ("claimed_until", models.DateTimeField(blank=True, null=True)),
                ("state", models.CharField(default="waiting", max_length=16)),
                ("detail", models.CharField(blank=True, default="", max_length=200)),
                ("starts", models.PositiveIntegerField(default=0)),
                ("crashes", models.PositiveIntegerField(default=0)),
                ("log", models.TextField(blank=True, default="")),
                ("reported_at", models.DateTimeField(blank=True, null=True)),
                (
                    "bot",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="hosting", to="bots.bot"
                    ),
                ),
                (
                    "version",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="hosting.hostedversion",
                    ),
                ),
            ],
        ),
    ]
