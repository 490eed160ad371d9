// The search page of `trustindex serve` (serve/page.py): plain JavaScript, no framework, no build step.
// Every text that comes from the index or a client (passages, headings, paths, error lines) is untrusted: elements
// are built with createElement/textContent only, never innerHTML, and only http(s) URLs become links.
"use strict";

const TOKEN_KEY = "trustindex.token"; // sessionStorage: this tab only, gone when it closes; never in a URL
// The match tier as a person reads it (the response's match_tier: high | mid | low)
const TIER_WORDS = { high: "Strong match", mid: "Partial match", low: "No strong match" };
const ABSTAIN_WORDS = {
  evidence_floor: "no passage has enough trust and relevance to answer from (the policy's evidence floor)",
  no_candidates: "nothing in the index matches this query",
  version_unavailable: "the snapshot holds nothing for the requested version",
  low_confidence: "the answer confidence is below the policy's minimum; the hits are shown for reference only",
};
// The breakdown, in the order of `trustindex query --explain` (query/render.py FACTORS)
const FACTORS = ["attribution", "verification", "freshness", "deprecation", "version_match", "content_risk"];
const FACTOR_NAMES = {
  attribution: "attribution",
  verification: "verification",
  freshness: "freshness",
  deprecation: "deprecation",
  version_match: "version match",
  content_risk: "content risk",
};
const STOP = new Set(["the", "and", "for", "how", "what", "does", "with", "can", "are", "you", "your", "from", "into"]);

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return node;
}

