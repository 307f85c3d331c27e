"""Dragonda's data files against the specification: map, trade table, means and cards."""

from __future__ import annotations

from engine_service.games.dragonda.board import BOARD, GOODS, MEANS_TABLE, REQUIRED


def test_map_has_the_specified_spaces_edges_and_distances() -> None:
    kinds = [BOARD.kind[s] for s in BOARD.spaces]
    assert (kinds.count("place"), kinds.count("dot"), kinds.count("sea"), kinds.count("junction")) == (
        52,
        66,
        42,
        6,
    )
    assert len(BOARD.ports) == 23 and BOARD.sea_only == ["ADE", "MAN", "NAG", "PAL"]
    assert sum(len(v) for v in BOARD.land_adj.values()) // 2 == 121
    assert sum(len(v) for v in BOARD.sea_adj.values()) // 2 == 72
    assert len(BOARD.land_dist["VEN"]) == 114  # one land component without the four sea-only ports
    land = [BOARD.land_dist["VEN"][c] for c in ("DAM", "ORM", "SAM", "PEC", "YUN")]
    assert land == [15, 21, 26, 45, 46]
    assert BOARD.tour_land[(2 ** len(REQUIRED) - 1, "VEN")] == 110
    assert BOARD.sea_dist["VEN"]["NAG"] == 42 and BOARD.sea_dist["COL"]["MAL"] == 7
    assert BOARD.passage == {"ADE": "ALX", "NAG": "QUI", "MAN": "ZAI", "PAL": "MAL"}
    assert BOARD.is_port("VEN") and BOARD.is_port("ALX") and not BOARD.is_port("SAM")
    assert set(BOARD.sea_adj["ALX"]) == {"S7", "S10"}  # Alexandria serves the Mediterranean and the Red Sea
    assert BOARD.zone["CON"] == "I" and BOARD.zone["L7"] == "3" and BOARD.zone["S10"] == "B"


def test_trade_table_keeps_the_printed_cells_and_the_spread() -> None:
    assert (BOARD.buy["COL"]["TX"], BOARD.sell["COL"]["TX"]) == (43, 41)
    assert (BOARD.buy["COL"]["SP"], BOARD.sell["COL"]["SP"]) == (17, 15)
    assert (BOARD.buy["ORM"]["TX"], BOARD.sell["ORM"]["TX"]) == (41, 39)
    assert (BOARD.buy["ORM"]["SP"], BOARD.sell["ORM"]["SP"]) == (23, 21)
    assert len(BOARD.buy) == 52
    for place in BOARD.buy:
        for good in GOODS:
            assert BOARD.sell[place][good] == BOARD.buy[place][good] - 2
    # Manufactured goods from Venice pay much more in Beijing than in Constantinople.
    assert BOARD.sell["PEC"]["MG"] - BOARD.buy["VEN"]["MG"] > 3 * (
        BOARD.sell["CON"]["MG"] - BOARD.buy["VEN"]["MG"]
    )


def test_means_use_the_prose_values() -> None:
    table = {m.name: (m.price, m.upkeep, m.capacity, m.movement, m.sea) for m in MEANS_TABLE.values()}
    assert table == {
        "foot": (0, 0, 3, 4, False),
        "horse": (6, 3, 5, 9, False),
        "caravan": (16, 8, 12, 6, False),
        "ship": (100, 30, 16, 10, True),
    }


def test_cards_have_the_specified_ids_counts_and_found_texts() -> None:
    assert sorted(BOARD.events) == [f"E{i:02d}" for i in range(1, 41)]
    attacks = [c for c in BOARD.adventures.values() if c["kind"] == "attack"]
    defences = [c for c in BOARD.adventures.values() if c["kind"] == "defence"]
    assert sorted(c["id"] for c in attacks) == [f"A{i:02d}" for i in range(1, 21)]
    assert sorted(c["id"] for c in defences) == [f"D{i:02d}" for i in range(1, 17)]
    assert [BOARD.card_name[f"A0{i}"] for i in (1, 2, 3)] == ["DESERT"] * 3
    assert [BOARD.card_name[f"D0{i}"] for i in (1, 2, 3)] == ["OASIS"] * 3
    assert BOARD.adventures["A01"]["src"] == "F" and BOARD.adventures["D01"]["src"] == "F"
    assert BOARD.adventures["A04"]["src"] == "A"
    e01 = BOARD.events["E01"]
    assert e01["src"] == "F" and e01["zones"] == ["2", "4", "5", "6"]
    assert "necklace worth 20 zecchini" in e01["printed_text"]
    assert [(b["lo"], b["hi"], b["money"], b["xp"]) for b in e01["bands"]] == [
        (2, 6, 20, 0),
        (7, 10, 0, 5),
        (11, 12, 0, 0),
    ]
    assert all(BOARD.events[e]["src"] == "A" for e in BOARD.events if e != "E01")
    # Every attack has at least three answers counting GOOD FORTUNE.
    assert all(
        len(BOARD.cancels[name]) >= 2 and "GOOD FORTUNE" in BOARD.cancels[name] for name in BOARD.attack_names
    )
    assert sum(1 for c in BOARD.adventures.values() if c["name"] == "GOOD FORTUNE") == 2
    assert [e for e in BOARD.events if BOARD.events[e]["all_players"]] == ["E40"]
