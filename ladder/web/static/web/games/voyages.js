/* The Voyages of Marco Polo (voyages-v1) drawn for the match viewer.

   Draws, from one frame's view and the game's static board (/api/v1/games/voyages-v1/board/): the map
   (cities, oases, routes with their extra camel and coin costs, trading posts, figures, Beijing's four
   spaces, outpost and small-city bonuses, city cards), the action board with every die placed and by whom
   (5 coins, the bazaar, Khan's Favor, contracts on offer, travel), and one panel per seat (character,
   resources, dice, contracts, goals). Goals are private: each seat's goal list carries data-private-of and
   its real cards data-secret; cards the view does not hold are drawn as .hidden-item placeholders.
   Registers itself with the core (web/replay.js); pure drawing, no fetching. */
(function () {
  "use strict";
  var SCALE = 1.25, PAD_X = 40, PAD_Y = 40;
  var SHORT = {
    coins: "co", camels: "ca", pepper: "pe", silk: "si", gold: "go", vp: "VP",
    good_choice: "good?", different_goods: "2 goods", other_bonus: "bonus?", black_die: "black die",
    contract: "contract", move: "move"
  };
  var ORDER = ["coins", "camels", "pepper", "silk", "gold", "vp", "good_choice", "different_goods", "other_bonus", "black_die", "contract", "move"];
  var SPACE_TITLES = { coins5: "5 coins", camels: "Camels", pepper: "Pepper", silk: "Silk", gold: "Gold", khan: "Khan's Favor", contracts: "Contracts", travel: "Travel" };

  function list(x) { return Object.prototype.toString.call(x) === "[object Array]" ? x : []; }
  function obj(x) { return x && typeof x === "object" ? x : {}; }

  var COUNTED = { coins: 1, camels: 1, pepper: 1, silk: 1, gold: 1, vp: 1 };
  function shortBundle(b) {
    b = obj(b);
    var parts = [];
    ORDER.forEach(function (k) {
      if (b[k]) parts.push((b[k] === 1 && !COUNTED[k] ? "" : b[k] + " ") + SHORT[k]);
    });
    return parts.join(" ") || "–";
  }
  function Drawing(ctx) {
    this.ctx = ctx;
    this.v = ctx.view || {};
    this.b = ctx.board || {};
    this.esc = ctx.esc;
    var nodes = {};
    list(this.b.nodes).forEach(function (n) { nodes[n.id] = n; });
    this.nodes = nodes;
  }
  Drawing.prototype.color = function (seat) { return seat < 0 ? "#9ca3af" : this.ctx.seatColor(seat); };
  // A seat's hue for text on a light panel (4.5:1 or more); `color` is for fills and borders.
  Drawing.prototype.textColor = function (seat) { return seat < 0 ? "#4b5563" : this.ctx.seatTextColor(seat); };
  Drawing.prototype.who = function (seat) { return seat < 0 ? "neutral" : this.ctx.seatName(seat) + " (seat " + seat + ")"; };
  Drawing.prototype.nodeName = function (id) { var n = this.nodes[id]; return n ? n.name : "place " + id; };
  Drawing.prototype.xy = function (id) {
    var n = this.nodes[id];
    var p = n ? n.xy : [0, 0];
    return [PAD_X + p[0] * SCALE, PAD_Y + p[1] * SCALE];
  };
  Drawing.prototype.contractText = function (cid) {
    var c = obj(this.b.contracts)[String(cid)];
    return c ? c.text : "contract " + cid;
  };
  Drawing.prototype.contractCard = function (cid, extra) {
    var c = obj(this.b.contracts)[String(cid)] || {};
    var e = this.esc;
    return '<span class="voy-contract" title="' + e("Contract " + cid + ": " + (c.text || "")) + '"' + (extra || "") + '>' +
      '<b>#' + e(cid) + '</b> <span class="voy-cost">' + e(shortBundle(c.cost)) + '</span> → <span class="voy-reward">' + e(shortBundle(c.reward)) + "</span></span>";
  };

  // Where a route's cost marks go: the first point from the route's middle outwards whose box (w wide)
  // covers no node's name, else the middle.
  Drawing.prototype.costSpot = function (a, c, w) {
    var names = this.nameBoxes || (this.nameBoxes = this.labelBoxes());
    var tries = [0.5, 0.4, 0.6, 0.32, 0.68, 0.25, 0.75];
    var dx = c[0] - a[0], dy = c[1] - a[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
    var offsets = [0, 12, -12, 22, -22];
    for (var k = 0; k < offsets.length; k++) {
      for (var i = 0; i < tries.length; i++) {
        var x = a[0] + dx * tries[i] - dy / len * offsets[k], y = a[1] + dy * tries[i] + dx / len * offsets[k];
        var box = [x - w / 2 - 2, y - 9, x + w / 2 + 2, y + 9];
        var hit = names.some(function (o) { return box[0] < o[2] && o[0] < box[2] && box[1] < o[3] && o[1] < box[3]; });
        if (!hit) return [x, y];
      }
    }
    return [(a[0] + c[0]) / 2, (a[1] + c[1]) / 2];
  };
  Drawing.prototype.labelBoxes = function () {
    var self = this;
    return list(this.b.nodes).filter(function (n) { return n.type !== "oasis"; }).map(function (n) {
      var p = self.xy(n.id), ly = p[1] + (n.type === "small" ? 24 : 29), w = 8.6 * String(n.name).length + 8;
      return [p[0] - w / 2, ly - 13, p[0] + w / 2, ly + 4];
    });
  };

  // --- dice ----------------------------------------------------------------------------------------------
  Drawing.prototype.die = function (seat, tok) {
    var kind = String(tok).charAt(0), value = String(tok).slice(1);
    var color = this.color(seat);
    var names = { c: "die", b: "black die", w: "white die", n: "neutral die" };
    var title = (seat < 0 ? "neutral die" : this.who(seat) + "'s " + (names[kind] || "die")) + (value === "0" ? ", value chosen when used" : " showing " + value);
    var style;
    if (seat < 0 || kind === "n") style = "background:#9ca3af;color:#fff;border-color:#6b7280";
    else if (kind === "b") style = "background:#1f2937;color:#fff;border-color:" + color;
    else if (kind === "w") style = "background:#fff;color:#111;border-color:" + color;
    else style = "background:" + color + ";color:#fff;border-color:" + color;
    return '<span class="voy-die voy-die-' + kind + '" style="' + style + '" title="' + this.esc(title) + '">' + (value === "0" ? "?" : this.esc(value)) + "</span>";
  };
  Drawing.prototype.placed = function (placements) {
    var self = this;
    var items = list(placements).map(function (p) {
      var seat = Number(p[0]);
      var toks = list(p[1]).length ? list(p[1]) : [p[1]];
      return '<span class="voy-group" title="' + self.esc(self.who(seat)) + '">' + toks.map(function (t) { return self.die(seat, t); }).join("") + "</span>";
    });
    return items.length ? items.join(" ") : '<span class="voy-empty">free</span>';
  };

  // --- the map -------------------------------------------------------------------------------------------
  Drawing.prototype.map = function () {
    var self = this, e = this.esc, v = this.v, b = this.b;
    var nodes = list(b.nodes);
    if (!nodes.length) return "";
    var maxX = 0, maxY = 0;
    nodes.forEach(function (n) { maxX = Math.max(maxX, n.xy[0]); maxY = Math.max(maxY, n.xy[1]); });
    var W = Math.round(PAD_X * 2 + maxX * SCALE + 60), H = Math.round(PAD_Y * 2 + maxY * SCALE + 20);
    var out = ['<div class="board-scroll voy-map"><svg class="board-svg voy-svg" viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="Map of the Silk Road">'];
    out.push('<rect x="0" y="0" width="' + W + '" height="' + H + '" class="voy-sea"/>');
    // routes
    list(b.routes).forEach(function (r) {
      var a = self.xy(r.a), c = self.xy(r.b);
      var cost = [];
      if (r.camels) cost.push(r.camels + " camels");
      if (r.coins) cost.push(r.coins + " coins");
      var title = self.nodeName(r.a) + " – " + self.nodeName(r.b) + (cost.length ? ": " + cost.join(" and ") + " extra" : ": no extra cost");
      out.push('<g class="voy-route"><title>' + e(title) + '</title><line x1="' + a[0] + '" y1="' + a[1] + '" x2="' + c[0] + '" y2="' + c[1] + '" class="voy-road' + (cost.length ? " voy-road-cost" : "") + '"/>');
      var at = self.costSpot(a, c, (r.camels && r.coins) ? 40 : 20), mx = at[0], my = at[1];
      if (r.camels && r.coins) { mx -= 10; }
      if (r.camels) {
        out.push('<rect x="' + (mx - 9) + '" y="' + (my - 8) + '" width="18" height="16" rx="4" class="voy-camel-cost"/><text x="' + mx + '" y="' + (my + 4) + '" class="voy-cost-text">' + r.camels + "</text>");
        mx += 20;
      }
      if (r.coins) out.push('<circle cx="' + mx + '" cy="' + my + '" r="9" class="voy-coin-cost"/><text x="' + mx + '" y="' + (my + 4) + '" class="voy-cost-text voy-coin-text">' + r.coins + "</text>");
      out.push("</g>");
    });
    var posts = {};  // node -> seats
    list(v.posts).forEach(function (ps, seat) { list(ps).forEach(function (n) { (posts[n] = posts[n] || []).push(seat); }); });
    var figures = {};
    list(v.figures).forEach(function (fs, seat) { list(fs).forEach(function (n) { (figures[n] = figures[n] || []).push(seat); }); });
    var slotsAt = {};
    list(b.card_slots).forEach(function (s, i) { (slotsAt[s.city] = slotsAt[s.city] || []).push(i); });
    nodes.forEach(function (n) {
      var p = self.xy(n.id), x = p[0], y = p[1];
      var kind = n.type;
      var title = n.name + " (" + ({ large: "large city", small: "small city", oasis: "oasis", start: "start city", beijing: "Beijing" }[kind] || kind) + ")";
      out.push('<g class="voy-node voy-' + kind + '" data-node="' + e(n.slug) + '"><title>' + e(title) + "</title>");
      if (kind === "large") out.push('<circle cx="' + x + '" cy="' + y + '" r="15" class="voy-city-large"/>');
      else if (kind === "small") out.push('<circle cx="' + x + '" cy="' + y + '" r="11" class="voy-city-small"/>');
      else if (kind === "oasis") out.push('<circle cx="' + x + '" cy="' + y + '" r="7" class="voy-oasis"/>');
      else out.push('<rect x="' + (x - 15) + '" y="' + (y - 15) + '" width="30" height="30" rx="5" class="voy-city-' + kind + '"/>');
      var label = kind === "oasis" ? n.name.replace("Oasis ", "") : n.name;
      var ly = kind === "oasis" ? y + 4 : y + (kind === "large" || kind === "start" || kind === "beijing" ? 29 : 24);
      out.push('<text x="' + x + '" y="' + ly + '" class="voy-label' + (kind === "oasis" ? " voy-oasis-label" : "") + '">' + e(label) + "</text>");
      out.push("</g>");
      // trading posts: small houses above the node
      var here = posts[n.id] || [];
      here.forEach(function (seat, i) {
        var px = x - (here.length * 11) / 2 + i * 11, py = y - (kind === "oasis" ? 18 : 30);
        out.push('<g class="voy-post"><title>' + e("Trading post of " + self.who(seat) + " in " + n.name) + '</title><path d="M' + px + " " + (py + 4) + " l5 -5 l5 5 v6 h-10 z" + '" style="fill:' + self.color(seat) + '" class="voy-post-shape"/></g>');
      });
      // figures: pawns to the right
      var figs = figures[n.id] || [];
      figs.forEach(function (seat, i) {
        var fx = x + 16 + i * 9, fy = y + 6 - (i % 2) * 4;
        out.push('<g class="voy-figure"><title>' + e("Figure of " + self.who(seat) + " in " + n.name) + '</title><circle cx="' + fx + '" cy="' + (fy - 7) + '" r="4" style="fill:' + self.color(seat) + '"/><path d="M' + (fx - 5) + " " + (fy + 5) + " q5 -12 10 0 z" + '" style="fill:' + self.color(seat) + '"/></g>');
      });
      // outpost bonus still on a large city
      var bonus = obj(v.outposts)[String(n.id)];
      if (bonus !== undefined && bonus !== null) {
        var ob = obj(b.outpost_bonuses)[String(bonus)] || {};
        var bx = x - 15, by = y - 50 + (here.length ? -2 : 12);
        out.push('<g class="voy-outpost"><title>' + e("Trading-post bonus of " + n.name + " (first post only): " + (ob.text || "")) + '</title><rect x="' + (bx - 14) + '" y="' + by + '" width="58" height="14" rx="3" class="voy-bonus-box"/><text x="' + (bx + 15) + '" y="' + (by + 10.5) + '" class="voy-bonus-text">' + e(shortBundle(ob.reward)) + "</text></g>");
      }
      // small-city bonus marker
      var letter = obj(v.city_bonus)[String(n.id)];
      if (letter) {
        var cb = obj(b.city_bonuses)[letter] || {};
        out.push('<g class="voy-citybonus"><title>' + e("City bonus " + letter + " of " + n.name + " (each round to every post here): " + (cb.text || "")) + '</title><circle cx="' + (x - 17) + '" cy="' + (y - 10) + '" r="7" class="voy-letter"/><text x="' + (x - 17) + '" y="' + (y - 7) + '" class="voy-letter-text">' + e(letter) + "</text></g>");
      }
      // city cards of this city
      (slotsAt[n.id] || []).forEach(function (slot, i) {
        var card = list(v.cards)[slot];
        if (card === undefined) return;
        var used = list(v.card_used)[slot];
        var cx = x - 40 + i * 27, cy = y + 33;
        var text = obj(b.city_cards)[String(card)] || "";
        var usedBy = used !== null && used !== undefined ? "; used this round by " + self.who(Number(used)) : "";
        out.push('<g class="voy-card"><title>' + e(n.name + " city card " + card + ": " + text + usedBy) + '</title><rect x="' + cx + '" y="' + cy + '" width="24" height="16" rx="3" class="voy-card-box"' +
          (usedBy ? ' style="stroke:' + self.color(Number(used)) + ';stroke-width:3"' : "") + '/><text x="' + (cx + 12) + '" y="' + (cy + 12) + '" class="voy-card-text">' + e(card) + "</text></g>");
      });
    });
    // Beijing's four spaces
    var bj = this.xy(b.beijing);
    list(b.beijing_vp).forEach(function (vp, i) {
      var owner = list(v.beijing)[i];
      var has = owner !== null && owner !== undefined;
      var sx = bj[0] + 24 + (i % 2) * 24, sy = bj[1] - 26 + Math.floor(i / 2) * 24;
      out.push('<g class="voy-beijing-space"><title>' + e("Beijing space " + (i + 1) + ": " + vp + " VP at the end" + (has ? ", taken by " + self.who(Number(owner)) : ", free")) + '</title><rect x="' + sx + '" y="' + sy + '" width="22" height="22" rx="3" class="voy-bj-box"' +
        (has ? ' style="fill:' + self.color(Number(owner)) + '"' : "") + '/><text x="' + (sx + 11) + '" y="' + (sy + 15) + '" class="voy-bj-text' + (has ? " voy-bj-taken" : "") + '">' + vp + "</text></g>");
    });
    // goal cities of the goals this view may show (each seat's own group, private)
    var self2 = this;
    this.goalSets().forEach(function (gs) {
      if (!gs.cards.length) return;
      out.push('<g class="voy-goal-marks" data-private-of="' + gs.seat + '">');
      var seen = {};
      gs.cards.forEach(function (g) {
        var goal = obj(b.goals)[String(g)];
        if (!goal) return;
        list(goal.cities).forEach(function (c) {
          if (seen[c]) return;
          seen[c] = true;
          var p = self2.xy(c);
          out.push('<circle data-secret cx="' + p[0] + '" cy="' + p[1] + '" r="20" class="voy-goal-ring" style="stroke:' + self2.color(gs.seat) + '"><title>' + e("Goal city of " + self2.who(gs.seat) + ": " + self2.nodeName(c)) + "</title></circle>");
        });
      });
      out.push("</g>");
    });
    out.push("</svg></div>");
    return out.join("");
  };

  // The goal cards this view may show: [{seat, cards}] (own seat in a seat's view; all once revealed).
  Drawing.prototype.goalSets = function () {
    var v = this.v, sets = [];
    for (var s = 0; s < this.ctx.players; s++) {
      if (v.seat === s) sets.push({ seat: s, cards: list(v.goals).length ? list(v.goals) : list(v.goal_offer) });
      else if (v.all_goals) sets.push({ seat: s, cards: list(list(v.all_goals)[s]) });
    }
    return sets;
  };

  // --- header: round, start player, piles ----------------------------------------------------------------
  Drawing.prototype.header = function () {
    var v = this.v, e = this.esc;
    var bits = [];
    var round = Number(v.round || 0);
    bits.push('<span class="voy-chip voy-round" title="The game lasts 5 rounds">' + (round ? "Round " + round + " of 5" : "Setup") + "</span>");
    if (v.start_player !== undefined && v.start_player !== null) {
      bits.push('<span class="voy-chip" title="Start player this round (the last seat to travel becomes the next start player)">Start player: <b style="color:' + this.textColor(v.start_player) + '">' + e(this.who(v.start_player)) + "</b></span>");
    }
    if (v.phase === "over") bits.push('<span class="voy-chip voy-over">Game over</span>');
    bits.push('<span class="voy-chip" title="Black dice left to buy or win this round">Black dice left: ' + e(v.black_left === undefined ? "–" : v.black_left) + "</span>");
    var piles = list(v.round_pile_sizes);
    bits.push('<span class="voy-chip" title="Face-down contract piles for the coming rounds">Round piles: ' + (piles.length ? e(piles.join(", ")) : "none") + "</span>");
    var self = this, known = list(v.special_known);
    bits.push('<span class="voy-chip voy-special" title="Special pile: unseen cards on top, then cards put back underneath (public)">Special pile: ' + e(v.special_hidden || 0) + " unseen" +
      (known.length ? ", then " + known.length + " known: " + known.map(function (c) { return self.contractCard(c); }).join(" ") : "") + "</span>");
    if (list(v.draft_pool).length && v.phase !== "play" && v.phase !== "over") {
      var chars = obj(this.b.characters);
      bits.push('<span class="voy-chip">Characters to choose: ' + list(v.draft_pool).map(function (k) {
        var c = chars[k] || {};
        return '<span class="voy-char" title="' + e(c.text || "") + '">' + e(c.name || k) + "</span>";
      }).join(", ") + "</span>");
    }
    return '<div class="voy-header">' + bits.join("") + "</div>";
  };

  // --- the action board ----------------------------------------------------------------------------------
  Drawing.prototype.actions = function () {
    var v = this.v, b = this.b, e = this.esc, self = this;
    var spaces = obj(v.spaces);
    var defs = {};
    list(b.spaces).forEach(function (s) { defs[s.id] = s; });
    function box(id, body, extra) {
      var d = defs[id] || {};
      return '<div class="voy-space voy-space-' + id + '" title="' + e((d.name || SPACE_TITLES[id]) + ": " + (d.text || "")) + '"><div class="voy-space-name">' + e(d.name || SPACE_TITLES[id]) +
        (d.dice ? ' <span class="voy-need">' + d.dice + (d.dice === 1 ? " die" : " dice") + "</span>" : "") + (extra || "") + "</div>" + body + "</div>";
    }
    var out = ['<section class="voy-actions"><h3 class="voy-h">Action board</h3><div class="voy-spaces">'];
    out.push(box("coins5", '<div class="voy-dice">' + this.placed(spaces.coins5) + "</div>"));
    ["camels", "pepper", "silk", "gold"].forEach(function (id) {
      var cols = list((defs[id] || {}).columns).map(function (text, i) {
        return '<span class="voy-col" title="' + e("Column " + (i + 1) + ": " + text) + '"><b>' + (i + 1) + "</b> " + e(text) + "</span>";
      }).join("");
      out.push(box(id, '<div class="voy-cols">' + cols + '</div><div class="voy-dice">' + self.placed(spaces[id]) + "</div>", ' <span class="voy-need voy-bazaar">bazaar</span>'));
    });
    var khan = list(v.khan), slots = [];
    for (var i = 0; i < 4; i++) {
      var k = khan[i];
      slots.push('<span class="voy-khan-slot" title="Khan\'s Favor space ' + (i + 1) + '">' + (k ? this.die(Number(k[0]), k[1]) : '<span class="voy-die voy-die-empty">' + (i + 1) + "</span>") + "</span>");
    }
    out.push(box("khan", '<div class="voy-dice">' + slots.join("") + '</div><div class="voy-note">each die at least the one before</div>'));
    var offer = list(v.board), rows = [];
    for (var s = 0; s < 6; s++) {
      var cid = offer[s];
      rows.push('<li class="voy-offer"><span class="voy-offer-n" title="' + e("Contract space " + (s + 1) + (s === 4 ? ": +1 coin or camel" : s === 5 ? ": +2 coins or camels" : "")) + '">' + (s + 1) + (s >= 4 ? "<sup>+" + (s - 3) + "</sup>" : "") + "</span> " +
        (cid === undefined ? '<span class="voy-empty">empty</span>' : this.contractCard(cid)) + "</li>");
    }
    out.push(box("contracts", '<ol class="voy-offers">' + rows.join("") + '</ol><div class="voy-dice">' + this.placed(spaces.contracts) + "</div>"));
    var costs = list(b.travel_cost).slice(1).map(function (c, i) { return '<span class="voy-col" title="' + e((i + 1) + " step" + (i ? "s" : "") + ": " + c + " coins") + '"><b>' + (i + 1) + "</b> " + c + " co</span>"; }).join("");
    out.push(box("travel", '<div class="voy-cols">' + costs + '</div><div class="voy-dice">' + this.placed(spaces.travel) + "</div>"));
    out.push("</div>");
    // city cards
    var cards = list(v.cards);
    if (cards.length) {
      out.push('<h3 class="voy-h">City cards</h3><ul class="voy-cards">');
      list(b.card_slots).forEach(function (slot, i) {
        var card = cards[i];
        if (card === undefined) return;
        var used = list(v.card_used)[i];
        var holders = [];
        list(v.posts).forEach(function (ps, seat) { if (list(ps).indexOf(slot.city) >= 0) holders.push(seat); });
        var text = obj(b.city_cards)[String(card)] || "";
        out.push('<li class="voy-cardrow" title="' + e("City card " + card + " in " + self.nodeName(slot.city) + ": " + text + " (needs a trading post there)") + '"><b>' + e(self.nodeName(slot.city)) + (/-\d$/.test(slot.slot) ? " " + slot.slot.slice(-1) : "") + "</b> #" + e(card) + ": " + e(text) +
          (used !== null && used !== undefined ? ' <span class="voy-used">used by ' + e(self.who(Number(used))) + "</span>" : "") +
          (holders.length ? ' <span class="voy-holders">' + holders.map(function (h) { return '<span class="voy-dot" style="background:' + self.color(h) + '" title="' + e(self.who(h) + " has a post here") + '"></span>'; }).join("") + "</span>" : "") + "</li>");
      });
      out.push("</ul>");
    }
    out.push("</section>");
    return out.join("");
  };

  // --- players -------------------------------------------------------------------------------------------
  Drawing.prototype.goalsHtml = function (seat) {
    var v = this.v, e = this.esc, b = this.b, self = this;
    var posts = list(list(v.posts)[seat]);
    var cards = null, label = "Goals";
    if (v.seat === seat) {
      cards = list(v.goals);
      if (!cards.length && list(v.goal_offer).length) { cards = list(v.goal_offer); label = "Goal cards dealt (keep 2)"; }
    } else if (v.all_goals) {
      cards = list(list(v.all_goals)[seat]);
    }
    var inner;
    if (cards) {
      inner = cards.map(function (g) {
        var goal = obj(b.goals)[String(g)] || { cities: [], vp: 0, text: "goal " + g };
        var done = list(goal.cities).length && list(goal.cities).every(function (c) { return posts.indexOf(c) >= 0; });
        var cities = list(goal.cities).map(function (c) { return '<span class="' + (posts.indexOf(c) >= 0 ? "voy-have" : "") + '">' + e(self.nodeName(c)) + "</span>"; }).join(" + ");
        return '<span class="voy-goal" data-secret title="' + e("Goal card " + g + ": trading posts in " + goal.text + (done ? " (done)" : "")) + '">' + cities + " <b>" + e(goal.vp) + " VP</b>" + (done ? " ✓" : "") + "</span>";
      }).join("") || '<span class="voy-empty">none yet</span>';
    } else {
      var n = Number(list(v.goal_counts)[seat] || 0), offered = Number(list(v.goal_offer_counts)[seat] || 0);
      if (!n && offered && v.phase === "setup") { n = offered; label = "Goal cards dealt"; }
      var ph = [];
      for (var i = 0; i < n; i++) ph.push('<span class="voy-goal hidden-item" title="A hidden goal card">?</span>');
      inner = ph.join("") || '<span class="voy-empty">none</span>';
    }
    return '<div class="voy-goals" data-private-of="' + seat + '"><span class="voy-k">' + e(label) + ":</span> " + inner + "</div>";
  };

  Drawing.prototype.player = function (seat, toMove) {
    var v = this.v, e = this.esc, b = this.b, self = this;
    var res = obj(list(v.res)[seat]);
    var color = this.color(seat);
    var charKey = list(v.chars)[seat];
    var ch = obj(obj(b.characters)[charKey]);
    var out = ['<div class="player voy-player' + (toMove ? " to-move" : "") + '" data-seat="' + seat + '" style="border-left-color:' + color + '">'];
    out.push('<div class="voy-ph"><b style="color:' + this.textColor(seat) + '">' + e(this.ctx.seatName(seat)) + "</b> <span class=\"muted\">seat " + seat + "</span>" +
      (v.start_player === seat ? ' <span class="voy-tag" title="Start player this round">start</span>' : "") + '<span class="voy-vp" title="Victory points">' + e(res.vp || 0) + " VP</span></div>");
    out.push('<div class="voy-charname" title="' + e(ch.text || "Character not chosen yet") + '">' + e(ch.name || "character not chosen yet") + "</div>");
    var resItems = [["coins", "co", "coins"], ["camels", "ca", "camels"], ["pepper", "pe", "pepper"], ["silk", "si", "silk"], ["gold", "go", "gold"]].map(function (r) {
      return '<span class="voy-res voy-res-' + r[0] + '" title="' + e((res[r[0]] || 0) + " " + r[2]) + '">' + e(res[r[0]] || 0) + " " + r[1] + "</span>";
    });
    out.push('<div class="voy-resources">' + resItems.join("") + "</div>");
    var dice = list(list(v.dice)[seat]);
    out.push('<div class="voy-row"><span class="voy-k">Dice:</span> ' + (dice.length ? dice.map(function (t) { return self.die(seat, t); }).join("") : '<span class="voy-empty">none left</span>') + "</div>");
    var posts = list(list(v.posts)[seat]).map(function (n) { return self.nodeName(n); });
    out.push('<div class="voy-row" title="' + e("Trading posts: " + (posts.join(", ") || "none")) + '"><span class="voy-k">Posts:</span> ' + e(posts.length) + " placed, " + e(list(v.posts_left)[seat] === undefined ? "?" : list(v.posts_left)[seat]) + " left" +
      (posts.length ? ' <span class="muted small">(' + e(posts.join(", ")) + ")</span>" : "") + "</div>");
    var figs = list(list(v.figures)[seat]).map(function (n) { return self.nodeName(n); });
    out.push('<div class="voy-row"><span class="voy-k">Figure' + (figs.length > 1 ? "s" : "") + ":</span> " + e(figs.join(" and ") || "–") + "</div>");
    var active = list(list(v.active)[seat]);
    out.push('<div class="voy-row"><span class="voy-k">Contracts:</span> ' + (active.length ? active.map(function (c) { return self.contractCard(c); }).join(" ") : '<span class="voy-empty">none</span>') + "</div>");
    var done = list(list(v.done)[seat]);
    out.push('<div class="voy-row" title="' + e("Completed contracts: " + (done.map(function (c) { return "#" + c; }).join(" ") || "none")) + '"><span class="voy-k">Completed:</span> ' + e(done.length) + "</div>");
    out.push(this.goalsHtml(seat));
    var final = list(v.final).filter(function (p) { return p && p.seat === seat; })[0];
    if (final) {
      var parts = [["goal_cards", "goal cards"], ["goal_cities", "goal cities"], ["beijing", "Beijing"], ["most_contracts", "most contracts"], ["coins", "coins"], ["goods", "goods"]]
        .map(function (p) { return e(p[1]) + " " + e(final[p[0]] || 0); });
      out.push('<div class="voy-final" title="Final scoring">Final scoring: <b>+' + e(final.total || 0) + "</b> (" + parts.join(", ") + ")</div>");
    }
    out.push("</div>");
    return out.join("");
  };

  Drawing.prototype.legend = function () {
    return '<details class="voy-legend"><summary>Legend: <b>co</b> coins · <b>ca</b> camels · <b>pe</b> pepper · <b>si</b> silk · <b>go</b> gold · <b>VP</b> victory points · ' +
      '<span class="voy-sw voy-sw-camel">3</span> extra camels · <span class="voy-sw voy-sw-coin">5</span> extra coins on a route (more)</summary><ul>' +
      "<li>good? a good of your choice · 2 goods a pair of different goods · bonus? another small-city bonus of your choice · contract: one from the special pile · move: one step</li>" +
      "<li>Large circle: large city (its trading-post bonus in the box above until the first post, city card numbers below) · small circle: small city with its lettered bonus · green dot: oasis · Beijing: four spaces worth 10, 7, 4 and 1 VP</li>" +
      "<li>Houses are trading posts and pawns are figures, in the seats' colours; a dashed ring marks a goal city of the seat whose goals are shown</li>" +
      "<li>Dice show their value (? is Raschid's die, its value chosen when used); dark dice are black dice, the white one is Matteo's, grey dice are neutral and never leave</li></ul></details>";
  };

  function draw(ctx) {
    var d = new Drawing(ctx);
    var v = d.v;
    var mover = ctx.frame && ctx.frame.next_action ? ctx.frame.next_action.seat : v.current_seat;
    var players = [];
    for (var s = 0; s < ctx.players; s++) players.push(d.player(s, s === mover && v.phase !== "over"));
    return '<div class="voy">' + d.header() + d.map() + d.legend() +
      '<div class="voy-panels">' + d.actions() + '<section class="players voy-players">' + players.join("") + "</section></div></div>";
  }

  if (window.CaravanReplay && window.CaravanReplay.register) {
    window.CaravanReplay.register("voyages", { draw: draw });
  }
})();
