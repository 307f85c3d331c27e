"""Game-neutral building blocks shared by the Marco Polo family of games (Voyages, Marco Polo II).

Pure: no Django, no I/O, no RNG of their own (a caller passes its `ChanceRng` where chance is needed).
Nothing here knows a particular game's data: games pass their tables in.

- `resources`: resource bundles (coins, camels, goods, points as counts) and paying/gaining them, also
  with a wildcard resource that may stand in for others (Marco Polo II's jade).
- `dice`: dice tokens, dice placement on action spaces, the occupancy fee and the colour-once rule.
- `routemap`: a map of nodes and routes with extra costs, and every distinct outcome of a walk on it.
- `cardrow`: a face-up row that slides left when cards are taken, and face-down piles drawn from the top.
- `effects`: the decision loop of a state driven by a stack of pending effects and a turn menu, dispatched
  through a registry of one handler per effect kind.
- `family`: the base state of Voyages and Marco Polo II (turns, rounds, posts, views, result).
- `family_effects`: the effect kinds both family games share.
"""
