// salient serve's page: plain JavaScript over the JSON API of docs/serve.md (nothing else).
"use strict";

const $ = (id) => document.getElementById(id);
const state = { models: [], methods: [], chosen: new Map(), example: null, results: [], prediction: null, pending: [] };

async function api(path, body, signal) {
  const init = body === undefined ? { signal } : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal };
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  if (!res.ok) throw new Error(data.error || `${res.status}`);
  return data;
}

function showError(message) {
  $("error").hidden = !message;
  $("error").textContent = message || "";
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

// Diverging colour for v in [-1, 1]: blue (against), white, red (for the explained class).
function colour(v) {
  const t = Math.max(-1, Math.min(1, v || 0));
  const [r, g, b] = t >= 0 ? [178, 24, 43] : [33, 102, 172];
  const a = Math.abs(t);
  const mix = (c) => Math.round(255 + (c - 255) * a);
  return `rgb(${mix(r)}, ${mix(g)}, ${mix(b)})`;
}

function currentModel() { return state.models.find((m) => m.name === $("model").value) || state.models[0]; }

function input() {
  const body = { model: $("model").value, text: $("text").value };
  if ($("text-pair").value.trim()) body.text_pair = $("text-pair").value;
  return body;
}

// What /api/predict and /api/explain read: the input, whole (as windows) when asked.
function explainInput() {
  const body = input();
  if ($("windows").checked) body.windows = true;
  return body;
}

// ---- set-up: models, methods, datasets ----

async function init() {
  try {
    state.models = (await api("/api/models")).models;
    for (const m of state.models) $("model").append(el("option", { value: m.name, text: m.name }));
    $("model").addEventListener("change", modelChanged);
    modelChanged();
    state.methods = (await api("/api/methods")).methods;
    renderMethods();
    const datasets = (await api("/api/datasets")).datasets;
    if (datasets.length) {
      $("examples-bar").hidden = false;
      for (const d of datasets) $("dataset").append(el("option", { value: d.name, text: `${d.name} (${d.examples})` }));
      $("dataset").addEventListener("change", loadExamples);
      $("example").addEventListener("change", pickExample);
      await loadExamples();
    }
  } catch (e) { showError(e.message); }
  $("run").addEventListener("click", run);
  $("attention-button").addEventListener("click", showAttention);
  $("attattr-button").addEventListener("click", showAttattr);
  $("export-json").addEventListener("click", exportJson);
  $("export-svg").addEventListener("click", exportSvg);
  $("text").addEventListener("input", () => { state.example = null; renderRationale(); });
}

function modelChanged() {
  const m = currentModel();
  $("model-info").textContent = `${m.model_type}, ${m.layers} layers × ${m.heads} heads, ${m.max_tokens} tokens`;
  const target = $("target");
  target.replaceChildren(el("option", { value: "pred", text: "the prediction" }));
  m.labels.forEach((label, i) => target.append(el("option", { value: String(i), text: `class ${i}: ${label}` })));
  const layer = $("attattr-layer");
  layer.replaceChildren();
  for (let l = 0; l < m.layers; ++l) layer.append(el("option", { value: String(l), text: String(l) }));
  layer.value = String(m.layers - 1);
}

function renderMethods() {
  const box = $("methods");
  box.replaceChildren();
  const defaults = new Set(["ig", "saliency"]);
  for (const m of state.methods) {
    const id = `method-${m.name}`;
    const check = el("input", { type: "checkbox", id, "data-method": m.name });
    const card = el("div", { class: "method", title: m.summary },
      el("label", { for: id }, check, ` ${m.name} `, el("span", { class: "family", text: m.family })));
    const params = el("div", { class: "params" });
    for (const p of m.params) {
      let field;
      if (p.type === "string" && p.choices && p.choices.length) {
        field = el("select", { "data-param": p.name });
        for (const c of p.choices) field.append(el("option", { value: c, text: c }));
        if (p.default !== null) field.value = p.default;
      } else {
        // A number, or a name the parameter also takes (IG's steps "auto"): a text field then.
        const named = p.type !== "string" && p.choices && p.choices.length;
        field = el("input", { "data-param": p.name, type: p.type === "string" || named ? "text" : "number" });
        if (p.type === "int") field.step = "1";
        if (p.type === "number") field.step = "any";
        if (p.min !== null) field.min = p.min;
        if (p.max !== null) field.max = p.max;
        if (p.default !== null) field.value = p.default;
        else field.placeholder = "auto";
      }
      field.title = p.describe;
      params.append(el("label", {}, el("span", { text: p.name }), field));
    }
    card.append(params);
    check.addEventListener("change", () => card.classList.toggle("chosen", check.checked));
    if (defaults.has(m.name)) { check.checked = true; card.classList.add("chosen"); }
    box.append(card);
  }
}

function chosenMethods() {
  const out = [];
  for (const check of document.querySelectorAll("#methods input[type=checkbox]:checked")) {
    const card = check.closest(".method");
    const spec = state.methods.find((m) => m.name === check.dataset.method);
    const params = {};
    for (const field of card.querySelectorAll("[data-param]")) {
      if (field.value === "") continue;
      const p = spec.params.find((q) => q.name === field.dataset.param);
      params[p.name] = p.choices && p.choices.includes(field.value) ? field.value
        : p.type === "int" ? parseInt(field.value, 10) : p.type === "number" ? parseFloat(field.value) : field.value;
    }
    out.push({ name: spec.name, params });
  }
  return out;
}

async function loadExamples() {
  try {
    const data = await api(`/api/examples?data=${encodeURIComponent($("dataset").value)}&limit=50`);
    state.examples = data.examples;
    const select = $("example");
    select.replaceChildren(el("option", { value: "", text: "— pick an example —" }));
    data.examples.forEach((x, i) => select.append(el("option", { value: String(i),
      text: `${x.index}${x.label_name ? " [" + x.label_name + "]" : ""}: ${x.text.slice(0, 80)}` })));
  } catch (e) { showError(e.message); }
}

function pickExample() {
  const x = state.examples[parseInt($("example").value, 10)];
  if (!x) return;
  $("text").value = x.text;
  $("text-pair").value = x.text_pair || "";
  state.example = x;
  renderRationale();
}

function renderRationale() {
  const box = $("rationale");
  const x = state.example;
  box.hidden = !(x && x.rationale);
  if (box.hidden) return;
  box.replaceChildren(el("h3", { text: "human rationale" }));
  const heat = el("div", { class: "heat" });
  x.words.forEach((w, i) => heat.append(el("span", { class: "tok", text: w, "data-score": x.rationale[i],
    style: `background:${colour(x.rationale[i])}` })));
  box.append(heat);
}

// ---- explain ----

function renderPrediction(p) {
  const box = $("prediction");
  box.replaceChildren();
  if (p.value !== undefined) { box.append(el("p", { text: `value ${p.value.toFixed(4)}` })); return; }
  box.append(el("h3", { text: `prediction: ${p.label}` }));
  p.probs.forEach((q, i) => box.append(el("div", { class: "bar" },
    el("span", { text: p.labels[i], style: "width:8em" }),
    el("span", { class: "fill", style: `width:${Math.round(q * 300)}px` }),
    el("span", { text: q.toFixed(3) }))));
  if (p.windows) {
    box.append(el("p", { class: "muted", id: "read-as", text:
      `read whole: ${p.tokens.length} tokens in ${p.windows} windows of at most ${currentModel().max_tokens}; ` +
      "the probabilities are the mean of the windows' logits" }));
  } else if (p.truncated) {
    box.append(el("p", { class: "notice", id: "read-as", text:
      `cut at the model's ${currentModel().max_tokens} tokens: the rest of the text is not read. ` +
      "Tick “whole text (windows)” to read all of it." }));
  }
}

// The windows a long text was read in (extras.windows: each window's first piece and length), as
// bars over the whole text; a window's pieces are tokens start + 1 … start + length − 2.
function windowBars(windows, total) {
  const box = el("div", { class: "windows", title: "the windows the text was read in (scores averaged where they overlap)" });
  windows.forEach((w, i) => {
    const first = w.start + 1, last = w.start + w.tokens - 2;
    box.append(el("span", { class: "window", "data-first": first, "data-last": last,
      title: `window ${i + 1}: tokens ${first}–${last}`,
      style: `left:${(100 * first / total).toFixed(3)}%;width:${(100 * (last - first + 1) / total).toFixed(3)}%;` +
             `top:${(i % 3) * 6}px;background:${["#37474f", "#78909c", "#b0bec5"][i % 3]}` }));
  });
  return box;
}

function heatRow(tokens, scores, extraClass) {
  const max = Math.max(1e-12, ...scores.map(Math.abs));
  const row = el("div", { class: "heat " + (extraClass || "") });
  // White letters on the darkest cells keep them readable.
  tokens.forEach((t, i) => row.append(el("span", { class: "tok", text: t, "data-score": scores[i],
    title: scores[i].toPrecision(4),
    style: `background:${colour(scores[i] / max)}${Math.abs(scores[i] / max) > 0.6 ? ";color:#fff" : ""}` })));
  return row;
}

function renderExplanation(card, e) {
  const head = card.querySelector("h3 .status");
  if (e.error) { head.textContent = ""; card.append(el("p", { class: "error", text: e.error })); return; }
  head.textContent = `${e.seconds.toFixed(2)} s · explains ${e.output ? e.output + " of " : ""}${e.target_label}`;
  const windows = e.extras && Array.isArray(e.extras.windows) ? e.extras.windows : null;
  if (windows) {
    card.append(el("div", { class: "muted", text: `${windows.length} windows over ${e.tokens.length} tokens` }),
                windowBars(windows, e.tokens.length));
  }
  const tokens = heatRow(e.tokens, e.token_scores, "tokens");
  // Where each window starts, on the tokens themselves.
  if (windows) windows.forEach((w, i) => {
    const t = tokens.children[w.start + 1];
    if (i > 0 && t) { t.classList.add("window-start"); t.title += ` · window ${i + 1} starts`; }
  });
  card.append(el("div", { class: "muted", text: "tokens" }), tokens);
  if (e.words) {
    const words = heatRow(e.words, e.word_scores, "words");
    const r = state.example && state.example.rationale && state.example.text === $("text").value ? state.example.rationale : null;
    if (r) [...words.children].forEach((s, i) => { if (r[i] > 0) s.classList.add("rationale"); });
    card.append(el("div", { class: "muted", text: "words" + (r ? " (underlined: human rationale)" : "") }), words);
  }
  if (e.faithfulness) {
    const f = e.faithfulness;
    card.append(el("div", { class: "faith", text:
      `comprehensiveness ${f.comprehensiveness.toFixed(3)} · sufficiency ${f.sufficiency.toFixed(3)} (top ${f.k} tokens, ` +
      `${f.output}) · AOPC comp. ${fixed3(f.aopc_comprehensiveness)} · suff. ${fixed3(f.aopc_sufficiency)}` +
      (f.aopc_bins === "eraser" ? " (ERASER's bins: 1, 5, 10, 20, 50%)" : "") }));
  }
}

// A number to 3 decimals; null (undefined, e.g. an AOPC with no bin holding a token) as "—".
function fixed3(v) { return v === null || v === undefined ? "—" : v.toFixed(3); }

async function run() {
  showError("");
  for (const p of state.pending) p.abort();
  state.pending = [];
  state.results = [];
  $("results").replaceChildren();
  const methods = chosenMethods();
  if (!methods.length) { showError("choose at least one method"); return; }
  try {
    state.prediction = await api("/api/predict", explainInput());
  } catch (e) { showError(e.message); return; }
  renderPrediction(state.prediction);
  $("legend").hidden = false;
  const target = $("target").value;
  // One request per method, so each shows its progress and can be cancelled on its own.
  await Promise.all(methods.map(async (m) => {
    const status = el("span", { class: "status", text: "running…" });
    const cancel = el("button", { type: "button", text: "cancel" });
    const card = el("div", { class: "card", "data-method": m.name }, el("h3", {}, el("span", { text: m.name }), status, cancel));
    $("results").append(card);
    const controller = new AbortController();
    state.pending.push(controller);
    cancel.addEventListener("click", () => controller.abort());
    const started = performance.now();
    const timer = setInterval(() => { status.textContent = `running… ${((performance.now() - started) / 1000).toFixed(1)} s`; }, 200);
    try {
      const body = Object.assign(explainInput(), { methods: [m], faithfulness: $("faithfulness").checked,
        target: target === "pred" ? "pred" : parseInt(target, 10) });
      const data = await api("/api/explain", body, controller.signal);
      const e = data.explanations[0];
      state.results.push(e);
      renderExplanation(card, e);
      card.dataset.done = "true";
    } catch (err) {
      status.textContent = "";
      card.append(el("p", { class: "error", text: err.name === "AbortError" ? "cancelled" : err.message }));
      card.dataset.done = "error";
    } finally {
      clearInterval(timer);
      cancel.remove();
    }
  }));
  $("export-json").disabled = $("export-svg").disabled = state.results.length === 0;
}

// ---- attention ----

async function showAttention() {
  showError("");
  const box = $("attention");
  box.replaceChildren(el("p", { class: "muted", text: "loading attention…" }));
  let data;
  try { data = await api("/api/attention", input()); } catch (e) { showError(e.message); box.replaceChildren(); return; }
  const L = data.tokens.length, layers = data.attentions.length, heads = data.attentions[0].length;
  const grid = el("div", { class: "grid", style: `grid-template-columns: 4em repeat(${heads}, auto)` });
  grid.append(el("span"));
  for (let h = 0; h < heads; ++h) grid.append(el("span", { class: "muted", text: `head ${h}` }));
  const detail = el("div", { class: "detail" });
  for (let l = 0; l < layers; ++l) {
    grid.append(el("span", { class: "muted", text: `layer ${l}` }));
    for (let h = 0; h < heads; ++h) {
      const canvas = el("canvas", { width: L, height: L, style: "width:72px;height:72px", title: `layer ${l}, head ${h}`,
        "data-layer": l, "data-head": h });
      const ctx = canvas.getContext("2d");
      const img = ctx.createImageData(L, L);
      const a = data.attentions[l][h];
      for (let i = 0; i < L; ++i) for (let j = 0; j < L; ++j) {
        const v = Math.round(255 * (1 - a[i][j])), k = 4 * (i * L + j);
        img.data[k] = v; img.data[k + 1] = v; img.data[k + 2] = 255; img.data[k + 3] = 255;
      }
      ctx.putImageData(img, 0, 0);
      canvas.addEventListener("click", () => detail.replaceChildren(matrix(data.tokens, a, `layer ${l}, head ${h}`)));
      grid.append(canvas);
    }
  }
  box.replaceChildren(el("h3", { text: "attention (rows: queries; click a head)" }), grid, detail);
}

// ---- Self-Attention Attribution: one layer's heads, head importance, the attribution tree ----

async function showAttattr() {
  showError("");
  const box = $("attattr");
  box.replaceChildren(el("p", { class: "muted", text: "computing attribution…" }));
  const target = $("target").value;
  let data;
  try {
    data = await api("/api/attattr", Object.assign(input(), {
      layer: parseInt($("attattr-layer").value, 10), target: target === "pred" ? "pred" : parseInt(target, 10) }));
  } catch (e) { showError(e.message); box.replaceChildren(); return; }
  const c = data.completeness;
  const heads = data.heads.length;
  const top = Math.max(1e-12, ...data.heads.flat(2).map(Math.abs));
  const grid = el("div", { class: "grid", style: `grid-template-columns: repeat(${heads}, auto)` });
  const detail = el("div", { class: "detail" });
  data.heads.forEach((a, h) => {
    const cell = el("div", {}, el("div", { class: "muted", text: `head ${h}` }));
    const scaled = a.map((row) => row.map((v) => v / top));
    const t = matrix(data.tokens, scaled, `AttAttr layer ${data.layer}, head ${h} (÷ the layer's largest |value|)`);
    const button = el("button", { type: "button", text: "show", "data-head": h });
    button.addEventListener("click", () => detail.replaceChildren(t));
    cell.append(button);
    grid.append(cell);
  });
  const tree = el("div", { class: "tree" });
  tree.innerHTML = data.tree.svg;  // drawn by the server (attattr/render.cpp), not from user HTML
  box.replaceChildren(
    el("h3", { text: `AttAttr: layer ${data.layer}, explaining ${data.target_label} (m = ${data.m}, ${data.rule})` }),
    el("p", { class: "muted", text: `completeness: sum ${c.sum.toFixed(4)} vs F(A) − F(0) = ${(c.f_full - c.f_zero).toFixed(4)}` }),
    grid, detail, el("h3", { text: "attribution tree" }), tree);
  detail.replaceChildren(grid.querySelector("button") ? matrix(data.tokens, data.heads[0].map((r) => r.map((v) => v / top)),
    `AttAttr layer ${data.layer}, head 0`) : "");
}

function matrix(tokens, a, title) {
  const table = el("table", { class: "matrix" });
  const head = el("tr", {}, el("th"));
  for (const t of tokens) head.append(el("th", { text: t }));
  table.append(el("caption", { text: title }), el("thead", {}, head));
  const body = el("tbody");
  tokens.forEach((t, i) => {
    const row = el("tr", {}, el("th", { text: t }));
    a[i].forEach((v) => row.append(el("td", { title: v.toFixed(3), style: `background:${colour(v)}` })));
    body.append(row);
  });
  table.append(body);
  return table;
}

// ---- export ----

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function exportJson() {
  download("salient-view.json", "application/json", JSON.stringify({
    model: $("model").value, input: explainInput(), prediction: state.prediction, explanations: state.results }, null, 2));
}

function exportSvg() {
  // One row of word (or token) boxes per method, coloured as on the page.
  const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  let y = 20, parts = [];
  const width = 1000;
  for (const e of state.results) {
    if (e.error) continue;
    const tokens = e.words || e.tokens, scores = e.word_scores || e.token_scores;
    const max = Math.max(1e-12, ...scores.map(Math.abs));
    parts.push(`<text x="4" y="${y}" font-weight="bold">${esc(e.method)}</text>`);
    y += 8;
    let x = 4;
    tokens.forEach((t, i) => {
      const w = 8 * t.length + 8;
      if (x + w > width) { x = 4; y += 24; }
      parts.push(`<rect x="${x}" y="${y}" width="${w}" height="20" fill="${colour(scores[i] / max)}" stroke="#ddd"/>` +
                 `<text x="${x + 4}" y="${y + 15}" font-family="monospace">${esc(t)}</text>`);
      x += w + 2;
    });
    y += 40;
  }
  download("salient-view.svg", "image/svg+xml",
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" font-size="13">${parts.join("")}</svg>`);
}

init();
