/* kdtourney report: sortable tables and the game replay. Plain JavaScript, no libraries.
   On success the body gets data-ready="ok"; any error lands in data-errors.
   Open the page with #selftest to step through the replay and record the outcome in data-selftest. */
(function () {
  "use strict";
  var body = document.body;
  function recordError(text) {
    var old = body.getAttribute("data-errors");
    body.setAttribute("data-errors", (old ? old + " | " : "") + text);
  }
  window.onerror = function (message, source, line, col) {
    recordError(String(message) + " (line " + line + ":" + col + ")");
    return false;
  };
  window.addEventListener("unhandledrejection", function (e) { recordError("unhandled rejection: " + e.reason); });

  var SVGNS = "http://www.w3.org/2000/svg";

  /* ---------- sortable tables ---------- */
  function cellValue(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null || v === "") { v = cell.textContent.trim(); }
    var n = parseFloat(String(v).replace("\u2212", "-").replace("%", ""));
    return isNaN(n) ? String(v).toLowerCase() : n;
  }
  function makeSortable(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, index) {
      th.tabIndex = 0;
      th.setAttribute("aria-sort", "none");
      function sort() {
        var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
        Array.prototype.forEach.call(heads, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", dir);
        var tbody = table.tBodies[0];
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a.cells[index]), y = cellValue(b.cells[index]);
          var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
          return dir === "ascending" ? c : -c;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);

  /* ---------- replay ---------- */
  var dataNode = document.getElementById("replay-data");
  var replay = null;
  if (dataNode) {
    replay = initReplay(JSON.parse(dataNode.textContent));
  }

  function initReplay(data) {
    var CELL = data.cell, PAD = 2;
    var $ = function (id) { return document.getElementById(id); };
    var select = $("rp-game"), slider = $("rp-slider"), pos = $("rp-pos"), moveText = $("rp-move");
    var rowsBox = $("rp-rows"), kingdomsBox = $("rp-kingdoms"), viewer = $("replay-viewer");
    var state = { game: null, index: 0, step: 0 };

    function crown(x, y, w) {
      var h = w * 0.7, pts = [[0, 1], [0, 0.25], [0.27, 0.6], [0.5, 0], [0.73, 0.6], [1, 0.25], [1, 1]];
      return pts.map(function (p) { return (x + p[0] * w).toFixed(1) + "," + (y + p[1] * h).toFixed(1); }).join(" ");
    }
    function castle(x, y) {
      var c = CELL, pts = [[0.2, 0.85], [0.2, 0.3], [0.32, 0.3], [0.32, 0.4], [0.44, 0.4], [0.44, 0.3], [0.56, 0.3],
        [0.56, 0.4], [0.68, 0.4], [0.68, 0.3], [0.8, 0.3], [0.8, 0.85]];
      var p = pts.map(function (q) { return (x + q[0] * c).toFixed(1) + "," + (y + q[1] * c).toFixed(1); }).join(" ");
      return '<polygon points="' + p + '" fill="#6b5b4b" stroke="#2b2118" stroke-width="0.6"/>' +
        '<rect x="' + (x + 0.43 * c).toFixed(1) + '" y="' + (y + 0.6 * c).toFixed(1) + '" width="' +
        (0.14 * c).toFixed(1) + '" height="' + (0.25 * c).toFixed(1) + '" fill="#f7f3ea"/>';
    }
    function square(x, y, terrain, crowns, cls) {
      var s = '<rect class="' + cls + '" x="' + x + '" y="' + y + '" width="' + CELL + '" height="' + CELL +
        '" fill="' + (data.palette[terrain] || "#ccc") + '" stroke="#fff" stroke-width="0.8"/>';
      if (terrain === 7) { s += castle(x, y); }
      for (var k = 0; k < crowns; k++) {
        var w = CELL * 0.28;
        s += '<polygon points="' + crown(x + 1.5 + k * (w + 0.8), y + 1.5, w) + '" fill="#fff7c2" stroke="#1b1b1b" stroke-width="0.6"/>';
      }
      return s;
    }
    function kingdomSvg(cells, size, origin) {
      var side = size * CELL + 2 * PAD;
      var s = '<svg class="kingdom" viewBox="0 0 ' + side + " " + side + '" xmlns="' + SVGNS + '" aria-hidden="true">' +
        '<rect x="' + PAD + '" y="' + PAD + '" width="' + size * CELL + '" height="' + size * CELL +
        '" fill="' + data.palette["0"] + '" stroke="#9aa3ad" stroke-width="1" stroke-dasharray="3 2"/>';
      Object.keys(cells).forEach(function (key) {
        var rc = key.split(","), v = cells[key];
        var i = +rc[0] - origin[0], j = +rc[1] - origin[1];
        if (i < 0 || j < 0 || i >= size || j >= size) { return; }
        s += square(PAD + j * CELL, PAD + i * CELL, v[0], v[1], "sq");
      });
      return s + "</svg>";
    }
    function dominoSvg(n, owner) {
      var t = data.tiles[n], w = 2 * CELL + 2 * PAD, h = CELL + 2 * PAD;
      var s = '<svg viewBox="0 0 ' + w + " " + h + '" width="' + (w * 1.4) + '" height="' + (h * 1.4) + '" xmlns="' + SVGNS + '" aria-hidden="true">' +
        square(PAD, PAD, t[0], t[1], "dm") + square(PAD + CELL, PAD, t[2], t[3], "dm");
      if (owner >= 0) {
        s += '<circle cx="' + (PAD + CELL) + '" cy="' + (PAD + CELL / 2) + '" r="6" fill="' + data.seatColors[owner] +
          '" stroke="#fff" stroke-width="1.2"/><text x="' + (PAD + CELL) + '" y="' + (PAD + CELL / 2 + 3) +
          '" font-size="8" font-weight="700" text-anchor="middle" fill="#fff">' + (owner + 1) + "</text>";
      }
      return s + "</svg>";
    }
    function describeRow(flat) {
      var parts = [];
      for (var i = 0; i < flat.length; i += 2) {
        var t = data.tiles[flat[i]];
        parts.push("#" + flat[i] + " " + data.terrains[t[0]] + " " + t[1] + "/" + data.terrains[t[2]] + " " + t[3] +
          (flat[i + 1] >= 0 ? " (seat " + (flat[i + 1] + 1) + ")" : " (free)"));
      }
      return parts.join("; ");
    }
    function rowBox(label, flat) {
      var div = document.createElement("div");
      div.className = "row";
      var span = document.createElement("span");
      span.textContent = label;
      div.appendChild(span);
      var pics = document.createElement("span");
      pics.setAttribute("role", "img");
      pics.setAttribute("aria-label", label + ": " + (flat.length ? describeRow(flat) : "none"));
      var html = "";
      for (var i = 0; i < flat.length; i += 2) { html += dominoSvg(flat[i], flat[i + 1]); }
      pics.innerHTML = html || "\u2014";
      div.appendChild(pics);
      return div;
    }
    function cellsAt(game, step) {
      var deal = game.steps[step][0], start = step;
      while (start > 0 && game.steps[start - 1][0] === deal) { start--; }
      var cells = game.players.map(function () { return {}; });
      for (var k = start; k <= step; k++) {
        var add = game.steps[k][3];
        for (var a = 0; a < add.length; a += 5) {
          cells[add[a]][add[a + 1] + "," + add[a + 2]] = [add[a + 3], add[a + 4]];
        }
      }
      return { deal: deal, cells: cells };
    }
    function draw() {
      var game = state.game, k = state.step, st = game.steps[k];
      var at = cellsAt(game, k);
      slider.value = String(k);
      pos.textContent = k + " / " + (game.steps.length - 1);
      moveText.textContent = st[2];
      rowsBox.textContent = "";
      rowsBox.appendChild(rowBox("Placing", st[4]));
      rowsBox.appendChild(rowBox("To choose", st[5]));
      kingdomsBox.textContent = "";
      game.players.forEach(function (p, i) {
        var li = document.createElement("li");
        if (st[1] === p.seat) { li.className = "active"; }
        li.innerHTML = kingdomSvg(at.cells[i], game.size, game.origins[at.deal][i]);
        var who = document.createElement("span");
        who.className = "who";
        var dot = document.createElement("span");
        dot.className = "seat";
        dot.style.background = data.seatColors[p.seat];
        dot.setAttribute("aria-hidden", "true");
        dot.textContent = String(p.seat + 1);
        who.appendChild(dot);
        who.appendChild(document.createTextNode(p.name));
        var pts = document.createElement("span");
        pts.className = "pts";
        pts.textContent = st[6][i] + " points now";
        li.setAttribute("aria-label", "Seat " + (p.seat + 1) + ", " + p.name + ": " + st[6][i] + " points, " +
          (Object.keys(at.cells[i]).length - 1) + " squares of land");
        li.appendChild(who);
        li.appendChild(pts);
        kingdomsBox.appendChild(li);
      });
    }
    function go(step) {
      var n = state.game.steps.length;
      state.step = Math.max(0, Math.min(n - 1, step | 0));
      draw();
    }
    function load(index) {
      state.index = index;
      state.game = data.games[index];
      slider.max = String(state.game.steps.length - 1);
      select.value = String(index);
      go(0);
    }
    $("rp-start").addEventListener("click", function () { go(0); });
    $("rp-prev").addEventListener("click", function () { go(state.step - 1); });
    $("rp-next").addEventListener("click", function () { go(state.step + 1); });
    $("rp-end").addEventListener("click", function () { go(state.game.steps.length - 1); });
    slider.addEventListener("input", function () { go(+slider.value); });
    select.addEventListener("change", function () { load(+select.value); });
    viewer.addEventListener("keydown", function (e) {
      if (e.target === select || e.target === slider) { return; }
      var keys = { ArrowLeft: -1, ArrowRight: 1 };
      if (e.key in keys) { e.preventDefault(); go(state.step + keys[e.key]); }
      else if (e.key === "Home") { e.preventDefault(); go(0); }
      else if (e.key === "End") { e.preventDefault(); go(state.game.steps.length - 1); }
    });
    Array.prototype.forEach.call(document.querySelectorAll("a.replay-link"), function (a) {
      a.addEventListener("click", function () { load(+a.getAttribute("data-replay")); });
    });
    load(0);
    return { data: data, state: state, go: go, load: load, cellsAt: cellsAt };
  }

  /* ---------- self-test: #selftest ---------- */
  function selftest() {
    var problems = [];
    function check(ok, what) { if (!ok) { problems.push(what); } }
    function drawnSquares() { return document.querySelectorAll("#rp-kingdoms rect.sq").length; }
    function click(id) { document.getElementById(id).dispatchEvent(new MouseEvent("click", { bubbles: true })); }
    if (!replay) { return "no replay"; }
    var games = replay.data.games;
    for (var g = 0; g < games.length; g++) {
      var select = document.getElementById("rp-game");
      select.value = String(g);
      select.dispatchEvent(new Event("change"));
      var game = games[g], last = game.steps.length - 1, players = game.players.length;
      check(replay.state.step === 0, "game " + g + ": not at step 0 after loading");
      check(drawnSquares() === players, "game " + g + ": " + drawnSquares() + " squares at the start, expected " + players + " castles");
      click("rp-next");
      check(replay.state.step === 1, "game " + g + ": next did not move to step 1");
      check(document.getElementById("rp-pos").textContent === "1 / " + last, "game " + g + ": position text wrong");
      click("rp-end");
      check(replay.state.step === last, "game " + g + ": end did not reach the last step");
      var expected = 0, at = replay.cellsAt(game, last);
      at.cells.forEach(function (c) { expected += Object.keys(c).length; });
      check(drawnSquares() === expected, "game " + g + ": " + drawnSquares() + " squares at the end, expected " + expected);
      check(expected > players, "game " + g + ": no land at the end");
      click("rp-prev");
      check(replay.state.step === last - 1, "game " + g + ": prev did not step back");
      var slider = document.getElementById("rp-slider");
      slider.value = String(Math.min(5, last));
      slider.dispatchEvent(new Event("input"));
      check(replay.state.step === Math.min(5, last), "game " + g + ": the slider did not move the replay");
      click("rp-start");
      check(replay.state.step === 0 && drawnSquares() === players, "game " + g + ": start did not reset the kingdoms");
      check(document.querySelectorAll("#rp-rows svg").length > 0, "game " + g + ": no dominoes in the rows");
    }
    return problems.length ? "fail: " + problems.join("; ") : "ok";
  }
  if (location.hash === "#selftest") {
    try { body.setAttribute("data-selftest", selftest()); }
    catch (e) { body.setAttribute("data-selftest", "error: " + e); recordError(String(e)); }
  }
  body.setAttribute("data-ready", "ok");
})();