function safeHref(url) {
  // crawled data names these links: a javascript: or data: URL must never become clickable
  if (typeof url !== "string") return null;
  try {
    const u = new URL(url, window.location.href);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch (_e) {
    return null;
  }
}

const day = (iso) => (typeof iso === "string" && iso ? iso.slice(0, 10) : "?");
const pct = (x) => `${Math.round((Number(x) || 0) * 100)}%`;
const times = (x) => `×${(Number(x) || 0).toFixed(2)}`;

// ---------------------------------------------------------------- the token and the API

function token() {
  return window.sessionStorage.getItem(TOKEN_KEY) || "";
}

class NeedToken extends Error {}

async function api(path, body) {
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const init = { headers, credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  if (r.status === 401) throw new NeedToken("this server wants a bearer token");
  let data = null;
  try {
    data = await r.json();
  } catch (_e) {
    throw new Error(`${path} answered ${r.status} without JSON`);
  }
  if (!r.ok) throw new Error(data && typeof data.error === "string" ? data.error : `${path} answered ${r.status}`);
  return data;
}

const pending = new Map(); // what to retry once a token is typed: name -> function

function askForToken(name, retry) {
  pending.set(name, retry);
  $("token-form").hidden = false;
  $("token").focus();
}

// ---------------------------------------------------------------- the URL is the state

function readURL() {
  const p = new URLSearchParams(window.location.search);
  const targets = [];
  for (const t of p.getAll("target")) {
    const i = t.indexOf("=");
    if (i > 0 && i < t.length - 1) targets.push([t.slice(0, i), t.slice(i + 1)]);
  }
  const k = Number.parseInt(p.get("k") || "", 10);
  return { q: p.get("q") || "", k: Number.isFinite(k) && k > 0 ? k : 5, strict: p.get("strict") === "1", targets };
}

function writeURL(state, push) {
  const p = new URLSearchParams();
  p.set("q", state.q);
  p.set("k", String(state.k));
  for (const [c, v] of state.targets) p.append("target", `${c}=${v}`);
  if (state.strict) p.set("strict", "1");
  const url = `${window.location.pathname}?${p.toString()}`;
  if (push) window.history.pushState(null, "", url);
  else window.history.replaceState(null, "", url);
}

let chosen = []; // [component, version] pairs, in the order picked

function formState() {
  const k = Number.parseInt($("k").value, 10);
  return { q: $("q").value.trim(), k: Number.isFinite(k) && k > 0 ? k : 5, strict: $("strict").checked, targets: chosen };
}

function fillForm(state) {
  $("q").value = state.q;
  $("k").value = String(state.k);
  $("strict").checked = state.strict;
  chosen = state.targets.slice();
  drawTargets();
}

function drawTargets() {
  const list = $("targets");
  list.replaceChildren();
  chosen.forEach(([c, v], n) => {
    const remove = el("button", { type: "button", class: "remove", "aria-label": `Remove target ${c}=${v}` }, "×");
    remove.addEventListener("click", () => {
      chosen.splice(n, 1);
      drawTargets();
    });
    list.append(el("li", { class: "chip", "data-target": `${c}=${v}` }, el("code", {}, `${c}=${v}`), remove));
  });
}

// ---------------------------------------------------------------- the target picker (/v1/versions)

let components = [];

function fillPicker(versions) {
  components = Array.isArray(versions.components) ? versions.components : [];
  const select = $("component");
  select.replaceChildren(el("option", { value: "" }, "(choose a component)"));
  for (const c of components) {
    select.append(el("option", { value: c.component }, `${c.component} (${c.documents} docs)`));
  }
  fillVersions();
}

// A picker offers what a target is: a version (0.23, 0.31.0, current), not the ranges pages state (>= 0.22)
const PLAIN_VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_-]*$/;

function versionOrder(a, b) {
  const pa = a.split(/[.+_-]/);
  const pb = b.split(/[.+_-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "";
    const y = pb[i] ?? "";
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    const c = nx && ny ? Number(x) - Number(y) : nx !== ny ? (nx ? 1 : -1) : x.localeCompare(y);
    if (c) return c;
  }
  return 0;
}

function fillVersions() {
  const c = components.find((x) => x.component === $("component").value);
  const plain = ((c && c.constraints) || []).filter((v) => PLAIN_VERSION.test(v)).sort(versionOrder);
  const list = $("versions");
  list.replaceChildren(...plain.map((v) => el("option", { value: v })));
  $("version").value = plain.length ? plain[plain.length - 1] : "";
}

function addTarget() {
  const c = $("component").value;
  const v = $("version").value.trim();
  if (!c || !v) {
    say("Choose a component and a version first.", "error");
    return;
  }
  chosen = chosen.filter(([x]) => x !== c); // one version per component, as the API takes them
  chosen.push([c, v]);
  drawTargets();
}

// ---------------------------------------------------------------- the snapshot panel (/v1/snapshot, /v1/sources)

const when = (iso) => (typeof iso === "string" && iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace(/\+00:00$|Z$/, " UTC") : "?");

function drawSnapshot(snap, sources) {
  const facts = $("snapshot-facts");
  facts.replaceChildren();
  const fact = (name, value) => facts.append(el("dt", {}, name), el("dd", { "data-fact": name }, value));
  fact("snapshot", el("code", {}, snap.snapshot_id || "?"));
  fact("built at", when(snap.created_at || sources.built_at));
  fact("policy", el("code", { title: snap.policy_id || "" }, `${(snap.policy_id || "?").slice(0, 19)}…`));
  if (sources.embedding_model) fact("embedding model", sources.embedding_model);
  // exports carry a signature once they are signed (issue 27): say which, and nothing before the field exists
  if (typeof snap.signed === "boolean") fact("signed", snap.signed ? "signed export" : "not signed");
  if (snap.source) fact("served from", snap.source);
  if (snap.warning) fact("warning", el("span", { class: "warn" }, snap.warning));
  const list = $("sources");
  list.replaceChildren();
  for (const s of sources.sources || []) {
    const publishers = (s.publishers || []).map((p) => `${p.name || p.publisher} (${p.tier})`).join(", ");
    list.append(
      el(
        "li",
        { "data-source": s.source },
        el("strong", {}, s.source),
        s.status && s.status !== "ok" ? el("span", { class: "warn" }, ` ${s.status}${s.error ? `: ${s.error}` : ""}`) : null,
        el(
          "div",
          {},
          "commit ",
          el("code", { class: "commit", title: s.commit || "" }, (s.commit || "?").slice(0, 12)),
          ` · ${day(s.commit_date)}`,
        ),
        el("div", { class: "muted" }, `${s.documents ?? "?"} docs, ${s.chunks ?? "?"} passages`),
        publishers ? el("div", { class: "muted" }, publishers) : null,
      ),
    );
  }
}

// ---------------------------------------------------------------- one result card

function marked(text, query) {
  // the passage as text nodes, with the query's words marked (prefix match: "install" marks "installing")
  const words = (query.toLowerCase().match(/[\p{L}\p{N}_-]+/gu) || []).filter((w) => w.length > 2 && !STOP.has(w));
  const frag = document.createDocumentFragment();
  if (!words.length) {
    frag.append(document.createTextNode(text));
    return frag;
  }
  const escaped = [...new Set(words)].map((w) => w.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&"));
  const re = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${escaped.join("|")})[\\p{L}\\p{N}_]*`, "giu");
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) frag.append(document.createTextNode(text.slice(last, m.index)));
    frag.append(el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(document.createTextNode(text.slice(last)));
  return frag;
}

function chainLink(c) {
  const lends = c.lends_tier || c.tier;
  const counts = lends !== c.tier ? ` → counts as ${lends}` : "";
  return `${c.evidence_class || "claimed"} ${c.method} by ${c.verifier} (${c.tier}${counts}${c.stale ? ", stale" : ""})`;
}

function evidenceLines(name, f) {
  // what each factor's evidence says, as `trustindex query --explain` words it (query/render.py explain_hit)
  const e = f.evidence || {};
  switch (name) {
    case "attribution":
      return [`${e.publisher_name || e.publisher || "unknown publisher"} (${e.tier || "?"}, via ${e.origin || "?"})`];
    case "verification": {
      const chain = Array.isArray(e.chain) ? e.chain : [];
      const lines = chain.length ? chain.slice(0, 4).map(chainLink) : ["no verification evidence"];
      return e.note ? [...lines, e.note] : lines;
    }
    case "freshness":
      return [
        `last substantive change ${day(e.last_substantive_change)}` +
          (typeof e.age_days === "number" ? ` (${Math.round(e.age_days)} days)` : "") +
          `, last modified ${day(e.last_modified)}`,
      ];
    case "deprecation": {
      if (f.status !== "deprecated" && !Array.isArray(e.markers)) return ["not deprecated"];
      const lines = (e.markers || []).map((m) => `${m.marker} (${m.scope}): ${m.reason}`);
      if (e.superseded_by) lines.push(`superseded by ${e.superseded_by}`);
      return lines.length ? lines : [f.status];
    }
    case "version_match": {
      if (f.status === "no_target") {
        const stated = Object.entries(e.constraints || {}).map(([c, v]) => `${c} ${[].concat(v).join(" | ")}`);
        return [`no target given${stated.length ? `; states ${stated.join("; ")}` : ""}`];
      }
      return (e.targets || []).map(
        (t) => `[${t.status}] ${t.component} ${t.target} vs ${t.constraint} (${t.origin})${t.detail ? ` ${t.detail}` : ""}`,
      );
    }
    case "content_risk":
      if (f.status === "no_findings") return ["no findings"];
      return (e.findings || []).map((x) => `[${x.kind}] ${x.reason} (line ${x.start_line})`);
    default:
      return [];
  }
}

function factorRow(name, f) {
  const m = Number(f.multiplier) || 0;
  // one bar per factor: the multiplier on a 0..1 scale (a multiplier above 1 fills the bar)
  const bar = el("meter", {
    min: "0",
    max: "1",
    low: "0.5",
    high: "0.95",
    optimum: "1",
    value: String(Math.min(m, 1)),
    "aria-label": `${FACTOR_NAMES[name]} multiplier ${times(m)}`,
  });
  const lines = evidenceLines(name, f);
  return el(
    "div",
    { class: `factor status-${String(f.status).replace(/[^a-z_]/gi, "")}`, "data-factor": name },
    el("span", { class: "fname" }, FACTOR_NAMES[name]),
    bar,
    el("span", { class: "fmult" }, times(m)),
    el("span", { class: "fstatus" }, String(f.status)),
    el("ul", { class: "evidence" }, ...lines.map((l) => el("li", {}, l))),
  );
}

function card(h, query) {
  const p = h.provenance || {};
  const href = safeHref(p.page_url) || safeHref(p.url);
  const where = `${p.source}/${p.path}:${p.start_line}-${p.end_line}`;
  const title = (p.heading_path || []).length ? p.heading_path[p.heading_path.length - 1] : p.symbol_path || p.path;
  const heading = href
    ? el("a", { href, rel: "noopener noreferrer", target: "_blank", class: "page" }, title || where)
    : el("span", { class: "page" }, title || where);
  const fresh = (h.factors && h.factors.freshness && h.factors.freshness.evidence) || {};
  const factors = FACTORS.filter((n) => h.factors && h.factors[n]).map((n) => factorRow(n, h.factors[n]));
  const also = (h.also_in || []).map((a) => `${a.source}/${a.path}`);
  const ch = h.channels || {};
  return el(
    "article",
    { class: "hit", tabindex: "0", "data-rank": h.rank_position, "data-chunk": h.chunk_id },
    el(
      "header",
      {},
      el("span", { class: "rank" }, `#${h.rank_position}`),
      el("span", { class: "pct", "aria-label": `displayed confidence ${pct(h.display_confidence)}` }, pct(h.display_confidence)),
      el("h3", {}, heading),
      h.low_confidence ? el("span", { class: "badge warn" }, "for reference only") : null,
    ),
    el("p", { class: "where" }, el("code", {}, where), ` · commit ${(p.commit || "?").slice(0, 12)}`),
    (p.heading_path || []).length ? el("p", { class: "path" }, p.heading_path.join(" › ")) : null,
    el(
      "p",
      { class: "dates" },
      `last substantive change ${day(fresh.last_substantive_change)} · last modified ${day(fresh.last_modified)}`,
    ),
    el("blockquote", { class: "passage" }, marked(String(h.text || ""), query)),
    el(
      "p",
      { class: "scores" },
      `trust ${Number(h.trust_score).toFixed(2)} × relevance ${Number(h.relevance_score).toFixed(2)} = ` +
        `confidence ${Number(h.confidence).toFixed(3)} · dense rank ${ch.dense?.rank ?? "–"}, ` +
        `lexical rank ${ch.lexical?.rank ?? "–"}`,
    ),
    el("details", { class: "breakdown", open: true }, el("summary", {}, "Why it ranks here"), ...factors),
    also.length ? el("p", { class: "also" }, `also in: ${also.slice(0, 5).join(", ")}`) : null,
  );
}

