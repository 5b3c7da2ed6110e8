/* kdtourney pages: Kingdomino drawn in the page (the report's game viewer, the play page), with the
   palette and geometry of kdtourney/report/svg.py. kdBoard(data) gives the drawing functions;
   data: palette, tiles (halves: terrain, crowns, terrain, crowns), letters, terrains, seatColors,
   cell. Every square drawn says what it is (data-square="row col terrain crowns"), every domino
   its number, owner and whether it was placed. */
window.kdBoard = function (data) {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg", CELL = data.cell, PAD = 2, CASTLE = 7;

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
  function square(x, y, terrain, crowns, attrs) {
    var s = '<rect ' + attrs + ' x="' + x + '" y="' + y + '" width="' + CELL + '" height="' + CELL +
      '" fill="' + (data.palette[terrain] || "#ccc") + '" stroke="#fff" stroke-width="0.8"/>';
    if (terrain === CASTLE) { s += castle(x, y); }
    for (var k = 0; k < crowns; k++) {
      var w = CELL * 0.28;
      s += '<polygon points="' + crown(x + 1.5 + k * (w + 0.8), y + 1.5, w) + '" fill="#fff7c2" stroke="#1b1b1b" stroke-width="0.6"/>';
    }
    return s;
  }
  /* cells: {"row,col": [terrain, crowns]}, castle included; origin: the frame's top left square;
     marks: squares to outline, [{r, c, cls}] (the play page's legal placements) */
  function kingdomSvg(cells, size, origin, marks) {
    var side = size * CELL + 2 * PAD;
    var s = '<svg class="kingdom" viewBox="0 0 ' + side + " " + side + '" xmlns="' + SVGNS + '" aria-hidden="true">' +
      '<rect x="' + PAD + '" y="' + PAD + '" width="' + size * CELL + '" height="' + size * CELL +
      '" fill="' + data.palette["0"] + '" stroke="#9aa3ad" stroke-width="1" stroke-dasharray="3 2"/>';
    Object.keys(cells).forEach(function (key) {
      var rc = key.split(","), v = cells[key];
      var i = +rc[0] - origin[0], j = +rc[1] - origin[1];
      if (i < 0 || j < 0 || i >= size || j >= size) { return; }
      s += square(PAD + j * CELL, PAD + i * CELL, v[0], v[1],
        'class="sq" data-square="' + rc[0] + " " + rc[1] + " " + v[0] + " " + v[1] + '"');
    });
    (marks || []).forEach(function (m) {
      var i = m.r - origin[0], j = m.c - origin[1];
      s += '<rect class="' + m.cls + '" data-cell="' + m.r + " " + m.c + '" x="' + (PAD + j * CELL + 1) + '" y="' +
        (PAD + i * CELL + 1) + '" width="' + (CELL - 2) + '" height="' + (CELL - 2) + '" rx="3"/>';
    });
    return s + "</svg>";
  }
  function dominoSvg(n, owner, placed) {
    var t = data.tiles[n], w = 2 * CELL + 2 * PAD, h = CELL + 2 * PAD;
    var s = '<svg class="domino' + (placed ? " placed" : "") + '" data-domino="' + n + '" data-owner="' + owner +
      '" data-placed="' + (placed ? 1 : 0) + '" viewBox="0 0 ' + w + " " + h + '" width="' + (w * 1.4) +
      '" height="' + (h * 1.4) + '" xmlns="' + SVGNS + '" aria-hidden="true">' +
      square(PAD, PAD, t[0], t[1], 'class="dm"') + square(PAD + CELL, PAD, t[2], t[3], 'class="dm"');
    if (owner >= 0) {
      s += '<circle cx="' + (PAD + CELL) + '" cy="' + (PAD + CELL / 2) + '" r="6" fill="' + data.seatColors[owner] +
        '" stroke="#fff" stroke-width="1.2"/><text x="' + (PAD + CELL) + '" y="' + (PAD + CELL / 2 + 3) +
        '" font-size="8" font-weight="700" text-anchor="middle" fill="#fff">' + (owner + 1) + "</text>";
    }
    return s + "</svg>";
  }
  /* the engine's way of writing a domino: #23 W1|M0 */
  function tileText(n) {
    var t = data.tiles[n];
    return "#" + n + " " + data.letters[t[0]] + t[1] + "|" + data.letters[t[2]] + t[3];
  }
  function describeRow(row) {
    return row.map(function (d) {
      var t = data.tiles[d[0]];
      return "#" + d[0] + " " + data.terrains[t[0]] + " " + t[1] + "/" + data.terrains[t[2]] + " " + t[3] +
        (d[1] >= 0 ? " (seat " + (d[1] + 1) + (d[2] ? ", placed" : "") + ")" : " (free)");
    }).join("; ");
  }
  /* a row of dominoes, [[domino, owner, placed]], with its label; `claim` makes free dominoes
     buttons (the play page) */
  function rowBox(label, row, claim) {
    var div = document.createElement("div");
    div.className = "row";
    var span = document.createElement("span");
    span.textContent = label;
    div.appendChild(span);
    var pics = document.createElement("span");
    pics.setAttribute("role", "img");
    pics.setAttribute("aria-label", label + ": " + (row.length ? describeRow(row) : "none"));
    row.forEach(function (d) {
      var holder = document.createElement(claim && claim(d) ? "button" : "span");
      holder.className = "tile";
      /* the number a person reads and calls the domino by, beside its picture */
      holder.innerHTML = dominoSvg(d[0], d[1], d[2]) + '<span class="tile-num" aria-hidden="true">#' + d[0] + "</span>";
      if (holder.tagName === "BUTTON") {
        holder.type = "button";
        holder.setAttribute("aria-label", "Claim " + tileText(d[0]));
        holder.setAttribute("data-claim", String(d[0]));
      }
      pics.appendChild(holder);
    });
    if (!row.length) { pics.textContent = "\u2014"; }
    div.appendChild(pics);
    return div;
  }
  /* a name that may break after a ':' only, as the pages' tables show it (page.py name_tokens) */
  function appendName(parent, name) {
    String(name).split(":").forEach(function (part, k, parts) {
      if (k) { parent.appendChild(document.createElement("wbr")); }
      var tok = document.createElement("span");
      tok.className = "tok";
      tok.textContent = part + (k < parts.length - 1 ? ":" : "");
      parent.appendChild(tok);
    });
  }
  /* a seat's kingdom in a list item: picture, seat and name, points (`final`: the game is over) */
  function seatItem(seat, name, pts, svg, active, final) {
    var li = document.createElement("li");
    li.setAttribute("data-seat", String(seat));
    if (active) { li.className = "active"; }
    li.innerHTML = svg;
    var who = document.createElement("span");
    who.className = "who";
    var dot = document.createElement("span");
    dot.className = "seat";
    dot.style.background = data.seatColors[seat];
    dot.setAttribute("aria-hidden", "true");
    dot.textContent = String(seat + 1);
    who.appendChild(dot);
    appendName(who, name);
    var points = document.createElement("span");
    points.className = "pts";
    points.setAttribute("data-score", String(pts));
    points.textContent = pts + (final ? " points, final" : " points now");
    li.appendChild(who);
    li.appendChild(points);
    return li;
  }
  return { kingdomSvg: kingdomSvg, dominoSvg: dominoSvg, rowBox: rowBox, tileText: tileText, seatItem: seatItem };
};
