/* What the last action changed, for the match viewer (replay.js): from two frames of the same view (the step
   before and the step shown), for every game without knowing its rules.

   - `CaravanReplay.diff.deltas(before, after, players)`: the numbers that changed in the views, by seat
     (a per-seat array such as `players[]` or `res[]` holds seat i at index i) and for the table, as
     [{seat, label, delta}], e.g. {seat: 1, label: "coins", delta: -3}; a list's length counts as a number
     ("hand count", "cards").
   - `CaravanReplay.diff.signatures(board)`: every element of a drawn board by its path of tags (anchored
     at `data-node`, `data-space`, `data-seat`, `data-private-of`, `id`), with its own attributes and text;
     `CaravanReplay.diff.mark(before, now)` marks with the class `rv-changed` every element of the board now
     that is new or differs from the same element before (the viewer keeps the last board's signatures, so
     stepping through a match reads each board once).

   It reads only what the viewer was given (the two views of the same seat or of the spectator): it never
   fetches and never reveals anything the views hide. Vanilla JS, no build. */
(function () {
  "use strict";
  var SKIP = { events: 1, log: 1, step: 1, seat: 1, game_id: 1, num_players: 1, options: 1, current_seat: 1, turn: 1, round: 1 };
  var ANCHORS = ["data-node", "data-space", "data-seat", "data-private-of", "id"];
  var TABLE_LIMIT = 6;

  function label(path) {
    return path.filter(function (p) { return typeof p === "string"; }).join(" ").replace(/_/g, " ");
  }
  function isSeatArray(value, players) {
    return Array.isArray(value) && value.length === players && value.every(function (v) { return v && typeof v === "object" && !Array.isArray(v); });
  }

  function deltas(before, after, players) {
    var out = [];
    function push(seat, path, delta) { if (delta) out.push({ seat: seat, label: label(path) || "value", delta: delta }); }
    function walk(a, b, path, seat) {
      if (typeof a === "number" && typeof b === "number") { push(seat, path, Math.round((b - a) * 1000) / 1000); return; }
      if (Array.isArray(a) && Array.isArray(b)) {
        if (seat === null && isSeatArray(a, players) && isSeatArray(b, players)) {
          for (var i = 0; i < players; i++) walk(a[i], b[i], path, i);
        } else if (a.length !== b.length) {
          push(seat, path, b.length - a.length);
        }
        return;
      }
      if (a && b && typeof a === "object" && typeof b === "object") {
        Object.keys(b).forEach(function (key) {
          if (!SKIP[key] && key in a) walk(a[key], b[key], path.concat([key]), seat);
        });
      }
    }
    walk(before, after, [], null);
    var table = out.filter(function (d) { return d.seat === null; }).slice(0, TABLE_LIMIT);
    return out.filter(function (d) { return d.seat !== null; }).concat(table);
  }

  function ownSignature(el) {
    var bits = [];
    for (var i = 0; i < el.attributes.length; i++) {
      var a = el.attributes[i];
      bits.push(a.name + "=" + (a.name === "class" ? a.value.replace(/\s*rv-changed/g, "") : a.value));
    }
    for (var c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 3) bits.push(c.nodeValue.trim());
    return bits.join("|");
  }
  function anchor(el) {
    for (var i = 0; i < ANCHORS.length; i++) {
      var v = el.getAttribute(ANCHORS[i]);
      if (v !== null && v !== "") return ANCHORS[i] + "=" + v;
    }
    return null;
  }
  // Every element under `root` by its path, with its own signature.
  function signatures(root) {
    var map = {};
    (function walk(node, path) {
      var counts = {};
      for (var c = node.firstElementChild; c; c = c.nextElementSibling) {
        var tag = c.tagName.toLowerCase();
        var id = anchor(c);
        var key = id ? tag + "[" + id + "]" : tag + (counts[tag] = (counts[tag] || 0) + 1);
        var here = path + "/" + key;
        map[here] = { sig: ownSignature(c), el: c };
        walk(c, here);
      }
    })(root, "");
    return map;
  }

  // Marks the changed elements of the board now (`now`, its signatures) against the board before (`old`);
  // returns how many. A frame where most of the board differs (another layout, the first frame) is left
  // unmarked: a highlight there would say nothing.
  function mark(old, now) {
    var changed = [], total = 0;
    Object.keys(now).forEach(function (path) {
      total++;
      if (!old[path] || old[path].sig !== now[path].sig) changed.push(now[path].el);
    });
    if (!changed.length || changed.length > total * 0.5) return 0;
    changed.forEach(function (el) {
      if (el.classList) el.classList.add("rv-changed");
    });
    return changed.length;
  }

  window.CaravanReplay = window.CaravanReplay || {};
  window.CaravanReplay.diff = { deltas: deltas, mark: mark, signatures: signatures };
})();