// ---------------------------------------------------------------- the response

function targetLine(t, unavailable) {
  const how = t.resolution ? ` (${t.resolution})` : "";
  const comp = t.component_requested ? `${t.component_requested} → ${t.component}` : t.component;
  const seen = unavailable && (t.constraints_seen || []).length ? `; this snapshot has ${t.constraints_seen.join(", ")}` : "";
  return `${comp}=${t.requested} → ${t.resolved ?? "unresolved"}${how}${seen}`;
}

function drawResponse(r) {
  const out = $("results");
  out.replaceChildren();
  const tier = el(
    "div",
    { class: `banner tier-${String(r.match_tier).replace(/[^a-z]/g, "")}`, id: "tier", "data-tier": r.match_tier },
    el("strong", {}, TIER_WORDS[r.match_tier] || String(r.match_tier)),
    el(
      "span",
      {},
      r.answer_confidence === null || r.answer_confidence === undefined
        ? ` · best cosine ${Number(r.best_cosine).toFixed(3)} (uncalibrated)`
        : ` · answer confidence ${Number(r.answer_confidence).toFixed(2)} (${r.calibration_status} calibration)`,
    ),
  );
  out.append(tier);
  if (r.abstained) {
    const reason = String(r.abstention_reason);
    out.append(
      el(
        "div",
        { class: "banner abstained", id: "abstained", role: "alert", "data-reason": reason },
        el("strong", {}, "Abstained: "),
        el("code", {}, reason),
        ` — ${ABSTAIN_WORDS[reason] || "no passage is good enough to answer from"}`,
      ),
    );
  }
  if ((r.targets || []).length) {
    out.append(
      el(
        "div",
        { class: "targets-resolved", id: "resolved" },
        el("strong", {}, r.strict ? "Targets (strict): " : "Targets: "),
        el("ul", {}, ...r.targets.map((t) => el("li", {}, targetLine(t, r.abstention_reason === "version_unavailable")))),
      ),
    );
  }
  if (!(r.hits || []).length) {
    out.append(el("p", { class: "empty", id: "no-hits" }, r.abstained ? "No passage is shown." : "No hits."));
  }
  out.append(el("div", { class: "hits" }, ...(r.hits || []).map((h) => card(h, r.query || ""))));
  const src = (r.sources || []).map((s) => `${s.source} @ ${(s.commit || "?").slice(0, 12)}`).join(", ");
  out.append(el("p", { class: "muted foot" }, `snapshot ${r.snapshot_id} built ${day(r.built_at)} · ${src}`));
}

