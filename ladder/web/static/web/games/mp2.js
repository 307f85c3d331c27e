/* Marco Polo II: In the Service of the Khan (mp2-v1), with The Caravans: the replay viewer's drawing.

   Draws, from the frame's view and the game's static board (GET /api/v1/games/mp2-v1/board/): the map with
   its cities, oases and routes (costs, sea routes and their seals), city shields, bonus markers, outposts,
   city cards, contracts, trading posts, figures and caravans per seat; the action board with the dice placed
   (books and their offers, Khan's Favor, guild seals, travel, contracts, the special cities' spaces and the
   city cards); the contracts on offer; the route tiles; the shield track; and each seat's panel (resources,
   dice, character, seals, posts, contracts, caravans, and its goal card in that seat's own view).
   Hidden items (goal cards) carry data-private-of="<seat>" with data-secret on each real card; a card the
   viewer may not see is a .hidden-item placeholder. Vanilla ES5, no build, no fetch. */
(function () {
  "use strict";
  if (!window.CaravanReplay) return;

  var RES = [
    ["coins", "$", "coins"], ["camels", "Cm", "camels"], ["pepper", "P", "pepper"], ["silk", "S", "silk"],
    ["gold", "G", "gold"], ["jade", "J", "jade"], ["vp", "VP", "victory points"]
  ];
  var SHIELDS = {
    dragon: ["Dr", "#b91c1c"], horse: ["Ho", "#92400e"], crescent: ["Cr", "#0e7490"], tiger: ["Ti", "#c2410c"],
    lion: ["Li", "#a16207"], elephant: ["El", "#4b5563"], phoenix: ["Ph", "#be185d"], lotus: ["Lo", "#7e22ce"],
    eagle: ["Ea", "#1d4ed8"]
  };
  var SEALS = ["farmer", "spicer", "tailor", "jeweler"];
  var COLOUR_NAMES = ["blue", "yellow", "green", "red"];
  var W = 1000, H = 760;

  function has(obj, key) { return obj !== null && obj !== undefined && Object.prototype.hasOwnProperty.call(obj, key); }
  function get(obj, key, dflt) { return has(obj, key) && obj[key] !== null && obj[key] !== undefined ? obj[key] : dflt; }
  function list(x) { return Array.isArray(x) ? x : []; }
  function cap(s) { s = String(s); return s.charAt(0).toUpperCase() + s.slice(1); }

  function Ctx(ctx) {
    var self = this;
    this.ctx = ctx;
    this.v = ctx.view || {};
    this.b = ctx.board || {};
    this.esc = ctx.esc;
    this.n = Number(get(this.v, "num_players", ctx.players || 0)) || 0;
    var nodes = get(get(this.b, "map", {}), "nodes", []);
    this.nodes = {};
    list(nodes).forEach(function (node) { self.nodes[node.id] = node; });
    this.chars = get(this.b, "characters", {});
  }
  Ctx.prototype.color = function (seat) {
    return Number(seat) >= 0 ? this.ctx.seatColor(Number(seat)) : "#9ca3af";
  };
  Ctx.prototype.who = function (seat) {
    return Number(seat) >= 0 ? this.ctx.seatName(Number(seat)) + " (seat " + seat + ")" : "neutral";
  };
  Ctx.prototype.nodeName = function (id) { return this.nodes[id] ? this.nodes[id].name : String(id); };
  Ctx.prototype.charName = function (key) { return has(this.chars, key) ? this.chars[key].name : "no character yet"; };
  Ctx.prototype.xy = function (id) {
    var node = this.nodes[id];
    var p = node && node.xy ? node.xy : [50, 50];
    return [40 + Number(p[0]) * 9.3, 34 + Number(p[1]) * 7.2];
  };
  Ctx.prototype.contractText = function (cid) {
    var c = get(get(this.b, "contracts", {}), cid, null);
    return c ? cid + ": " + c.cost + " for " + c.vp + " VP + " + c.reward : String(cid);
  };
  Ctx.prototype.cardText = function (cid) {
    var c = get(get(this.b, "city_cards", {}), cid, null);
    return c ? "city card " + cid + ": " + c.text : "city card " + cid;
  };

  // --- small pieces ---------------------------------------------------------------------------------------
  // The die's number in white where white reads on the seat's colour (WCAG contrast 4.5), else in ink.
  function inkOn(hex) {
    var lum = [1, 3, 5].map(function (i) {
      var v = parseInt(String(hex).substr(i, 2), 16) / 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    var l = 0.2126 * lum[0] + 0.7152 * lum[1] + 0.0722 * lum[2];
    return 1.05 / (l + 0.05) >= 4.5 ? "#fff" : "#111827";
  }
  function tokValue(tok) { tok = String(tok); return tok.charAt(0) === "F" ? 6 : Number(tok.slice(1)); }
  function dieHtml(c, seat, tok, extra) {
    tok = String(tok);
    var kind = tok.charAt(0), value = tokValue(tok);
    var title, cls = "mp2-die";
    if (kind === "F") {
      var colour = Number(tok.slice(1));
      title = "Donata's spare " + (COLOUR_NAMES[colour] || "") + " figure (a 6)";
      return '<span class="mp2-die mp2-fig" style="background:' + c.color(colour) + ";color:" + inkOn(c.color(colour)) + '" title="' + c.esc(title) + '">F</span>';
    }
    if (kind === "b") { cls += " mp2-black"; title = "black die showing " + value; }
    else if (kind === "n" || Number(seat) < 0) { cls += " mp2-neutral"; title = "neutral die showing " + value; }
    else { title = "die showing " + value; }
    if (Number(seat) >= 0) title += ", " + c.who(seat);
    var style = kind === "b" ? "border-color:" + c.color(seat)
      : Number(seat) >= 0 ? "background:" + c.color(seat) + ";color:" + inkOn(c.color(seat)) : "";
    return '<span class="' + cls + (extra || "") + '" style="' + style + '" title="' + c.esc(title) + '">' + value + "</span>";
  }
  function resHtml(c, res, keys) {
    return (keys || RES).map(function (r) {
      var amount = get(res, r[0], 0);
      return '<span class="mp2-res mp2-r-' + r[0] + '" title="' + c.esc(amount + " " + r[2]) + '"><b>' + c.esc(r[1]) + "</b>" + amount + "</span>";
    }).join("");
  }
  function shieldBadge(c, shield) {
    var s = SHIELDS[shield];
    if (!s) return "";
    return '<span class="mp2-shield" style="background:' + s[1] + '" title="' + c.esc(shield + " shield") + '">' + s[0] + "</span>";
  }

  // --- the map --------------------------------------------------------------------------------------------
  function costLabel(cost) {
    var bits = [];
    if (get(cost, "coins", 0)) bits.push(cost.coins + "$");
    if (get(cost, "camels", 0)) bits.push(cost.camels + "Cm");
    if (get(cost, "jade", 0)) bits.push(cost.jade + "J");
    return bits.length ? bits.join(" ") : "free";
  }

  // Where the map's fixed words and marks are (each city's disc and name, each oasis and its name), as boxes
  // [x1, y1, x2, y2], so the route labels can be put beside them rather than over them.
  function nodeBoxes(c) {
    c.nameBoxes = {};
    var boxes = [], v = c.v, specials = get(c.b, "special_cities", {});
    var held = [get(v, "markers", {}), get(v, "outposts", {}), get(v, "cards", {}), get(v, "contract_spaces", {})];
    Object.keys(c.nodes).forEach(function (id) {
      var node = c.nodes[id], p = c.xy(id), x = p[0], y = p[1];
      var oasis = node.kind === "oasis", r = oasis ? 11 : node.kind === "start" ? 20 : 15;
      var name = String(node.name) + (has(specials, id) ? " *" : "");
      var nameW = (oasis ? 6 : 7.6) * name.length + 8, nameY = oasis ? y + 24 : y + r + 14;
      boxes.push([x - r - 2, y - r - 14, x + r + 2, y + r + 2]);
      boxes.push([x - nameW / 2, nameY - 12, x + nameW / 2, nameY + 4]);
      c.nameBoxes[id] = boxes[boxes.length - 1];
      var tags = held.filter(function (h) { return has(h, id); }).length;
      if (tags) boxes.push([x + r + 2, y - r, x + r + (tags > 2 ? 80 : 40), y - r + 14 * Math.min(tags, 2)]);
    });
    return boxes;
  }
  // The first point along the route, from its middle outwards and then a little to either side, where a
  // label of width w covers no name, disc or other label; else the point covering least. Its box is added
  // to `taken`.
  function labelSpot(a, b, w, taken) {
    var dx = b[0] - a[0], dy = b[1] - a[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
    var nx = -dy / len, ny = dx / len;
    var best = null;
    [0, 14, -14, 26, -26].forEach(function (off) {
      [0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73, 0.2, 0.8].forEach(function (t) {
        var x = a[0] + dx * t + nx * off, y = a[1] + dy * t + ny * off;
        var box = [x - w / 2, y - 9, x + w / 2, y + 8];
        var cover = covered(box, taken) + Math.abs(off) * 0.5 + Math.abs(t - 0.5) * 20;
        if (!best || cover < best[3]) best = [x, y, box, cover];
      });
    });
    taken.push(best[2]);
    return best;
  }
  function covered(box, boxes) {
    var area = 0;
    boxes.forEach(function (o) {
      var w = Math.min(box[2], o[2]) - Math.max(box[0], o[0]), h = Math.min(box[3], o[3]) - Math.max(box[1], o[1]);
      if (w > 0 && h > 0) area += w * h;
    });
    return area;
  }

  function mapSvg(c) {
    var v = c.v, esc = c.esc, out = [];
    var routes = list(get(get(c.b, "map", {}), "routes", []));
    out.push('<svg class="board-svg mp2-map" viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="Map of Asia: cities, oases and routes">');
    out.push('<rect x="0" y="0" width="' + W + '" height="' + H + '" fill="#f6e7c8"/>');
    routes.forEach(function (r) {
      var a = c.xy(r.a), b = c.xy(r.b);
      var sea = !!r.seal;
      out.push('<g class="mp2-route"><title>' + esc(r.text || (r.a + "-" + r.b)) + "</title>" +
        '<line x1="' + a[0] + '" y1="' + a[1] + '" x2="' + b[0] + '" y2="' + b[1] + '" stroke="' + (sea ? "#2563eb" : "#8b6b47") +
        '" stroke-width="' + (sea ? 4 : 3) + '"' + (sea ? ' stroke-dasharray="10 6"' : "") + "/></g>");
    });
    var taken = nodeBoxes(c);
    routes.forEach(function (r) {
      var a = c.xy(r.a), b = c.xy(r.b);
      var label = costLabel(r.cost) + (r.seal ? " " + cap(r.seal).charAt(0) : "");
      var w = 7 * label.length + 8;
      var at = labelSpot(a, b, w, taken), mx = at[0], my = at[1];
      out.push('<g class="mp2-cost"><title>' + esc(r.text || label) + "</title>" +
        '<rect x="' + (mx - w / 2) + '" y="' + (my - 9) + '" width="' + w + '" height="17" rx="4" fill="' + (r.seal ? "#dbeafe" : "#fffaf0") + '" stroke="#c8b08a"/>' +
        '<text x="' + mx + '" y="' + (my + 4) + '" text-anchor="middle" class="mp2-cost-text">' + esc(label) + "</text></g>");
    });
    var figuresAt = {}, postsAt = {}, caravansAt = {};
    for (var s = 0; s < c.n; s++) {
      list(get(v, "figures", [])[s]).forEach(function (node, i) {
        (figuresAt[node] = figuresAt[node] || []).push([s, i]);
      });
      list(get(v, "posts", [])[s]).forEach(function (node) { (postsAt[node] = postsAt[node] || []).push(s); });
      list(get(v, "caravans", [])[s]).forEach(function (car, i) {
        (caravansAt[car.at] = caravansAt[car.at] || []).push([s, i, car]);
      });
    }
    var markers = get(v, "markers", {}), outposts = get(v, "outposts", {}), cards = get(v, "cards", {});
    var contracts = get(v, "contract_spaces", {}), specials = get(c.b, "special_cities", {});
    Object.keys(c.nodes).forEach(function (id) {
      var node = c.nodes[id], p = c.xy(id), x = p[0], y = p[1];
      var tip = [node.name];
      if (node.kind === "oasis") {
        tip.push("oasis");
        out.push('<g class="mp2-node mp2-oasis" data-node="' + esc(id) + '"><title>' + esc(tip.join(", ")) + "</title>" +
          '<path d="M' + x + " " + (y - 11) + " L" + (x + 11) + " " + y + " L" + x + " " + (y + 11) + " L" + (x - 11) + " " + y + ' Z" fill="#86efac" stroke="#166534" stroke-width="2"/>' +
          '<text x="' + x + '" y="' + (y + 24) + '" text-anchor="middle" class="mp2-oasis-name">' + esc(node.name) + "</text></g>");
      } else {
        var sh = SHIELDS[node.shield] || ["?", "#6b7280"];
        var r = node.kind === "start" ? 20 : 15;
        tip.push(node.shield + " shield");
        if (has(markers, id)) tip.push("city bonus " + markers[id] + ": " + get(get(c.b, "markers", {}), markers[id], ""));
        if (has(outposts, id)) tip.push("outpost " + outposts[id] + ": " + get(get(c.b, "outposts", {}), outposts[id], ""));
        if (has(cards, id)) tip.push(c.cardText(cards[id]));
        if (has(contracts, id)) tip.push("contracts: " + list(contracts[id]).filter(Boolean).join(", "));
        if (has(specials, id)) tip.push("special city: its spaces give " + specials[id].action + "; a post there gives " + specials[id].bonus + " each round");
        out.push('<g class="mp2-node mp2-city" data-node="' + esc(id) + '"><title>' + esc(tip.join("; ")) + "</title>" +
          '<circle cx="' + x + '" cy="' + y + '" r="' + r + '" fill="' + sh[1] + '" stroke="#1f2937" stroke-width="' + (has(specials, id) ? 4 : 2) + '"/>' +
          '<text x="' + x + '" y="' + (y + 4) + '" text-anchor="middle" class="mp2-shield-text">' + sh[0] + "</text>" +
          '<text x="' + x + '" y="' + (y + r + 14) + '" text-anchor="middle" class="mp2-city-name">' + esc(node.name) + (has(specials, id) ? " \u2605" : "") + "</text>");
        // What the city holds, as small tags to its right.
        var tags = [];
        if (has(markers, id)) tags.push(["#fde68a", markers[id], "city bonus " + markers[id] + ": " + get(get(c.b, "markers", {}), markers[id], "")]);
        if (has(outposts, id)) tags.push(["#fed7aa", outposts[id], "outpost " + outposts[id] + ": " + get(get(c.b, "outposts", {}), outposts[id], "")]);
        if (has(cards, id)) tags.push(["#e9d5ff", cards[id], c.cardText(cards[id])]);
        if (has(contracts, id)) {
          var k = list(contracts[id]).filter(Boolean).length;
          tags.push(["#bbf7d0", k + "\u00d7K", k + " contract" + (k === 1 ? "" : "s") + " on offer: " + list(contracts[id]).filter(Boolean).join(", ")]);
        }
        var colW = Math.max.apply(null, [0].concat(tags.map(function (t) { return 6.2 * String(t[1]).length + 6; })));
        var cols = tags.length > 2 ? 2 : 1;  // two columns past two tags, so they stay clear of the name below
        var column = [x + r + 3, y - r, x + r + 3 + cols * (colW + 2), y - r + 14 * Math.ceil(tags.length / cols)];
        var left = Object.keys(c.nameBoxes).some(function (other) {
          var o = c.nameBoxes[other];
          return other !== id && column[0] < o[2] && o[0] < column[2] && column[1] < o[3] && o[1] < column[3];
        });
        tags.forEach(function (t, i) {
          var shift = (i % cols) * (colW + 2);
          var tx = left ? x - r - 3 - colW - shift : x + r + 3 + shift, ty = y - r + Math.floor(i / cols) * 14;
          out.push('<g class="mp2-tag"><title>' + esc(t[2]) + "</title>" +
            '<rect x="' + tx + '" y="' + ty + '" width="' + (6.2 * String(t[1]).length + 6) + '" height="13" rx="3" fill="' + t[0] + '" stroke="#78716c" stroke-width=".7"/>' +
            '<text x="' + (tx + 3) + '" y="' + (ty + 10) + '" class="mp2-tag-text">' + esc(t[1]) + "</text></g>");
        });
        // Trading posts: small squares above the city, one per seat with a post.
        list(postsAt[id]).forEach(function (seat, i) {
          var px = x - r + i * 11, py = y - r - 13;
          out.push('<rect class="mp2-post" x="' + px + '" y="' + py + '" width="9" height="9" fill="' + c.color(seat) + '" stroke="#111" stroke-width="1"><title>' +
            esc("trading post of " + c.who(seat)) + "</title></rect>");
        });
        out.push("</g>");
      }
      // Figures: pawns to the left of the node.
      list(figuresAt[id]).forEach(function (f, i) {
        var fx = x - 22 - (i % 3) * 12, fy = y - 4 + Math.floor(i / 3) * 14;
        out.push('<g class="mp2-figure"><title>' + esc((f[1] ? "second figure" : "figure") + " of " + c.who(f[0]) + " in " + node.name) + "</title>" +
          '<circle cx="' + fx + '" cy="' + (fy - 6) + '" r="5" fill="' + c.color(f[0]) + '" stroke="#111"/>' +
          '<path d="M' + (fx - 6) + " " + (fy + 8) + " L" + fx + " " + (fy - 3) + " L" + (fx + 6) + " " + (fy + 8) + ' Z" fill="' + c.color(f[0]) + '" stroke="#111"/></g>');
      });
      // Caravans: a cart below the node with its load.
      list(caravansAt[id]).forEach(function (cv, i) {
        var goods = list(cv[2].goods).map(function (g) { return g.charAt(0).toUpperCase(); }).join("");
        var label = "\u25A3" + (goods || "-");
        var cx = x - 4 * label.length, cy = y + (node.kind === "oasis" ? 27 : 32) + i * 15;
        out.push('<g class="mp2-caravan"><title>' + esc("caravan " + (cv[1] + 1) + " of " + c.who(cv[0]) + " (route tile " + cv[2].tile + ") in " + node.name +
          ", carrying " + (list(cv[2].goods).join(" + ") || "nothing")) + "</title>" +
          '<rect x="' + cx + '" y="' + cy + '" width="' + (8 * label.length + 6) + '" height="14" rx="3" fill="#fff" stroke="' + c.color(cv[0]) + '" stroke-width="2.5"/>' +
          '<text x="' + (cx + 4) + '" y="' + (cy + 11) + '" class="mp2-caravan-text">' + esc(label) + "</text></g>");
      });
    });
    out.push("</svg>");
    return '<div class="board-scroll mp2-map-scroll">' + out.join("") + "</div>";
  }

  // --- the action board -----------------------------------------------------------------------------------
  function placedHtml(c, entries) {
    var out = [];
    list(entries).forEach(function (e) {
      var seat = e[0];
      var toks = Array.isArray(e[1]) ? e[1] : [e[1]];
      out.push('<span class="mp2-group">' + toks.map(function (t) { return dieHtml(c, seat, t); }).join("") + "</span>");
    });
    return out.length ? out.join("") : '<span class="mp2-empty">free</span>';
  }
  function space(c, id, title, body, dice) {
    return '<div class="mp2-space" data-space="' + c.esc(id) + '" title="' + c.esc(title) + '"><div class="mp2-space-name">' + body + "</div>" +
      '<div class="mp2-space-dice">' + dice + "</div></div>";
  }
  function actionBoard(c) {
    var v = c.v, esc = c.esc, out = [];
    var spaces = get(v, "spaces", {}), books = get(c.b, "books", {}), tiles = get(c.b, "offer_tiles", {});
    var offerNow = get(v, "offer_now", {}), offerNext = get(v, "offer_next", {});
    out.push('<section class="mp2-section mp2-actions"><h3>Action board</h3><div class="mp2-spaces">');
    ["I", "II", "III"].forEach(function (numeral) {
      var book = get(books, numeral, {});
      var free = list(book.free);
      var tileId = get(offerNow, numeral, null), tile = get(tiles, tileId, null);
      var body = "<b>Book " + numeral + "</b> <small>die \u2265 " + get(book, "min_die", "?") + "</small>" +
        '<ul class="mp2-offers"><li title="free offer 1">free: ' + esc(free[0] || "") + '</li><li title="free offer 2">free: ' + esc(free[1] || "") + "</li>";
      if (tile) {
        body += '<li title="offer tile ' + esc(tileId) + ' (1 jade)">1J: ' + esc(tile.jade1) + '</li><li title="offer tile ' + esc(tileId) + ' (2 jade)">2J: ' + esc(tile.jade2) + "</li>";
      }
      body += "</ul><small>tile " + esc(tileId || "-") + (get(offerNext, numeral, null) ? ", next " + esc(offerNext[numeral]) : "") +
        (c.v.options && c.v.options.caravans ? "; caravans move " + get(book, "caravan_steps", "?") : "") + "</small>";
      var ids = numeral === "III" ? ["book3a", "book3b"] : [numeral === "I" ? "book1" : "book2"];
      var dice = ids.map(function (sid) {
        return '<span class="mp2-sub" title="' + esc(sid === "book3a" ? "upper space" : sid === "book3b" ? "lower space" : "space") + '">' + placedHtml(c, spaces[sid]) + "</span>";
      }).join("");
      out.push(space(c, "book" + numeral, "Book " + numeral + ": a die of at least " + get(book, "min_die", "?") + "; one free offer or pay jade for the offer tile", body, dice));
    });
    var khan = list(get(v, "khan", []));
    var slots = [];
    for (var k = 0; k < 4; k++) {
      slots.push('<span class="mp2-slot" title="Khan\'s Favor space ' + (k + 1) + (k > 0 ? ": a die at least as high as the one before" : "") + '">' +
        (khan[k] ? dieHtml(c, khan[k][0], khan[k][1]) : '<span class="mp2-empty">' + (k + 1) + "</span>") + "</span>");
    }
    out.push(space(c, "khan", "Khan's Favor: 4 coins and 2 camels; each die at least as high as the last", "<b>Khan's Favor</b><br><small>4$ + 2 Cm</small>", slots.join("")));
    var sealList = list(get(c.b, "seals", [])).map(function (s) {
      return '<li title="' + esc(s.name + ": die " + s.min_die + "+, " + s.jade + " jade; improve for " + s.improve + ", then " + s.bonus + " each round") + '">' +
        esc(cap(s.id)) + " " + s.min_die + "+</li>";
    }).join("");
    out.push(space(c, "seals", "Guild Seals: 2 dice (De Wu: 1); a seal up to the lower die's tier", "<b>Guild Seals</b><ul class=\"mp2-offers\">" + sealList + "</ul>", placedHtml(c, spaces.seals)));
    [["travel1", "1 die, 1 step, +2$"], ["travel2", "2 dice, \u2264 3 steps"], ["travel3", "3 dice, \u2264 6 steps, extra post"]].forEach(function (t, i) {
      out.push(space(c, t[0], "Travel " + (i + 1) + ": " + t[1] + "; the highest travel taken becomes first player", "<b>Travel " + (i + 1) + "</b><br><small>" + esc(t[1]) + "</small>", placedHtml(c, spaces[t[0]])));
    });
    out.push(space(c, "contracts", "Contracts: take up to 2 contracts from cities with your post, then 3 coins", "<b>Contracts</b><br><small>take 2 + 3$</small>", placedHtml(c, spaces.contracts)));
    out.push("</div>");
    // Special cities and city cards: one die each.
    var brown = get(v, "brown", {}), specials = get(c.b, "special_cities", {});
    out.push('<div class="mp2-spaces mp2-small-spaces">');
    Object.keys(specials).forEach(function (city) {
      var data = specials[city];
      var dice = [1, 2].map(function (k) {
        var sid = city + "-" + k;
        return '<span class="mp2-slot" title="' + esc(c.nodeName(city) + " space " + k) + '">' + (brown[sid] ? dieHtml(c, brown[sid][0], brown[sid][1]) : '<span class="mp2-empty">' + k + "</span>") + "</span>";
      }).join("");
      out.push(space(c, city, c.nodeName(city) + " (special city, needs a post there): " + data.action + "; improved " + data.seal + "'s seal adds its bonus",
        "<b>" + esc(c.nodeName(city)) + " \u2605</b><br><small>" + esc(data.action) + "</small>", dice));
    });
    var cards = get(v, "cards", {});
    list(get(c.b, "card_slots", [])).forEach(function (slot) {
      var cid = get(cards, slot.slot, null);
      var placed = brown[slot.id];
      var where = slot.slot === "A1" || slot.slot === "A2" ? "action area " + slot.slot : c.nodeName(slot.slot);
      var text = cid ? get(get(c.b, "city_cards", {}), cid, { text: "" }).text : "no card";
      out.push(space(c, slot.id, (cid ? c.cardText(cid) : "no card") + " (" + where + (slot.slot.charAt(0) === "A" ? ", anyone" : ", needs a post there") + ")",
        "<b>" + esc(cid || "-") + "</b> <small>" + esc(where) + "</small><br><small class=\"mp2-card-text\">" + esc(text) + "</small>",
        placed ? dieHtml(c, placed[0], placed[1]) : '<span class="mp2-empty">free</span>'));
    });
    out.push("</div>");
    out.push('<p class="mp2-note">Black dice left: <b>' + esc(get(v, "black_left", "?")) + "</b> \u00b7 city cards left in the deck: " + esc(get(v, "card_deck_size", "?")) +
      " \u00b7 money bag: any die for 3$, 2 Cm or 1 J</p>");
    out.push("</section>");
    return out.join("");
  }

  // --- contracts, route tiles, shield track ----------------------------------------------------------------
  function contractCard(c, cid, attrs) {
    var data = get(get(c.b, "contracts", {}), cid, null);
    if (!data) return '<span class="mp2-contract"' + (attrs || "") + ">" + c.esc(cid) + "</span>";
    return '<span class="mp2-contract"' + (attrs || "") + ' title="' + c.esc(c.contractText(cid)) + '"><b>' + c.esc(cid) + "</b> " + c.esc(data.cost) +
      ' <span class="mp2-arrow">\u2192</span> <b>' + data.vp + " VP</b>" + (data.reward && data.reward !== "nothing" ? " + " + c.esc(data.reward) : "") + "</span>";
  }
  function contractsOnOffer(c) {
    var spaces = get(c.v, "contract_spaces", {}), out = [];
    out.push('<section class="mp2-section"><h3>Contracts on offer</h3><div class="mp2-contract-cities">');
    Object.keys(spaces).forEach(function (city) {
      out.push('<div class="mp2-contract-city"><b>' + c.esc(c.nodeName(city)) + "</b>" + list(spaces[city]).map(function (cid) {
        return cid ? contractCard(c, cid) : '<span class="mp2-contract mp2-empty">taken</span>';
      }).join("") + "</div>");
    });
    out.push('</div><p class="mp2-note">Contract pile: ' + c.esc(get(c.v, "pile_size", "?")) + " cards</p></section>");
    return out.join("");
  }
  function routeTiles(c) {
    var tiles = get(c.v, "tiles", {});
    if (!Object.keys(tiles).length) return "";
    var holder = {};
    for (var s = 0; s < c.n; s++) {
      list(get(c.v, "caravans", [])[s]).forEach(function (car) { holder[car.tile] = s; });
    }
    var shields = get(c.b, "route_tiles", {}), out = [];
    out.push('<section class="mp2-section"><h3>The Caravans: route tiles</h3><div class="mp2-tiles">');
    Object.keys(tiles).sort().forEach(function (t) {
      var state = tiles[t], sh = list(shields[t]);
      var who = has(holder, t) ? holder[t] : null;
      var label = state === "up" ? "open" : state === "down" ? "face down until the next round" : "held" + (who !== null ? " by " + c.who(who) : "");
      out.push('<span class="mp2-tile mp2-tile-' + c.esc(state) + '" title="' + c.esc("route tile " + t + ": " + sh.join(" - ") + ", " + label) + '"' +
        (who !== null ? ' style="border-color:' + c.color(who) + '"' : "") + "><b>" + c.esc(t) + "</b> " + sh.map(function (x) { return shieldBadge(c, x); }).join("") +
        ' <small>' + c.esc(state === "held" ? "held" : state === "up" ? "open" : "down") + "</small></span>");
    });
    var sell = get(c.b, "caravan_sell_vp", {});
    out.push('</div><p class="mp2-note">A completed route: each good doubled, upgraded or sold (pepper ' + c.esc(get(sell, "pepper", "?")) + ", silk " +
      c.esc(get(sell, "silk", "?")) + ", gold " + c.esc(get(sell, "gold", "?")) + " VP).</p></section>");
    return out.join("");
  }
  function publicShields(c, seat) {
    var held = heldShields(c, seat);
    var chars = get(c.v, "chars", []);
    var bonus = chars[seat] === "dewu" || chars[seat] === "tebaldo" ? 1 : 0;
    var goal = get(get(c.b, "goals", {}), knownGoal(c, seat), null);
    list(goal ? goal.shields : []).forEach(function (shield) { if (held[shield]) bonus += 1; });
    return Object.keys(held).length + Number(get(c.v, "extra_shields", [])[seat] || 0) + bonus;
  }
  // The seat's kept goal card when this view may know it (its own view, or the revealed table), else "".
  function knownGoal(c, seat) {
    var mine = c.ctx.seat !== null && c.ctx.seat !== undefined && Number(c.ctx.seat) === seat;
    if (mine) return get(c.v, "goal", "") || "";
    var all = get(c.v, "all_goals", null);
    return Array.isArray(all) && all[seat] ? all[seat] : "";
  }
  function shieldTrack(c) {
    var track = list(get(c.b, "shield_track", [])), out = [];
    if (!track.length) return "";
    var at = {};
    for (var s = 0; s < c.n; s++) {
      var k = Math.min(publicShields(c, s), track.length - 1);
      (at[k] = at[k] || []).push(s);
    }
    out.push('<section class="mp2-section"><h3>Shield track</h3><div class="mp2-track">');
    track.forEach(function (vp, k) {
      out.push('<span class="mp2-track-cell" title="' + c.esc(k + " shields: " + vp + " VP at the end") + '"><b>' + k + "</b><small>" + vp + "VP</small>" +
        list(at[k]).map(function (seat) { return '<i class="mp2-dot" style="background:' + c.color(seat) + '" title="' + c.esc(c.who(seat)) + '"></i>'; }).join("") + "</span>");
    });
    out.push('</div><p class="mp2-note">Shields of the cities with a post, plus +1s (outpost, contracts, De Wu, Tebaldo) and the goal card\'s shields where this view knows the goal.</p></section>');
    return out.join("");
  }

  // --- players --------------------------------------------------------------------------------------------
  function heldShields(c, seat) {
    var held = {};
    list(get(c.v, "posts", [])[seat]).forEach(function (city) {
      var node = c.nodes[city];
      if (node && node.shield) held[node.shield] = true;
    });
    return held;
  }
  function goalHtml(c, gid, seat) {
    var g = get(get(c.b, "goals", {}), gid, null);
    var text = g ? g.text : "";
    var held = heldShields(c, seat);
    return '<span class="mp2-goal" data-secret title="' + c.esc("goal card " + gid + ": " + text + " (a ring marks a shield already held)") + '"><b>' + c.esc(gid) + "</b> " +
      (g ? list(g.shields).map(function (s) { return held[s] ? '<span class="mp2-got">' + shieldBadge(c, s) + "</span>" : shieldBadge(c, s); }).join("") : "") +
      (g ? Object.keys(g.seals || {}).map(function (s) { return " <small>" + c.esc(cap(s)) + "\u2605 " + g.seals[s] + "VP</small>"; }).join("") : "") + "</span>";
  }
  function privateGoal(c, seat) {
    var v = c.v, ctx = c.ctx, inner;
    var kept = list(get(v, "goal_kept", []))[seat];
    var mine = ctx.seat !== null && ctx.seat !== undefined && Number(ctx.seat) === seat;
    var all = get(v, "all_goals", null);
    if (mine && get(v, "goal", "")) inner = goalHtml(c, v.goal, seat);
    else if (mine && list(get(v, "goal_offer", [])).length) inner = "<small>to choose from:</small> " + list(v.goal_offer).map(function (g) { return goalHtml(c, g, seat); }).join("");
    else if (Array.isArray(all) && all[seat]) inner = goalHtml(c, all[seat], seat);
    else if (kept || list(get(v, "goal_offer_counts", []))[seat]) inner = '<span class="mp2-goal hidden-item" title="a goal card only this seat sees">goal card</span>';
    else inner = '<span class="mp2-empty">none</span>';
    return '<div class="mp2-row" data-private-of="' + seat + '"><span class="mp2-label">Goal</span> ' + inner + "</div>";
  }
  function finalParts(c, seat) {
    var final = list(get(c.v, "final", []));
    var parts = null;
    final.forEach(function (p) { if (Number(p.seat) === seat) parts = p; });
    if (!parts) return "";
    var names = [["goal_seals", "goal seals"], ["shields", "shields"], ["goods", "goods"], ["coins", "coins"], ["contracts", "contracts"], ["caravans", "caravans"]];
    return '<div class="mp2-row mp2-final"><span class="mp2-label">Final scoring</span> ' + names.map(function (nm) {
      return '<span title="' + c.esc(nm[1] + " at the end") + '">' + c.esc(nm[1]) + " " + c.esc(get(parts, nm[0], 0)) + "</span>";
    }).join(" \u00b7 ") + " = <b>" + c.esc(get(parts, "total", 0)) + "</b></div>";
  }
  function playerPanel(c, seat, mover) {
    var v = c.v, esc = c.esc, out = [];
    var charKey = list(get(v, "chars", []))[seat] || "";
    var charData = get(c.chars, charKey, null);
    var first = Number(get(v, "first_player", -1)) === seat;
    out.push('<div class="player mp2-player' + (mover === seat ? " to-move" : "") + '" data-seat="' + seat + '" style="border-left-color:' + c.color(seat) + '">');
    out.push('<div class="mp2-head"><i class="mp2-dot" style="background:' + c.color(seat) + '"></i><b>' + esc(c.ctx.seatName(seat)) + "</b> <small>seat " + seat + "</small>" +
      (first ? ' <span class="mp2-badge" title="first player this round">1st</span>' : "") +
      (mover === seat ? ' <span class="mp2-badge mp2-badge-move" title="to move">to move</span>' : "") + "</div>");
    out.push('<div class="mp2-row"><span class="mp2-label">Character</span> <span class="mp2-char" title="' + esc(charData ? charData.text : "not chosen yet") + '">' + esc(c.charName(charKey)) + "</span></div>");
    out.push('<div class="mp2-row mp2-resrow">' + resHtml(c, list(get(v, "res", []))[seat] || {}) + "</div>");
    var dice = list(list(get(v, "dice", []))[seat]);
    var figs = list(list(get(v, "spare_figs", []))[seat]);
    out.push('<div class="mp2-row"><span class="mp2-label">Dice</span> ' + (dice.length ? dice.map(function (t) { return dieHtml(c, seat, t); }).join("") : '<span class="mp2-empty">none left</span>') +
      figs.map(function (col) { return dieHtml(c, seat, "F" + col); }).join("") + "</div>");
    var seals = list(get(v, "seals", []))[seat] || {};
    out.push('<div class="mp2-row"><span class="mp2-label">Seals</span> ' + (SEALS.filter(function (s) { return has(seals, s); }).map(function (s) {
      var improved = seals[s] === 2;
      return '<span class="mp2-seal' + (improved ? " mp2-improved" : "") + '" title="' + esc(cap(s) + "'s seal" + (improved ? ", improved" : "")) + '">' + esc(cap(s)) + (improved ? "\u2605" : "") + "</span>";
    }).join("") || '<span class="mp2-empty">none</span>') + "</div>");
    var posts = list(list(get(v, "posts", []))[seat]);
    out.push('<div class="mp2-row"><span class="mp2-label">Posts</span> ' + posts.length + " placed, " + esc(list(get(v, "posts_left", []))[seat]) + " left" +
      (posts.length ? ' <small title="' + esc(posts.map(function (p) { return c.nodeName(p); }).join(", ")) + '">(' + esc(posts.map(function (p) { return c.nodeName(p); }).join(", ")) + ")</small>" : "") + "</div>");
    var figures = list(list(get(v, "figures", []))[seat]);
    out.push('<div class="mp2-row"><span class="mp2-label">Figure' + (figures.length > 1 ? "s" : "") + "</span> " + esc(figures.map(function (f) { return c.nodeName(f); }).join(" and ")) +
      " \u00b7 shields " + publicShields(c, seat) + "</div>");
    var active = list(list(get(v, "active", []))[seat]), done = list(list(get(v, "done", []))[seat]);
    out.push('<div class="mp2-row"><span class="mp2-label">Contracts</span> ' + (active.length ? active.map(function (cid) { return contractCard(c, cid); }).join("") : '<span class="mp2-empty">none open</span>') +
      ' <small title="' + esc(done.join(", ")) + '">' + done.length + " completed</small></div>");
    var kept = list(list(get(v, "kept_tiles", []))[seat]);
    if (kept.length) {
      out.push('<div class="mp2-row"><span class="mp2-label">Kept outposts</span> ' + kept.map(function (t) {
        return '<span class="mp2-chip" title="' + esc("outpost " + t + ": " + get(get(c.b, "outposts", {}), t, "")) + '">' + esc(t) + "</span>";
      }).join("") + "</div>");
    }
    var caravans = list(list(get(v, "caravans", []))[seat]);
    if (v.options && v.options.caravans) {
      out.push('<div class="mp2-row"><span class="mp2-label">Caravans</span> ' + (caravans.length ? caravans.map(function (car, i) {
        return '<span class="mp2-chip" title="' + esc("caravan " + (i + 1) + " on route tile " + car.tile + " in " + c.nodeName(car.at)) + '">' + esc(car.tile + " at " + c.nodeName(car.at) + ": " + (list(car.goods).join(" + ") || "empty")) + "</span>";
      }).join("") : '<span class="mp2-empty">none</span>') + "</div>");
    }
    out.push(privateGoal(c, seat));
    out.push(finalParts(c, seat));
    out.push("</div>");
    return out.join("");
  }

  function header(c) {
    var v = c.v, esc = c.esc, bits = [];
    var phase = get(v, "phase", "");
    if (phase === "setup") bits.push("<b>Setup</b>: characters and goal cards");
    else bits.push("<b>Round " + esc(get(v, "round", "?")) + "</b> of " + esc(get(c.b, "rounds", 5)));
    if (phase === "over") bits.push("<b>game over</b>" + (v.end_reason === "step_cap" ? " (step cap)" : ""));
    if (get(v, "first_player", null) !== null && phase !== "setup") bits.push("first player " + esc(c.who(v.first_player)));
    if (v.next_first !== null && v.next_first !== undefined && phase === "play") bits.push("next round's first: " + esc(c.who(v.next_first)));
    if (v.options && v.options.caravans) bits.push("with The Caravans");
    var pool = list(get(v, "draft_pool", []));
    if (phase === "setup" && pool.length) bits.push("characters left: " + esc(pool.map(function (k) { return c.charName(k); }).join(", ")));
    return '<p class="mp2-header">' + bits.join(" \u00b7 ") + "</p>";
  }

  function legend() {
    return '<details class="mp2-section mp2-legend"><summary>Legend</summary><p>' +
      "<b>$</b> coins, <b>Cm</b> camels, <b>P</b> pepper, <b>S</b> silk, <b>G</b> gold, <b>J</b> jade, <b>VP</b> victory points. " +
      "Route labels give the cost of a step; blue dashed routes need the seal named by its letter (S spicer, T tailor, J jeweler). " +
      "Cities show their shield (" + Object.keys(SHIELDS).map(function (s) { return SHIELDS[s][0] + " " + s; }).join(", ") + "), \u2605 a special city; " +
      "tags: CB city bonus marker, OP outpost, CC city card, K contracts on offer. Squares above a city are trading posts, pawns are figures, " +
      "\u25A3 boxes are caravans with their load (P/S/G). Dice: filled in the seat's colour; a black die has a dark face and a border in its owner's colour; grey dice are neutral; F is one of Donata's figures (a 6). " +
      "Hover anything for its full name.</p></details>";
  }

  function draw(ctx) {
    var c = new Ctx(ctx);
    var v = c.v;
    var mover = ctx.frame && ctx.frame.next_action ? Number(ctx.frame.next_action.seat) : (v.current_seat !== null && v.current_seat !== undefined ? Number(v.current_seat) : null);
    var out = ['<div class="mp2">', header(c)];
    out.push(ctx.board ? mapSvg(c) : '<p class="mp2-note">The map is loading.</p>');
    out.push('<div class="board-panels mp2-panels">');
    out.push('<div class="players mp2-players">');
    for (var s = 0; s < c.n; s++) out.push(playerPanel(c, s, mover));
    out.push("</div>");
    out.push(actionBoard(c));
    out.push('<div class="mp2-two">' + contractsOnOffer(c) + shieldTrack(c) + "</div>");
    out.push(routeTiles(c));
    out.push(legend());
    out.push("</div></div>");
    return out.join("");
  }

  window.CaravanReplay.register("mp2", { draw: draw });
})();
