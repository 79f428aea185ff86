"use strict";
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const main = document.getElementById("main");

  function el(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function sv(tag, attrs, parent, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmt(x) {
    if (x === null || x === undefined) return "–";
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(2);
    return String(+x.toPrecision(4));
  }
  function list(title, items, cls) {
    if (!items || !items.length) return;
    const box = el("div", { class: cls }, main);
    el("h2", {}, box, title);
    const ul = el("ul", {}, box);
    for (const s of items) el("li", {}, ul, s);
  }

  document.title = "streamfit report: " + D.title;
  el("h1", {}, main, "streamfit report: " + D.title);
  el("p", { class: "summary" }, main, D.summary);
  scores();
  if (D.sweep) sweep(D.sweep);
  warnings();
  list("What this page cannot show", D.notes, "notes");
  if (D.topics) topics(D.topics);
  if (D.panels && D.panels.length) {
    const grid = el("section", { class: "panels" }, main);
    for (const p of D.panels) panel(grid, p);
  }
  provenance();
  document.body.setAttribute("data-ready", "1");

  // The figures a person judges the model by, first on the page.
  function scores() {
    if (D.scores && D.scores.length) {
      const sec = el("section", { class: "scores" }, main);
      for (const sc of D.scores) {
        const box = el("div", { class: "score", title: sc.about }, sec);
        el("div", { class: "score-value" }, box, fmt(sc.value));
        el("div", { class: "score-name" }, box, sc.name);
        el("div", { class: "score-about" }, box, sc.about);
        el("div", { class: "score-source" }, box, sc.source);
      }
    } else if (D.no_scores) {
      el("p", { class: "note noscores" }, main, D.no_scores);
    }
  }

  // The sweep over k: held-out perplexity against k, the coherence curves
  // beside it, the recommended k marked in each, and the table of scores.
  function sweep(S) {
    const sec = el("section", { class: "sweep" }, main);
    el("h2", {}, sec, "How many topics?");
    let about = "The sweep " + S.source + " fitted k = " + S.k.join(", ") + ".";
    if (S.recommended) about += " Recommended k = " + S.recommended + ": " + S.rule + "; held out: " + S.held_out + ".";
    if (S.shown) about += " This page shows the model of k = " + S.shown + ".";
    el("p", { class: "note" }, sec, about);
    if (S.perplexity) {
      const row = el("div", { class: "curves" }, sec);
      curve(row, "Held-out perplexity (lower is better)", S.k, S.perplexity, S);
      curve(row, "Coherence, NPMI (higher is better)", S.k, S.npmi, S);
      curve(row, "Coherence, UMass (higher is better)", S.k, S.umass, S);
    }
    const table = el("table", { class: "sweeptable" }, sec);
    const head = el("tr", {}, table);
    const cols = S.perplexity ? ["k", "held-out perplexity", "NPMI", "UMass", "diversity", "EM passes"] : ["k", "EM passes"];
    for (const c of cols) el("th", {}, head, c);
    S.k.forEach((k, i) => {
      const cls = (k === S.recommended ? "rec" : "") + (k === S.shown ? " shown" : "");
      const tr = el("tr", { "data-k": k, class: cls.trim() }, table);
      el("td", { class: "num" }, tr, String(k) + (k === S.recommended ? " (recommended)" : ""));
      if (S.perplexity) for (const v of [S.perplexity[i], S.npmi[i], S.umass[i], S.diversity[i]]) el("td", { class: "num" }, tr, fmt(v));
      el("td", { class: "num" }, tr, String(S.em_passes[i]));
    });
  }

  // curve draws vals against ks as a line with a point per k; the
  // recommended k's point is ringed and a dashed line marks it, and the
  // page's model's k is filled.
  function curve(parent, title, ks, vals, S) {
    const box = el("div", { class: "panel curve" }, parent);
    el("h3", {}, box, title);
    const W = 360, H = 220, l = 58, r = 16, t = 14, b = 40;
    const svg = sv("svg", { width: W, height: H, class: "curve" }, box);
    const good = vals.filter((v) => v !== null);
    let lo = Math.min(...good), hi = Math.max(...good);
    if (!(hi > lo)) { lo -= 1; hi += 1; }
    const pad = (hi - lo) * 0.08;
    lo -= pad; hi += pad;
    const k0 = ks[0], k1 = ks[ks.length - 1];
    const x = (k) => (k1 > k0 ? l + (W - l - r) * (k - k0) / (k1 - k0) : (l + W - r) / 2);
    const y = (v) => t + (H - t - b) * (hi - v) / (hi - lo);
    sv("line", { x1: l, x2: W - r, y1: H - b, y2: H - b, class: "axis" }, svg);
    sv("line", { x1: l, x2: l, y1: t, y2: H - b, class: "axis" }, svg);
    sv("text", { x: l - 4, y: t + 8, "text-anchor": "end", class: "lab" }, svg, fmt(hi));
    sv("text", { x: l - 4, y: H - b, "text-anchor": "end", class: "lab" }, svg, fmt(lo));
    sv("text", { x: (l + W - r) / 2, y: H - 6, "text-anchor": "middle", class: "lab" }, svg, "k (topics)");
    const every = Math.ceil(ks.length / 10);
    ks.forEach((k, i) => {
      if (i % every === 0 || k === S.recommended) sv("text", { x: x(k), y: H - b + 14, "text-anchor": "middle", class: "lab" }, svg, String(k));
    });
    if (S.recommended) {
      sv("line", { x1: x(S.recommended), x2: x(S.recommended), y1: t, y2: H - b, class: "recline" }, svg);
    }
    const pts = [];
    ks.forEach((k, i) => { if (vals[i] !== null) pts.push(x(k) + "," + y(vals[i])); });
    sv("polyline", { points: pts.join(" "), class: "line" }, svg);
    ks.forEach((k, i) => {
      if (vals[i] === null) return;
      const cls = "pt" + (k === S.recommended ? " rec" : "") + (k === S.shown ? " shown" : "");
      const c = sv("circle", { cx: x(k), cy: y(vals[i]), r: k === S.recommended ? 6 : 4, class: cls, "data-k": k }, svg);
      sv("title", {}, c, "k = " + k + ": " + fmt(vals[i]) + (k === S.recommended ? " (recommended)" : ""));
    });
  }

  // The fit's doubts: what each means and what to try, the fit's own words
  // folded away.
  function warnings() {
    if (!D.warnings || !D.warnings.length) return;
    const box = el("section", { class: "warnings" }, main);
    el("h2", {}, box, D.warnings.length === 1 ? "One thing to check" : D.warnings.length + " things to check");
    for (const w of D.warnings) {
      const item = el("div", { class: "warning" }, box);
      el("h3", {}, item, w.title);
      el("p", {}, item, w.meaning);
      if (w.try && w.try.length) {
        el("p", { class: "try" }, item, "What to try:");
        const ul = el("ul", {}, item);
        for (const s of w.try) el("li", {}, ul, s);
      }
      const det = el("details", {}, item);
      el("summary", {}, det, "Technical detail");
      el("p", { class: "detail" }, det, w.detail);
    }
  }

  // placeLabels places one box of size w×h per circle {x, y, r, w, h}
  // (SVG coordinates, within W×H) so that no two boxes overlap: greedily,
  // in the order given, each at the first free spot of a spiral around its
  // circle — its centre first, then rings outwards — preferring spots that
  // cover no other circle. It returns the boxes' centres.
  function placeLabels(items, W, H) {
    const boxes = [];
    const m = 1; // px kept free around each box
    function free(cx, cy, it, self, avoidCircles) {
      const x0 = cx - it.w / 2 - m, x1 = cx + it.w / 2 + m, y0 = cy - it.h / 2 - m, y1 = cy + it.h / 2 + m;
      if (x0 < 0 || y0 < 0 || x1 > W || y1 > H) return false;
      for (const b of boxes) if (x0 < b.x1 && b.x0 < x1 && y0 < b.y1 && b.y0 < y1) return false;
      if (avoidCircles) {
        for (let j = 0; j < items.length; j++) {
          if (j === self) continue;
          const c = items[j];
          const dx = Math.max(x0 - c.x, 0, c.x - x1), dy = Math.max(y0 - c.y, 0, c.y - y1);
          if (dx * dx + dy * dy < c.r * c.r) return false;
        }
      }
      return true;
    }
    const out = [];
    const dirs = 16, step = 6, reach = Math.hypot(W, H);
    items.forEach((it, i) => {
      let at = null;
      for (const avoid of [true, false]) {
        if (free(it.x, it.y, it, i, avoid)) { at = [it.x, it.y]; break; }
        for (let d = it.r + 3; !at && d < reach; d += step) {
          for (let a = 0; a < dirs; a++) {
            const th = -Math.PI / 2 + (2 * Math.PI * a) / dirs;
            const c = Math.cos(th), s = Math.sin(th);
            const cx = it.x + c * (d + Math.abs(c) * it.w / 2), cy = it.y + s * (d + Math.abs(s) * it.h / 2);
            if (free(cx, cy, it, i, avoid)) { at = [cx, cy]; break; }
          }
        }
        if (at) break;
      }
      at = at || [it.x, it.y];
      boxes.push({ x0: at[0] - it.w / 2 - m, x1: at[0] + it.w / 2 + m, y0: at[1] - it.h / 2 - m, y1: at[1] + it.h / 2 + m });
      out.push(at);
    });
    return out;
  }

  function topics(T) {
    const k = T.k;
    const sec = el("section", { class: "explorer" }, main);
    const left = el("div", { class: "mapbox" }, sec);
    el("h2", {}, left, "Topic map");
    el("p", { class: "note" }, left, "Topics placed by classical scaling of their Jensen–Shannon distances; circle area is the topic's weight. Click a topic to see its words; click it again for the whole corpus.");
    const W = 520, H = 520, pad = 70;
    const map = sv("svg", { id: "map", width: W, height: H, viewBox: "0 0 " + W + " " + H }, left);
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (let t = 0; t < k; t++) {
      x0 = Math.min(x0, T.x[t]); x1 = Math.max(x1, T.x[t]);
      y0 = Math.min(y0, T.y[t]); y1 = Math.max(y1, T.y[t]);
    }
    const span = Math.max(x1 - x0, y1 - y0) || 1;
    const px = (v) => pad + (W - 2 * pad) * ((v - (x0 + x1) / 2) / span + 0.5);
    const py = (v) => pad + (H - 2 * pad) * (0.5 - (v - (y0 + y1) / 2) / span);
    sv("line", { x1: pad / 2, y1: H / 2, x2: W - pad / 2, y2: H / 2, class: "axis" }, map);
    sv("line", { x1: W / 2, y1: pad / 2, x2: W / 2, y2: H - pad / 2, class: "axis" }, map);
    sv("text", { x: W - pad / 2, y: H / 2 - 4, class: "axislabel", "text-anchor": "end" }, map, "PC1");
    sv("text", { x: W / 2 + 4, y: pad / 2 + 10, class: "axislabel" }, map, "PC2");
    const wmax = Math.max(...T.weights);
    const R = Math.max(8, Math.min(60, 180 / Math.sqrt(k)));
    const order = [...Array(k).keys()].sort((a, b) => T.weights[b] - T.weights[a]);
    const circles = [], groups = [], radius = [];
    for (const t of order) {
      const g = sv("g", { class: "topic-g" }, map);
      groups[t] = g;
      radius[t] = Math.max(R * Math.sqrt(T.weights[t] / wmax), 2);
      const c = sv("circle", { class: "topic", cx: px(T.x[t]), cy: py(T.y[t]), r: radius[t], "data-topic": t }, g);
      sv("title", {}, c, "topic " + t + ": weight " + fmt(T.weights[t]));
      g.addEventListener("click", () => select(selected === t ? -1 : t));
      circles[t] = c;
    }
    // The labels lie above every circle, each where no other label covers
    // it; one moved off its circle is tied to it by a line.
    const labelLayer = sv("g", { class: "labels" }, map);
    const pointers = sv("g", { class: "pointers" }, labelLayer);
    const texts = [], items = [];
    for (const t of order) {
      texts[t] = sv("text", { x: px(T.x[t]), y: py(T.y[t]), class: "tlabel", "text-anchor": "middle", "dominant-baseline": "central", "data-topic": t }, labelLayer, String(t));
      const bb = texts[t].getBBox();
      items.push({ x: px(T.x[t]), y: py(T.y[t]), r: radius[t], w: bb.width || 7 * String(t).length, h: bb.height || 13 });
    }
    placeLabels(items, W, H).forEach(([lx, ly], i) => {
      const t = order[i], it = items[i];
      texts[t].setAttribute("x", lx);
      texts[t].setAttribute("y", ly);
      const dx = lx - it.x, dy = ly - it.y, dist = Math.hypot(dx, dy);
      if (dist > it.r) {
        // From the circle's edge to the nearest point of the label's box.
        const bx = Math.max(lx - it.w / 2, Math.min(it.x, lx + it.w / 2)), by = Math.max(ly - it.h / 2, Math.min(it.y, ly + it.h / 2));
        sv("line", { x1: it.x + dx / dist * it.r, y1: it.y + dy / dist * it.r, x2: bx, y2: by, class: "pointer" }, pointers);
      }
    });

    const right = el("div", { class: "barbox" }, sec);
    const title = el("h2", { id: "bars-title" }, right, "");
    const ctl = el("div", { class: "slider" }, right);
    const lab = el("label", { for: "lambda" }, ctl, "");
    const slider = el("input", { id: "lambda", type: "range", min: "0", max: "1", step: "0.01", value: String(T.lambda) }, ctl);
    el("p", { class: "note" }, right, "Relevance λ·log φ(w) + (1−λ)·log(φ(w)/p(w)): λ = 1 ranks by the topic's probability, smaller λ favours words special to the topic. Grey: the word's overall frequency; red: its frequency within the topic (" + T.unit + ").");
    const BW = 560, rowH = 15, n = 30, labW = 130;
    const bars = sv("svg", { id: "bars", width: BW, height: n * rowH + 30 }, right);
    let selected = -1;

    function words(t, lambda) {
      const out = [];
      const cand = T.cand[t], phi = T.phi[t];
      for (let i = 0; i < cand.length; i++) {
        const p = T.p[cand[i]];
        out.push({ w: cand[i], phi: phi[i], rel: lambda * Math.log(phi[i]) + (1 - lambda) * Math.log(phi[i] / p) });
      }
      out.sort((a, b) => b.rel - a.rel || b.phi - a.phi);
      return out.slice(0, n);
    }
    function draw() {
      const lambda = +slider.value;
      lab.textContent = "λ = " + lambda.toFixed(2);
      while (bars.firstChild) bars.removeChild(bars.firstChild);
      let rows;
      if (selected < 0) {
        title.textContent = "Top-" + n + " most salient words of the corpus";
        rows = T.salient.map((w) => ({ w: w, topic: null }));
      } else {
        title.textContent = "Top-" + n + " most relevant words of topic " + selected + " (" + fmt(100 * T.weights[selected]) + "% of tokens)";
        rows = words(selected, lambda).map((r) => ({ w: r.w, topic: T.weights[selected] * r.phi }));
      }
      let max = 0;
      for (const r of rows) max = Math.max(max, T.p[r.w]);
      const scale = (BW - labW - 70) / (max || 1);
      rows.forEach((r, i) => {
        const y = 20 + i * rowH;
        const g = sv("g", { class: "row" }, bars);
        sv("text", { x: labW - 6, y: y + rowH - 4, class: "word", "text-anchor": "end" }, g, T.words[r.w]);
        const all = T.p[r.w] * T.scale;
        sv("rect", { x: labW, y: y + 1, width: Math.max(1, T.p[r.w] * scale), height: rowH - 3, class: "overall" }, g);
        let tip = T.words[r.w] + ": overall " + fmt(all);
        if (r.topic !== null) {
          sv("rect", { x: labW, y: y + 1, width: Math.max(1, r.topic * scale), height: rowH - 3, class: "within" }, g);
          tip += ", in topic " + fmt(r.topic * T.scale);
        }
        sv("title", {}, g, tip);
        sv("text", { x: labW + T.p[r.w] * scale + 4, y: y + rowH - 4, class: "val" }, g, fmt(all));
      });
      for (let t = 0; t < k; t++) circles[t].classList.toggle("selected", t === selected);
      // The selected topic is drawn on top; the others by weight, small on top.
      for (const t of order) map.appendChild(groups[t]);
      if (selected >= 0) map.appendChild(groups[selected]);
      map.appendChild(labelLayer);
      for (let t = 0; t < k; t++) texts[t].classList.toggle("selected", t === selected);
      for (const tr of table.querySelectorAll("tr[data-topic]")) tr.classList.toggle("selected", +tr.getAttribute("data-topic") === selected);
    }
    function select(t) { selected = t; draw(); }
    slider.addEventListener("input", draw);

    const tsec = el("section", { class: "topictable" }, main);
    el("h2", {}, tsec, "Topics");
    const table = el("table", {}, tsec);
    const head = el("tr", {}, el("thead", {}, table));
    el("th", {}, head, "topic");
    el("th", {}, head, "weight");
    for (const f of T.figures || []) el("th", { title: f.about || "" }, head, f.name);
    el("th", {}, head, "most probable words");
    const body = el("tbody", {}, table);
    for (let t = 0; t < k; t++) {
      const tr = el("tr", { "data-topic": t }, body);
      el("td", { class: "num" }, tr, String(t));
      el("td", { class: "num" }, tr, fmt(T.weights[t]));
      for (const f of T.figures || []) el("td", { class: "num" }, tr, fmt(f.value[t]));
      el("td", {}, tr, T.cand[t].slice(0, 10).map((w) => T.words[w]).join(" "));
      tr.addEventListener("click", () => select(t));
    }
    // report.html#topic=3&lambda=0.4 (or ?topic=3&lambda=0.4) opens on
    // topic 3 at λ = 0.4.
    const h = new URLSearchParams(location.hash.slice(1) || location.search.slice(1));
    const ht = parseInt(h.get("topic"), 10), hl = parseFloat(h.get("lambda"));
    if (hl >= 0 && hl <= 1) slider.value = String(hl);
    if (ht >= 0 && ht < k) selected = ht;
    draw();
  }

  function color(v, lo, hi, diverging) {
    if (v === null) return "#eee";
    if (diverging) {
      const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
      const s = Math.max(-1, Math.min(1, v / m));
      const a = Math.round(255 * (1 - Math.abs(s)));
      return s >= 0 ? "rgb(255," + a + "," + a + ")" : "rgb(" + a + "," + a + ",255)";
    }
    const s = hi > lo ? (v - lo) / (hi - lo) : 0;
    const a = Math.round(255 - 200 * s);
    return "rgb(" + a + "," + Math.round(255 - 150 * s) + ",255)";
  }

  function panel(parent, p) {
    const box = el("div", { class: "panel " + p.type }, parent);
    el("h2", {}, box, p.title);
    if (p.note) el("p", { class: "note" }, box, p.note);
    if (p.type === "bars") return barPanel(box, p);
    const rows = p.values.length, cols = rows ? p.values[0].length : 0;
    const cw = Math.max(3, Math.min(48, Math.floor(640 / Math.max(cols, 1))));
    const ch = Math.max(6, Math.min(28, Math.floor(420 / Math.max(rows, 1))));
    const lw = 110, th = cw >= 12 ? 40 : 10;
    const svg = sv("svg", { width: lw + cols * cw + 10, height: th + rows * ch + 10, class: "heat" }, box);
    let lo = Infinity, hi = -Infinity;
    for (const r of p.values) for (const v of r) if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    p.values.forEach((r, i) => {
      if (ch >= 9) sv("text", { x: lw - 4, y: th + i * ch + ch / 2 + 4, "text-anchor": "end", class: "lab" }, svg, p.rows ? p.rows[i] : String(i));
      r.forEach((v, j) => {
        const c = sv("rect", { x: lw + j * cw, y: th + i * ch, width: cw, height: ch, fill: color(v, lo, hi, p.diverging), class: "cell" }, svg);
        sv("title", {}, c, (p.rows ? p.rows[i] : i) + ", " + (p.cols ? p.cols[j] : j) + ": " + fmt(v));
        if (cw >= 44 && ch >= 16) {
          const m = p.diverging ? Math.max(Math.abs(lo), Math.abs(hi)) : hi - lo;
          const dark = v !== null && m > 0 && (p.diverging ? Math.abs(v) : v - lo) / m > 0.6;
          sv("text", { x: lw + j * cw + cw / 2, y: th + i * ch + ch / 2 + 4, "text-anchor": "middle", class: "cellval" + (dark ? " dark" : "") }, svg, v === null ? "–" : String(+v.toPrecision(3)));
        }
      });
    });
    if (cw >= 12) p.values.length && p.values[0].forEach((_, j) => {
      sv("text", { x: lw + j * cw + cw / 2, y: th - 4, "text-anchor": "start", class: "lab", transform: "rotate(-45 " + (lw + j * cw + cw / 2) + " " + (th - 4) + ")" }, svg, p.cols ? p.cols[j] : String(j));
    });
    el("p", { class: "note" }, box, "Colour range " + fmt(lo) + " … " + fmt(hi) + (p.diverging ? " (blue negative, red positive)" : "") + ".");
  }

  function barPanel(box, p) {
    const v = p.values[0], n = v.length;
    const bw = Math.max(3, Math.min(36, Math.floor(640 / Math.max(n, 1))));
    const H = 160, top = 10, base = top + H;
    let lo = Math.min(0, ...v.filter((x) => x !== null)), hi = Math.max(0, ...v.filter((x) => x !== null));
    if (hi === lo) hi = lo + 1;
    const y = (x) => top + H * (hi - x) / (hi - lo);
    const svg = sv("svg", { width: 60 + n * bw + 10, height: base + 60, class: "barchart" }, box);
    sv("line", { x1: 56, x2: 60 + n * bw, y1: y(0), y2: y(0), class: "axis" }, svg);
    sv("text", { x: 52, y: top + 8, "text-anchor": "end", class: "lab" }, svg, fmt(hi));
    sv("text", { x: 52, y: base, "text-anchor": "end", class: "lab" }, svg, fmt(lo));
    v.forEach((x, i) => {
      if (x === null) return;
      const r = sv("rect", { x: 60 + i * bw + 1, y: Math.min(y(x), y(0)), width: bw - 2, height: Math.max(1, Math.abs(y(x) - y(0))), class: "bar" + (x < 0 ? " neg" : "") }, svg);
      sv("title", {}, r, (p.cols ? p.cols[i] : i) + ": " + fmt(x));
      if (bw >= 14) sv("text", { x: 60 + i * bw + bw / 2, y: base + 12, "text-anchor": "end", class: "lab", transform: "rotate(-45 " + (60 + i * bw + bw / 2) + " " + (base + 12) + ")" }, svg, (p.cols ? p.cols[i] : String(i)).replace(/^(component|state|source|topic) /, ""));
    });
  }

  function provenance() {
    const sec = el("section", { class: "prov" }, main);
    el("h2", {}, sec, "How this model was made");
    const table = el("table", {}, sec);
    // Rows named "group: field" sit under one heading row of their group.
    let group = null;
    for (const [k, v] of D.provenance) {
      const i = k.indexOf(": ");
      const g = i > 0 ? k.slice(0, i) : null;
      if (g !== null && g !== group) {
        const tr = el("tr", { class: "group" }, table);
        el("th", { colspan: "2" }, tr, g);
      }
      group = g;
      const tr = el("tr", g === null ? {} : { class: "sub" }, table);
      el("th", {}, tr, g === null ? k : k.slice(i + 2));
      el("td", {}, tr, v);
    }
  }
})();