function say(text, kind) {
  const s = $("status");
  s.replaceChildren(text ? el("p", { class: kind || "" }, text) : "");
  s.dataset.kind = kind || "";
}

// ---------------------------------------------------------------- wiring

let generation = 0; // a slow answer to an older query never overwrites a newer one

async function runSearch(state) {
  if (!state.q) {
    $("results").replaceChildren();
    say("");
    return;
  }
  const mine = ++generation;
  say("Searching…", "busy");
  document.body.dataset.state = "busy";
  const body = { query: state.q, k: state.k, strict: state.strict };
  if (state.targets.length) body.targets = Object.fromEntries(state.targets);
  try {
    const r = await api("/v1/search", body);
    if (mine !== generation) return;
    drawResponse(r);
    say(`${r.hits.length} hit${r.hits.length === 1 ? "" : "s"} for “${r.query}”`, "done");
  } catch (e) {
    if (mine !== generation) return;
    if (e instanceof NeedToken) askForToken("search", () => runSearch(state));
    $("results").replaceChildren();
    say(e.message, "error");
  } finally {
    if (mine === generation) {
      document.body.dataset.state = "idle";
      document.body.dataset.answered = String(mine); // how many searches this page has shown: a hook for tests
    }
  }
}

async function loadPanels() {
  try {
    const [snap, sources, versions] = await Promise.all([api("/v1/snapshot"), api("/v1/sources"), api("/v1/versions")]);
    drawSnapshot(snap, sources);
    fillPicker(versions);
    $("forget-token").hidden = !token();
    document.body.dataset.panels = "ready";
  } catch (e) {
    if (e instanceof NeedToken) askForToken("panels", loadPanels);
    else say(e.message, "error");
  }
}

