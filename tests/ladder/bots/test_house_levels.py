"""House bots by level: their names, the strength their description and page state, and the migration that
describes the house bots an existing database already has."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from ladder.bots.models import Bot
from ladder.bots.services import house_bot_ensure


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("policy", "name", "rank"),
    [("random", "house-random", "1st"), ("greedy", "house-greedy", "2nd"), ("search", "house-search", "3rd"),
     ("search-strong", "house-search-strong", "4th")],
)  # fmt: skip
def test_each_house_level_is_a_bot_named_after_it_that_states_its_rank(
    policy: str, name: str, rank: str
) -> None:
    bot = house_bot_ensure(policy=policy)
    assert bot.name == name and bot.house_policy == policy
    assert f"'{policy}', {rank} of 4" in bot.description
    assert "random < greedy < search < search-strong" in bot.description


@pytest.mark.django_db
def test_a_fixed_budget_search_keeps_its_name_and_says_it_has_no_level() -> None:
    bot = house_bot_ensure(policy="mcts:25")
    assert bot.name == "house-mcts-25"
    assert "outside the measured house levels" in bot.description


@pytest.mark.django_db
def test_ensuring_an_old_house_bot_again_refreshes_its_description_only() -> None:
    bot = house_bot_ensure(policy="greedy")
    Bot.objects.filter(pk=bot.pk).update(description="In-process house bot playing the 'greedy' policy.")
    again = house_bot_ensure(policy="greedy")
    assert again.pk == bot.pk and again.name == "house-greedy"
    assert again.description.startswith("House level 'greedy', 2nd of 4")


@pytest.mark.django_db
def test_the_migration_describes_existing_house_bots_and_leaves_other_bots_alone(make_bot) -> None:
    house = house_bot_ensure(policy="search")
    Bot.objects.filter(pk=house.pk).update(description="old words")
    own = make_bot(name="mine", description="my own words")
    migration = importlib.import_module("ladder.bots.migrations.0004_house_levels")
    migration.describe_house_bots(apps, None)
    assert Bot.objects.get(pk=house.pk).description.startswith("House level 'search', 3rd of 4")
    assert Bot.objects.get(pk=own.pk).description == "my own words"


@pytest.mark.django_db
def test_a_house_bot_page_shows_its_level_and_the_measured_order(client) -> None:
    bot = house_bot_ensure(policy="search-strong")
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert "A house baseline at level <code>search-strong</code>" in page
    assert "4th of 4 by strength (random &lt; greedy &lt; search &lt; search-strong)" in page
