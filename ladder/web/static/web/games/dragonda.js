/* Marco Polo: Dragonda's drawing for the match viewer (replay.js): the map from Venice to Beijing with its
   places, land dots, sea nodes, junctions, zones and ports at their real-geography points, every player's
   token in its seat colour; the Event in play and any pending answer; one panel per player with position,
   means of transport, zecchini, XP, cargo, passes, visited cities and hand (a seat's own cards in its view,
   others' as placeholders; all of them once the game is over); a legend of the codes. */
(function () {
  "use strict";
  var LAND_COLORS = { I: "#e7c9a1", "2": "#f3d98c", "3": "#cfe3a4", "4": "#f2bb92", "5": "#eca9a9", "6": "#f3b3cf", "7": "#cbbcec", "8": "#a9dccb" };
  var SEA_COLORS = { A: "#3b82c4", B: "#0e9f9a", C: "#4f5fc0", D: "#2f86a6", E: "#5a7fd6", F: "#1f9bc9" };
  var GOOD_ORDER = ["TX", "MG", "SI", "PO", "SP", "PS"];
  var MEANS_NAMES = { foot: "On foot", horse: "Horse", caravan: "Caravan", ship: "Ship" };
  // Label placement where the default (right of the point) would collide: [dx, dy, anchor].
  var LABELS = {
    VEN: [-8, 32, "start"], ACR: [-10, 4, "end"], DAM: [10, 24, "start"], ALE: [10, 2, "start"], ALX: [-10, 4, "end"],
    CAI: [-6, 18, "end"], CON: [0, -14, "middle"], TES: [-4, 18, "middle"], SIV: [8, 15, "start"], TRE: [0, -12, "middle"],
    CAF: [0, -12, "middle"], SAR: [10, 4, "start"], TIF: [10, -4, "start"], TAB: [10, 12, "start"], BAG: [-10, 4, "end"],
    BAS: [-10, 8, "end"], BUK: [-6, 17, "end"], SAM: [0, -13, "middle"], BAL: [-10, 4, "end"], KAB: [0, 20, "middle"],
    HER: [-10, 4, "end"], KAS: [6, -11, "middle"], KHO: [0, 20, "middle"], XAN: [0, -12, "middle"], PEC: [10, 6, "start"],
    KAR: [0, -12, "middle"], GAN: [0, -12, "middle"], SHA: [-10, 4, "end"], MAA: [10, 0, "start"], COL: [0, 22, "middle"],
    CAL: [-10, 4, "end"], CAM: [-10, 4, "end"], DEL: [10, 4, "start"], ZAI: [10, 6, "start"], QUI: [10, 2, "start"],
    CAN: [-2, -12, "end"], CHA: [-10, 4, "end"], MAL: [-10, 4, "end"], PAL: [0, 22, "middle"], PEG: [-10, 6, "end"],
    SUK: [10, 4, "start"], PAG: [-10, 4, "end"], YUN: [-10, 4, "end"], CHE: [-10, 4, "end"], XIA: [10, 4, "start"],
    ADE: [0, 22, "middle"], ORM: [10, 4, "start"], KER: [10, 4, "start"], YAZ: [-10, 4, "end"], MAN: [10, 4, "start"],
    NAG: [-10, -10, "end"], RAG: [0, 20, "middle"]
  };
  // Where each zone's name is written (map units: x = (longitude - 9) x 10, y = (50 - latitude) x 12, as
  // the board's points), in empty land or open sea: Balkans above Venice, Arabia, the Kazakh steppe, ...
  var ZONE_LABELS = {
    I: [70, 26], "2": [290, 300], "3": [580, 90], "4": [477, 168], "5": [705, 330], "6": [790, 204], "7": [1170, 360],
    "8": [935, 354], A: [110, 190], B: [245, 354], C: [165, 64], D: [530, 462], E: [855, 458], F: [1150, 168]
  };
  var TOKEN_OFFSETS = [[0, -15], [14, -6], [14, 9], [-14, 9], [-14, -6]];
  var cache = { board: null, byId: null, zones: null };

  function indexBoard(board) {
    if (cache.board === board) return cache;
    var byId = {}, sums = {};
    (board.spaces || []).forEach(function (s) {
      byId[s.id] = s;
      var z = sums[s.zone] = sums[s.zone] || { x: 0, y: 0, n: 0 };
      z.x += s.xy[0]; z.y += s.xy[1]; z.n += 1;
    });
    var zones = Object.keys(sums).map(function (k) { return { zone: k, x: sums[k].x / sums[k].n, y: sums[k].y / sums[k].n }; });
    cache = { board: board, byId: byId, zones: zones };
    return cache;
  }

  function spaceName(idx, id) {
    var s = idx && idx.byId[id];
    if (!s) return String(id);
    if (s.kind === "place") return s.name;
    if (s.kind === "junction") return "the " + s.name + " junction";
    if (s.chain) return (s.kind === "dot" ? "the road between " : "the sea between ") + spaceName(idx, s.chain[0]) + " and " + spaceName(idx, s.chain[1]) + " (" + id + ")";
    return String(id);
  }
  function zoneLabel(board, zone) {
    var names = (board && board.zones) || {};
    return "zone " + zone + (names[zone] ? " (" + names[zone] + ")" : "");
  }
  function goodName(board, g) { return (board && board.goods && board.goods[g]) || g; }
  function cardName(board, id) {
    var c = board && board.adventures && board.adventures[id];
    return c ? c.name : String(id);
  }

  function placeTitle(board, s) {
    var bits = [s.name + (s.modern && s.modern !== s.name ? " (" + s.modern + ")" : ""), zoneLabel(board, s.zone)];
    if (s.required) bits.push("a city to visit for the victory");
    if (s.id === board.home) bits.push("home: the race starts and ends here");
    if (s.sea_only) bits.push("island port: reached only by sea");
    else if (s.port) bits.push("port: Ships may be bought and may call here");
    Object.keys(board.pass_shops || {}).forEach(function (p) {
      if (board.pass_shops[p] === s.id) bits.push("sells the " + (board.passes[p] || p) + " (" + p + ")");
    });
    var prices = board.prices && board.prices[s.id];
    if (prices) {
      bits.push("buy/sell: " + GOOD_ORDER.map(function (g) { return g + " " + prices.buy[g] + "/" + prices.sell[g]; }).join(", "));
    }
    return bits.join("; ");
  }

  function drawMap(ctx, idx) {
    var board = ctx.board, view = ctx.view, esc = ctx.esc;
    var w = board.extent[0], h = board.extent[1];
    var parts = ['<div class="board-scroll dg-scroll"><svg class="board-svg dg-map" viewBox="0 0 ' + w + " " + h + '" role="img" aria-label="Map of the journey from Venezia to Pechino">'];
    parts.push('<rect class="dg-bg" x="0" y="0" width="' + w + '" height="' + h + '"/>');
    idx.zones.forEach(function (z) {
      var sea = SEA_COLORS[z.zone] !== undefined, at = ZONE_LABELS[z.zone] || [z.x, z.y];
      parts.push('<text class="dg-zone' + (sea ? " sea" : "") + '" x="' + Math.round(at[0]) + '" y="' + Math.round(at[1]) + '" text-anchor="middle">' +
        esc(z.zone + " " + ((board.zones || {})[z.zone] || "")) + "</text>");
    });
    function line(edge, cls) {
      var a = idx.byId[edge[0]], b = idx.byId[edge[1]];
      if (!a || !b) return;
      parts.push('<line class="' + cls + '" x1="' + a.xy[0] + '" y1="' + a.xy[1] + '" x2="' + b.xy[0] + '" y2="' + b.xy[1] + '"/>');
    }
    (board.sea_edges || []).forEach(function (e) { line(e, "dg-sea-edge"); });
    (board.land_edges || []).forEach(function (e) { line(e, "dg-land-edge"); });
    var places = [];
    (board.spaces || []).forEach(function (s) {
      var x = s.xy[0], y = s.xy[1];
      if (s.kind === "dot") {
        parts.push('<circle class="dg-dot" cx="' + x + '" cy="' + y + '" r="3.6" fill="' + (LAND_COLORS[s.zone] || "#ddd") + '"><title>' +
          esc("land dot " + s.id + " on " + spaceName(idx, s.id).replace(/ \(\w+\)$/, "") + ", " + zoneLabel(board, s.zone)) + "</title></circle>");
      } else if (s.kind === "sea") {
        parts.push('<circle class="dg-sea" cx="' + x + '" cy="' + y + '" r="3.6" stroke="' + (SEA_COLORS[s.zone] || "#38c") + '"><title>' +
          esc("sea node " + s.id + " on " + spaceName(idx, s.id).replace(/ \(\w+\)$/, "") + ", " + zoneLabel(board, s.zone)) + "</title></circle>");
      } else if (s.kind === "junction") {
        parts.push('<g><title>' + esc(s.name + " junction, " + zoneLabel(board, s.zone)) + '</title><circle class="dg-junction" cx="' + x + '" cy="' + y + '" r="6" stroke="' + (SEA_COLORS[s.zone] || "#38c") + '"/></g>');
      } else {
        places.push(s);
      }
    });
    places.forEach(function (s) {
      var x = s.xy[0], y = s.xy[1], lab = LABELS[s.id] || [10, 4, "start"];
      var g = ['<g class="dg-place-g" data-space="' + esc(s.id) + '"><title>' + esc(placeTitle(board, s)) + "</title>"];
      if (s.port) g.push('<circle class="dg-port-ring' + (s.sea_only ? " island" : "") + '" cx="' + x + '" cy="' + y + '" r="10.5"/>');
      g.push('<circle class="dg-place' + (s.required ? " required" : "") + (s.id === board.home ? " home" : "") + '" cx="' + x + '" cy="' + y + '" r="' + (s.required || s.id === board.home ? 7.5 : 6) + '" fill="' + (LAND_COLORS[s.zone] || "#eee") + '"/>');
      g.push('<text class="dg-label' + (s.required ? " required" : "") + '" x="' + (x + lab[0]) + '" y="' + (y + lab[1]) + '" text-anchor="' + lab[2] + '">' + esc(s.name) + "</text></g>");
      parts.push(g.join(""));
    });
    // Tokens: one disc per player in its seat colour, fanned out around a shared space.
    var at = {};
    (view.players || []).forEach(function (p) { (at[p.pos] = at[p.pos] || []).push(p); });
    Object.keys(at).forEach(function (pos) {
      var s = idx.byId[pos];
      if (!s) return;
      at[pos].forEach(function (p, k) {
        var off = TOKEN_OFFSETS[k % TOKEN_OFFSETS.length];
        var x = s.xy[0] + off[0], y = s.xy[1] + off[1];
        var moving = view.deciding === p.seat || view.active === p.seat;
        parts.push('<g class="dg-token' + (moving ? " active" : "") + '" data-seat="' + p.seat + '"><title>' +
          esc(ctx.seatName(p.seat) + " (seat " + p.seat + "): " + (MEANS_NAMES[p.means] || p.means) + ", at " + spaceName(idx, pos)) + "</title>" +
          '<line class="dg-token-stem" x1="' + s.xy[0] + '" y1="' + s.xy[1] + '" x2="' + x + '" y2="' + y + '"/>' +
          '<circle cx="' + x + '" cy="' + y + '" r="8.5" fill="' + ctx.seatColor(p.seat) + '"/>' +
          '<text class="dg-token-label" x="' + x + '" y="' + (y + 3.8) + '" text-anchor="middle">' + esc(p.seat) + "</text></g>");
      });
    });
    parts.push("</svg></div>");
    return parts.join("");
  }

  function ordinal(n) { return n + (n % 100 >= 11 && n % 100 <= 13 ? "th" : ["th", "st", "nd", "rd"][n % 10] || "th"); }

  var PHASES = {
    setup_means: "opening purchases: choosing a means of transport", setup_shop: "opening purchases in Venezia",
    event_pass: "deciding whether to use a pass on the Event", event_cancel: "deciding whether to cancel the roll with a pass",
    cards: "playing or discarding Adventure cards", move: "moving", trade: "trading", transport: "paying upkeep or changing means",
    over: "the game is over"
  };

  function eventBox(ctx, idx) {
    var view = ctx.view, board = ctx.board, esc = ctx.esc, turn = view.turn || {}, out = [];
    var active = view.active;
    var over = view.phase === "over";
    if (!over && turn.drew === "event" && turn.event && board && board.events && board.events[turn.event]) {
      var ev = board.events[turn.event], roll = turn.roll;
      var actor = active !== null && active !== undefined ? "seat " + active : "a player";
      var outside = false;  // the log says whether the card missed the drawer's zone
      (view.log || []).forEach(function (e) {
        if (e.event === "draw_event" && e.seat === active && e.card === turn.event) outside = !!e.effect;
      });
      out.push('<div class="dg-event" title="' + esc(ev.title + ": zones " + ev.zones.join(", ")) + '"><div class="dg-event-title">Event in play: <b>' + esc(turn.event + " " + ev.title) + "</b>" +
        (ev.all_players ? " (ALL: every player in its zones)" : "") + "</div>");
      out.push('<div class="dg-event-meta">drawn by ' + esc(actor) + " &middot; zones " + esc(ev.zones.join(", ")) + (outside ? " &middot; no effect: seat " + esc(active) + " is outside its zones" : roll ? " &middot; rolled <b>" + esc(roll) + "</b>" : view.phase === "event_pass" ? " &middot; not rolled yet" : " &middot; no roll") + "</div>");
      out.push('<ul class="dg-bands">' + ev.bands.map(function (b) {
        var hit = roll && b.lo <= roll && roll <= b.hi;
        var range = ev.roll ? (b.lo === b.hi ? b.lo : b.lo + "-" + b.hi) + ": " : "";
        return '<li class="' + (hit ? "hit" : "") + '">' + esc(range + b.text) + "</li>";
      }).join("") + (ev.pass ? '<li class="dg-pass-option">' + esc(ev.pass) + "</li>" : "") + "</ul></div>");
    } else if (!over && turn.drew === "adventure" && active !== null && active !== undefined) {
      out.push('<div class="dg-event"><div class="dg-event-title">seat ' + esc(active) + " drew an Adventure card this turn</div></div>");
    }
    (view.stack || []).forEach(function (f) {
      if (f.kind === "defence") {
        out.push('<div class="dg-pending">seat ' + esc(f.seat) + " must answer <b>" + esc(cardName(board, f.card)) + "</b> played by seat " + esc(f.attacker) + "</div>");
      } else {
        var why = board && board.events && board.events[f.reason] ? "the Event " + f.reason : f.reason === "capacity" ? "over capacity" : f.reason === "keep_three" ? "at most 3 goods without a means" : f.reason;
        out.push('<div class="dg-pending">seat ' + esc(f.seat) + " gives back " + esc(f.count) + " good" + (f.count === 1 ? "" : "s") + " (" + esc(why) + ")</div>");
      }
    });
    var bits = ["round " + esc(view.round) + " of " + esc(view.round_cap)];
    if (view.phase && PHASES[view.phase]) bits.push(esc(PHASES[view.phase]) + (view.phase === "move" && turn.movement ? " (up to " + esc(turn.movement) + " spaces)" : ""));
    if (view.deck_count !== undefined) bits.push("deck " + esc(view.deck_count) + " cards");
    if (view.supply) bits.push('<span title="passes left in the supply">supply PL ' + esc(view.supply.PL) + ", CT " + esc(view.supply.CT) + "</span>");
    var bonus = view.bonus || {};
    bits.push("first to Nagasaki: " + (bonus.NAG !== null && bonus.NAG !== undefined ? "seat " + esc(bonus.NAG) : "nobody yet"));
    bits.push("first to Manila or Palembang: " + (bonus.MANPAL !== null && bonus.MANPAL !== undefined ? "seat " + esc(bonus.MANPAL) : "nobody yet"));
    if (view.winner !== null && view.winner !== undefined) bits.push("<b>seat " + esc(view.winner) + " won the race</b>");
    out.push('<p class="dg-table">' + bits.join(" &middot; ") + "</p>");
    return '<div class="dg-info">' + out.join("") + "</div>";
  }

  function handHtml(ctx, p) {
    var view = ctx.view, board = ctx.board, esc = ctx.esc, cards = null;
    if (ctx.seat === p.seat && Array.isArray(view.hand)) cards = view.hand;
    else if (Array.isArray(view.hands) && Array.isArray(view.hands[p.seat])) cards = view.hands[p.seat];
    var out = ['<div class="dg-hand" data-private-of="' + p.seat + '"><span class="dg-k">Hand</span> '];
    if (cards) {
      if (!cards.length) out.push('<span class="dg-none">no cards</span>');
      cards.forEach(function (id) {
        var c = board && board.adventures && board.adventures[id];
        var kind = c ? c.kind : "card";
        out.push('<span class="dg-card ' + esc(kind) + '" data-secret title="' + esc(c ? c.name + " (" + kind + "): " + c.text : id) + '">' + esc(c ? c.name : id) + "</span>");
      });
    } else {
      var n = Number(p.hand_count) || 0;
      if (!n) out.push('<span class="dg-none">no cards</span>');
      for (var i = 0; i < n; i++) out.push('<span class="dg-card hidden-item" title="an Adventure card this view does not know">?</span>');
    }
    out.push("</div>");
    return out.join("");
  }

  function playerPanel(ctx, idx, p) {
    var view = ctx.view, board = ctx.board || {}, esc = ctx.esc;
    var means = (board.means || {})[p.means] || {};
    var carried = 0;
    GOOD_ORDER.forEach(function (g) { carried += Number((p.cargo || {})[g]) || 0; });
    var order = (view.order || []).indexOf(p.seat);
    var toMove = view.deciding === p.seat;
    var html = ['<div class="player dg-player' + (toMove ? " to-move" : "") + '" data-seat="' + p.seat + '" style="border-left-color:' + ctx.seatColor(p.seat) + '">'];
    html.push('<div class="dg-head"><span class="seat-dot" style="background:' + ctx.seatColor(p.seat) + '"></span><b>' + esc(ctx.seatName(p.seat)) + "</b> &middot; seat " + esc(p.seat) +
      (order >= 0 ? ' <span class="dg-muted">(' + ordinal(order + 1) + " to play)</span>" : "") + (view.active === p.seat ? ' <span class="dg-turn">its turn</span>' : "") + "</div>");
    html.push('<div class="dg-row"><span class="dg-k">At</span> ' + esc(spaceName(idx, p.pos)) + ' <span class="dg-muted">(' + esc(zoneLabel(ctx.board, p.zone)) + ")</span></div>");
    html.push('<div class="dg-row"><span class="dg-k">Means</span> <span class="dg-means m-' + esc(p.means) + '" title="' + esc((MEANS_NAMES[p.means] || p.means) +
      (means.movement !== undefined ? ": moves " + means.movement + " spaces" + (means.sea ? " by sea" : " by land") + ", carries " + means.capacity + " goods, upkeep " + means.upkeep + " zecchini a turn" : "")) + '">' +
      esc(MEANS_NAMES[p.means] || p.means) + "</span>" + (means.movement !== undefined ? ' <span class="dg-muted">moves ' + means.movement + ", carries " + means.capacity + "</span>" : "") + "</div>");
    var xp = Number(p.xp) || 0;
    html.push('<div class="dg-row dg-stats"><span class="dg-money" title="zecchini">' + esc(p.money) + ' z</span><span class="dg-xp" title="experience points: 51 are needed to win">XP ' + esc(xp) + '/51<span class="dg-xpbar"><span style="width:' + Math.min(100, xp / 51 * 100).toFixed(0) + '%"></span></span></span></div>');
    var cargo = GOOD_ORDER.filter(function (g) { return (Number((p.cargo || {})[g]) || 0) > 0; }).map(function (g) {
      return '<span class="dg-good g-' + g + '" title="' + esc(goodName(board, g) + ": " + p.cargo[g]) + '">' + g + " " + esc(p.cargo[g]) + "</span>";
    });
    html.push('<div class="dg-row"><span class="dg-k">Cargo</span> ' + (cargo.length ? cargo.join(" ") : '<span class="dg-none">none</span>') +
      (means.capacity !== undefined ? ' <span class="dg-muted">' + carried + "/" + means.capacity + "</span>" : "") + "</div>");
    var passes = ["PL", "CT"].filter(function (k) { return (Number((p.passes || {})[k]) || 0) > 0; }).map(function (k) {
      return '<span class="dg-pass" title="' + esc(((board.passes || {})[k] || k) + ": " + p.passes[k]) + '">' + k + " " + esc(p.passes[k]) + "</span>";
    });
    html.push('<div class="dg-row"><span class="dg-k">Passes</span> ' + (passes.length ? passes.join(" ") : '<span class="dg-none">none</span>') + "</div>");
    var visited = p.visited || [];
    html.push('<div class="dg-row"><span class="dg-k">Cities</span> ' + (board.required || []).map(function (c) {
      var done = visited.indexOf(c) >= 0;
      return '<span class="dg-city' + (done ? " done" : "") + '" title="' + esc(spaceName(idx, c) + (done ? ": visited" : ": not visited yet")) + '">' + (done ? "&#10003; " : "") + esc(spaceName(idx, c)) + "</span>";
    }).join(" ") + "</div>");
    var flags = [];
    if (p.still_pending) flags.push("stays still next turn");
    if (p.false_guide) flags.push("next move halved (FALSE GUIDE)");
    if (p.blocked_last) flags.push("stood still last turn");
    if (flags.length) html.push('<div class="dg-row dg-flags">' + flags.map(esc).join(" &middot; ") + "</div>");
    html.push(handHtml(ctx, p));
    html.push("</div>");
    return html.join("");
  }

  function legend(ctx) {
    var board = ctx.board || {}, esc = ctx.esc;
    var goods = GOOD_ORDER.map(function (g) { return '<span class="dg-good g-' + g + '">' + g + "</span> " + esc(goodName(board, g)); }).join(" &middot; ");
    var zones = Object.keys(board.zones || {}).map(function (z) {
      var color = LAND_COLORS[z] || SEA_COLORS[z];
      var sea = SEA_COLORS[z] !== undefined;
      return '<span class="dg-swatch' + (sea ? " sea" : "") + '" style="' + (sea ? "border-color:" : "background:") + color + '"></span>' + esc(z + " " + board.zones[z]);
    }).join(" &middot; ");
    return '<details class="dg-legend" open><summary>Legend</summary><dl>' +
      "<dt>Map</dt><dd>large dot: a place (gold ring: a city to visit; blue ring: a port, dashed: an island port reached only by sea); small dot: a land space on a road; hollow blue dot: a sea space; ringed blue dot: a sea junction; brown lines: roads, blue dashed lines: sea routes; numbered discs: the players</dd>" +
      "<dt>Zones</dt><dd>" + zones + "</dd>" +
      "<dt>Goods</dt><dd>" + goods + "</dd>" +
      "<dt>Passes</dt><dd>PL " + esc((board.passes || {}).PL || "Papal Letter") + " (bought in Venezia) &middot; CT " + esc((board.passes || {}).CT || "Command Tablet") + " (bought in Pechino)</dd>" +
      "<dt>Means</dt><dd>foot: 4 spaces, 3 goods &middot; Horse: 9 spaces, 5 goods &middot; Caravan: 6 spaces, 12 goods &middot; Ship: 10 sea spaces, 16 goods</dd>" +
      "<dt>Victory</dt><dd>back in Venezia with 51 XP after visiting Damasco, Ormuz, Samarcanda, Pechino and Yunnan</dd></dl></details>";
  }

  CaravanReplay.register("dragonda", {
    draw: function (ctx) {
      var view = ctx.view;
      if (!view) return '<p class="dg-muted">Nothing to draw at this step.</p>';
      var idx = ctx.board && ctx.board.spaces ? indexBoard(ctx.board) : null;
      var html = ['<div class="dg-viewer">'];
      html.push(idx ? drawMap(ctx, idx) : '<p class="dg-muted">The map is not available.</p>');
      html.push(eventBox(ctx, idx));
      html.push('<div class="board-panels"><div class="players dg-players">');
      (view.players || []).forEach(function (p) { html.push(playerPanel(ctx, idx, p)); });
      html.push("</div></div>");
      html.push(legend(ctx));
      html.push("</div>");
      return html.join("");
    }
  });
})();