function moveFocus(step) {
  const cards = [...document.querySelectorAll("article.hit")];
  if (!cards.length) return;
  const at = cards.indexOf(document.activeElement);
  const next = at < 0 ? (step > 0 ? 0 : cards.length - 1) : Math.min(cards.length - 1, Math.max(0, at + step));
  cards[next].focus();
}

function onKey(e) {
  const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement;
  if (e.key === "/" && !typing) {
    e.preventDefault();
    $("q").focus();
    $("q").select();
  } else if (!typing && (e.key === "j" || e.key === "ArrowDown")) {
    e.preventDefault();
    moveFocus(1);
  } else if (!typing && (e.key === "k" || e.key === "ArrowUp")) {
    e.preventDefault();
    moveFocus(-1);
  } else if (e.key === "Enter" && e.target instanceof HTMLElement && e.target.matches("article.hit")) {
    const a = e.target.querySelector("a.page");
    if (a) a.click();
  }
}

function start() {
  $("search").addEventListener("submit", (e) => {
    e.preventDefault();
    const state = formState();
    writeURL(state, true);
    runSearch(state);
  });
  $("component").addEventListener("change", fillVersions);
  $("add-target").addEventListener("click", addTarget);
  $("version").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      addTarget();
    }
  });
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const t = $("token").value.trim();
    $("token").value = "";
    if (!t) return;
    window.sessionStorage.setItem(TOKEN_KEY, t);
    $("token-form").hidden = true;
    say("");
    const retries = [...pending.values()];
    pending.clear();
    for (const retry of retries) retry();
  });
  $("forget-token").addEventListener("click", () => {
    window.sessionStorage.removeItem(TOKEN_KEY);
    $("forget-token").hidden = true;
    say("The token is forgotten in this tab.", "done");
  });
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", () => {
    const state = readURL();
    fillForm(state);
    runSearch(state);
  });
  const state = readURL();
  fillForm(state);
  loadPanels();
  if (state.q) runSearch(state);
}

document.addEventListener("DOMContentLoaded", start);
