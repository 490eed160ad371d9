// The search page's rendering (serve/page.py): a response, its hits and the snapshot panel as DOM elements.
// Loaded before app.js, which wires the page. Every text that comes from the index or a client (passages,
// headings, paths, error lines) is untrusted: elements are built with createElement/textContent only, never by
// parsing HTML, and only http(s) URLs become links.
"use strict";

// The match tier as a person reads it (the response's match_tier: high | mid | low)
const TIER_WORDS = { high: "Strong match", mid: "Partial match", low: "No strong match" };
const ABSTAIN_WORDS = {
  evidence_floor: "no passage has enough trust and relevance to answer from (the policy's evidence floor)",
  no_candidates: "nothing in the index matches this query",
  version_unavailable: "the snapshot holds nothing for the requested version",
  low_confidence: "the answer confidence is below the policy's minimum; the hits are shown for reference only",
};
// The breakdown: a hit's factors as its response lists them, in the order of the factor types that write them
// (schemas/hit_factors.py Factors, the registry's order), each named by its key ("page_kind" reads "page kind"):
// the page keeps no list of factor names of its own.
const factorLabel = (name) => name.replace(/_/g, " ");
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
    case "page_kind":
      return [e.reason || String(f.status)];
    case "deprecation": {
      if (f.status !== "deprecated" && !Array.isArray(e.markers)) return ["not deprecated"];
      const lines = (e.markers || []).map((m) => `${m.marker} (${m.scope}): ${m.reason}`);
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
    "aria-label": `${factorLabel(name)} multiplier ${times(m)}`,
  });
  const lines = evidenceLines(name, f);
  return el(
    "div",
    { class: `factor status-${String(f.status).replace(/[^a-z_]/gi, "")}`, "data-factor": name },
    el("span", { class: "fname" }, factorLabel(name)),
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
  const factors = Object.entries(h.factors || {})
    .filter(([, f]) => f)
    .map(([n, f]) => factorRow(n, f));
  // a copy from another source yields to this hit (issue 43): it is listed here, marked as the copy it is
  const also = (h.also_in || []).map((a) => `${a.source}/${a.path}` + (a.copy_of ? " (a copy of this)" : ""));
  // one hit per page (issue 43): the page's other passages that matched, each a link to its section
  const samePage = (h.same_page || []).map((s) => {
    const label = (s.heading_path || []).slice(1).join(" › ") || `lines ${s.start_line}-${s.end_line}`;
    const link = safeHref(s.page_url);
    return link ? el("a", { href: link, rel: "noopener noreferrer", target: "_blank" }, label) : el("span", {}, label);
  });
  const unrouted = ((h.ranking_terms || {}).route || {}).status === "unrouted";
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
      unrouted ? el("span", { class: "badge warn" }, "not published on the site") : null,
    ),
    el("p", { class: "where" }, el("code", {}, where), ` · commit ${(p.commit || "?").slice(0, 12)}`),
    p.part_of ? el("p", { class: "part-of" }, `shown on the page ${p.part_of}, which renders this partial`) : null,
    p.copy_of ? el("p", { class: "copy-of" }, `a copy of ${p.copy_of}`) : null,
    (p.heading_path || []).length ? el("p", { class: "path" }, p.heading_path.join(" › ")) : null,
    samePage.length ? el("p", { class: "same-page" }, "more on this page: ", ...samePage.flatMap((a, i) => (i ? [" · ", a] : [a]))) : null,
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
