//! The shareable report (design.md §8): one self-contained HTML file — inline
//! CSS, SVG and a little script, nothing fetched — that a manager opens from
//! an email. A recorded-time slider shows the beliefs held at each event
//! (the rows `asof believed --at` prints, embedded as its JSON per event),
//! each topic's plane (the SVG export) with the reading under the pointer,
//! the evidence with its lags, and for a fork the divergence and time to
//! the truth. `#step=N` in the address opens it at event N.

use super::svg::{self, escape};
use super::{Divergence, ExportError, Provenance};
use asof_core::model::{ASSUMED_LEGEND, EventBody};
use asof_core::time::{self, Micros};
use asof_store::query::{self, Filter, json, quality};
use asof_store::store::Store;
use std::fmt::Write;

/// Events past which the report is refused: it embeds the beliefs held at
/// each one, and a browser should open it at once.
pub const MAX_STEPS: usize = 5_000;

/// The report of `store`, opening with `prov` (design.md §8); with `fork`, the
/// JSON `asof diff` prints for a fork of it. A what-if store's own report
/// carries its divergence from the record (`prov.divergence`).
pub fn report(
    store: &Store,
    fork: Option<&serde_json::Value>,
    prov: &Provenance,
) -> Result<String, ExportError> {
    let log = store.log()?;
    let mut events: Vec<&asof_core::model::Event> = log.events.iter().collect();
    events.sort_by_key(|e| (e.recorded_at(), e.seq));
    if events.len() > MAX_STEPS {
        return Err(ExportError::Html(format!(
            "the HTML report embeds the beliefs held at each event, and this store has {} events (the most is {MAX_STEPS}); `--format md` writes the whole report",
            events.len()
        )));
    }
    let ledger = quality::ledger(store)?;
    let end = events.last().map_or(0, |e| e.recorded_at());
    let data = embedded_data(store, &events, &ledger)?;

    let mut h = String::new();
    head(&mut h, store, prov, events.len());
    let _ = write!(h, "{}", super::findings::html(prov.review.as_ref(), escape));
    slider_section(&mut h, events.len());
    planes_section(&mut h, store)?;
    evidence_section(&mut h, store, &ledger, end)?;
    match &prov.divergence {
        Some(Divergence::Shown { json, .. }) => fork_section(&mut h, json),
        Some(Divergence::NotShown(why)) => {
            let _ = writeln!(
                h,
                r#"<section id="fork"><h2>What-if: divergence from the record</h2><p>Not shown: {}.</p></section>"#,
                escape(why)
            );
        }
        None => {}
    }
    if let Some(diff) = fork {
        fork_section(&mut h, diff);
    }
    let verified = log
        .events
        .iter()
        .filter(|e| matches!(e.body, EventBody::Verify(_)))
        .count();
    let _ = write!(
        h,
        r#"<footer>{verified} verification marks in the log. Times are UTC. Open offline; nothing is fetched.</footer>
<script type="application/json" id="asof-data">{data}</script>
<script>{SCRIPT}</script>
</body></html>
"#
    );
    Ok(h)
}

/// The data the page's script reads, as JSON safe inside a script element:
/// per event (recorded order) the beliefs held then and the verdicts in
/// force, and each assertion's recorded time.
fn embedded_data(
    store: &Store,
    events: &[&asof_core::model::Event],
    ledger: &asof_core::engine::quality::Ledger,
) -> Result<String, ExportError> {
    let verified = ledger.verified_ids();
    let mut steps = Vec::with_capacity(events.len());
    for e in events {
        let at = e.recorded_at();
        let beliefs = query::believed(store, at, None, &Filter::default())?;
        let believed = serde_json::to_value(json::believed(at, None, &beliefs, ledger))
            .map_err(|e| ExportError::Html(e.to_string()))?;
        // The verdicts in force at this instant (design.md §4), by evidence id.
        let verdicts: serde_json::Map<String, serde_json::Value> = verified
            .iter()
            .filter_map(|id| {
                let v = ledger.verdict(id, at)?;
                Some((
                    (*id).to_owned(),
                    serde_json::json!({
                        "state": v.state.as_str(),
                        "by": v.by,
                        "id": v.id,
                        "since": time::format(v.since),
                        "note": v.note,
                    }),
                ))
            })
            .collect();
        steps.push(serde_json::json!({
            "event": e.id(),
            "kind": e.kind().as_str(),
            "at": time::format(at),
            "believed": believed,
            "verdicts": verdicts,
        }));
    }
    let header = store.header();
    // Each assertion's recorded time: a split piece's SINCE is its origin's.
    let asserted: serde_json::Map<String, serde_json::Value> = events
        .iter()
        .filter(|e| matches!(e.body, EventBody::Believe(_)))
        .map(|e| (e.id().to_owned(), time::format(e.recorded_at()).into()))
        .collect();
    let data = serde_json::json!({
        "incident": {"id": header.incident.id, "title": header.incident.title},
        "steps": steps,
        "asserted": asserted,
    });
    // JSON in a script element: the agent's text must not end the element or
    // open a comment (`</script>`, `<!--`), so markup characters are escaped.
    Ok(serde_json::to_string(&data)
        .map_err(|e| ExportError::Html(e.to_string()))?
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026"))
}

/// The document's head and its header: title, what-if banner, the incident
/// and the report's provenance.
fn head(h: &mut String, store: &Store, prov: &Provenance, events: usize) {
    let header = store.header();
    let title = format!(
        "{}{} — asof report",
        prov.title_prefix(),
        header.incident.title
    );
    let banner = match &prov.what_if {
        Some(w) => format!(
            r#"<p class="what-if"><strong>{}</strong><br>{}</p>
"#,
            escape(&w.banner()),
            escape(&w.lineage())
        ),
        None => String::new(),
    };
    let mut more = String::new();
    if prov.review.is_some() {
        more.push_str(&format!(" · review: {}", prov.review_words()));
    }
    if let Some(r) = &prov.redacted {
        more.push_str(&format!(" · {r}"));
    }
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{}</title>
<style>{CSS}</style></head><body>
<header><h1>{}{}</h1>
{banner}<p class="sub">incident <code>{}</code> · {} agents · {} topics · {} events</p>
<p class="sub provenance">source <code>{}</code> · SHA-256 <code>{}</code> · asof {} · exported {} · assumed by the importer: {} · input lines skipped: {} · import options: {}{}</p></header>
"#,
        escape(&title),
        prov.title_prefix(),
        escape(&header.incident.title),
        escape(&header.incident.id),
        header.agents.len(),
        header.topics.len(),
        events,
        escape(&prov.origin.name),
        escape(&prov.origin.sha256),
        Provenance::version(),
        time::format(prov.exported_at),
        escape(&prov.assumed_words()),
        escape(&prov.bad_lines_words()),
        escape(&prov.read_with_words()),
        escape(&more),
    );
}

/// The slider over the log's events and the table the script fills with
/// what was believed at the chosen one.
fn slider_section(h: &mut String, events: usize) {
    let last = events.saturating_sub(1);
    let _ = write!(
        h,
        r#"<section id="believed"><h2>What was believed, event by event</h2>
<div class="slider"><label for="step">recorded time</label>
<input id="step" type="range" min="0" max="{last}" value="{last}" step="1" aria-describedby="when">
<span id="when" aria-live="polite"></span></div>
<p class="keys">Drag the slider, or focus it and use ← → (Home, End). The rows are those of <code>asof believed --at</code> that instant; cited evidence carries its verdict then, and <em>quality</em> says whether the belief is stale, unsupported (every item it cites rejected or stale) or contested (an item conflicted).</p>
<table class="beliefs"><thead><tr><th>topic</th><th>agent</th><th>claim</th><th>conf. (stated→effective)</th><th>valid</th><th>since</th><th>evidence</th><th>assertion</th><th>quality</th></tr></thead>
<tbody id="rows"></tbody></table>
<p class="keys">{ASSUMED_LEGEND}. A confidence reads <em>stated→effective</em> where its topic's half-life decayed it; <em>stale</em>: held its topic's <code>stale_after</code> or longer since its last support.</p>
<h3>Verifications in force at this instant</h3><ul id="verdicts" class="verdicts"></ul></section>
"#
    );
}

/// Each topic's plane, one per agent holding beliefs about it (design.md §8:
/// every agent drawn).
fn planes_section(h: &mut String, store: &Store) -> Result<(), ExportError> {
    let _ = writeln!(
        h,
        r#"<section id="planes"><h2>Planes: valid time × recorded time</h2>"#
    );
    let mut planes = Vec::new();
    for topic in &store.header().topics {
        for agent in svg::agents_of(store, &topic.id)? {
            planes.push((topic.id.clone(), Some(agent)));
        }
    }
    for (topic, agent) in &planes {
        match svg::plane(store, topic, agent.as_deref()) {
            Ok(plane) => {
                let _ = writeln!(
                    h,
                    r#"<figure class="plane">{plane}<figcaption class="reading">Point at the plane to read it.</figcaption></figure>"#
                );
            }
            Err(ExportError::UnknownAgent(..)) => {}
            Err(e) => return Err(e),
        }
    }
    let _ = writeln!(h, "</section>");
    Ok(())
}

/// Every evidence item with its verification at the log's last event
/// (`end`), and what the agent read, whole, one click away.
fn evidence_section(
    h: &mut String,
    store: &Store,
    ledger: &asof_core::engine::quality::Ledger,
    end: Micros,
) -> Result<(), ExportError> {
    let _ = writeln!(
        h,
        r#"<section id="evidence"><h2>Evidence</h2><p class="keys">Verified: each item's verification at the log's last event ({end}); the slider's section lists them at each instant.</p><table><thead><tr><th>id</th><th>kind</th><th>source</th><th>observed</th><th>recorded</th><th>lag</th><th>cited by</th><th>verified</th><th>summary</th></tr></thead><tbody>"#,
        end = time::format(end)
    );
    for item in query::evidence(store)? {
        let e = &item.evidence;
        let verified = match ledger.verdict(&e.id, end) {
            None => "candidate".to_owned(),
            Some(v) => v.said(),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&e.id),
            escape(&e.kind),
            escape(&e.source),
            time::format_observed(e.observed_at, e.observed_until, false),
            time::format(e.recorded_at),
            time::format_duration(e.lag()),
            escape(&item.cited_by.join(", ")),
            escape(&verified),
            match &e.content {
                Some(text) => format!(
                    "<details><summary>{}</summary><pre class=\"whole\">{}</pre></details>",
                    escape(&e.summary_shown()),
                    escape(text)
                ),
                None => escape(&e.summary),
            },
        );
    }
    let _ = writeln!(h, "</tbody></table></section>");
    Ok(())
}

/// A fork's divergence windows and time to the truth, from `asof diff`'s JSON.
fn fork_section(h: &mut String, diff: &serde_json::Value) {
    let text = |v: &serde_json::Value| -> String {
        match v {
            serde_json::Value::String(s) => escape(s),
            serde_json::Value::Null => "—".into(),
            other => escape(&other.to_string()),
        }
    };
    let ids = |v: &serde_json::Value| -> String {
        let list: Vec<String> = v.as_array().into_iter().flatten().map(&text).collect();
        if list.is_empty() {
            "none".into()
        } else {
            list.join(", ")
        }
    };
    let _ = writeln!(
        h,
        r#"<section id="fork"><h2>What-if: {} without {}</h2><p>fork <code>{}</code> · lineage {} · policy: {} · assertions dropped: {}</p>"#,
        text(&diff["parent"]),
        ids(&diff["removed"]),
        text(&diff["fork"]),
        if diff["lineage_verified"] == true {
            "verified"
        } else {
            "not verified"
        },
        text(&diff["policy"]),
        ids(&diff["dropped"]),
    );
    let _ = writeln!(
        h,
        "<h3>Where the answers diverge</h3><table><thead><tr><th>agent</th><th>topic</th><th>from</th><th>to</th><th>parent held</th><th>fork held</th></tr></thead><tbody>"
    );
    for pair in diff["divergence"].as_array().into_iter().flatten() {
        for w in pair["windows"].as_array().into_iter().flatten() {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                text(&pair["agent"]),
                text(&pair["topic"]),
                text(&w["from"]),
                text(&w["to"]),
                text(&w["parent"]),
                text(&w["fork"]),
            );
        }
    }
    let _ = writeln!(
        h,
        "</tbody></table><h3>Time to the truth</h3><table><thead><tr><th>agent</th><th>topic</th><th>parent converged</th><th>parent wrong for</th><th>fork converged</th><th>fork wrong for</th></tr></thead><tbody>"
    );
    let wrong = |v: &serde_json::Value| -> String {
        v.as_i64()
            .map_or_else(|| "—".into(), |ms| time::format_duration(ms * 1000))
    };
    for t in diff["truth"].as_array().into_iter().flatten() {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(&t["agent"]),
            text(&t["topic"]),
            text(&t["parent"]["converged_at"]),
            wrong(&t["parent"]["time_wrong_ms"]),
            text(&t["fork"]["converged_at"]),
            wrong(&t["fork"]["time_wrong_ms"]),
        );
    }
    let _ = writeln!(h, "</tbody></table></section>");
}

pub(super) const CSS: &str = r#"
:root { color-scheme: light; --ink: #1d1d1f; --mute: #5b5b60; --rule: #d6d6da; --accent: #1f5fae; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 auto; max-width: 1200px; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: 0; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid var(--rule); }
.sub, .keys, footer, figcaption { color: var(--mute); font-size: 0.9rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.88rem; }
th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid var(--rule); vertical-align: top; }
pre.whole { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 24rem; overflow: auto; margin: 0.25rem 0; }
th { background: #f3f3f5; }
td.nowrap, td.t { white-space: nowrap; }
.slider { display: flex; gap: 1rem; align-items: center; position: sticky; top: 0; background: white; padding: 0.5rem 0; }
.slider input { flex: 1; accent-color: var(--accent); }
#when { font-variant-numeric: tabular-nums; min-width: 22rem; }
figure.plane { margin: 1rem 0; } figure.plane svg { max-width: 100%; height: auto; }
.cursor { stroke: var(--accent); stroke-width: 1.5; stroke-dasharray: 6 3; }
.what-if { color: #b00020; border: 2px solid #b00020; padding: 0.4rem 0.6rem; }
.stale { color: #9a6700; } .warn td:last-child { color: #b00020; font-weight: 600; }
ul.verdicts { font-size: 0.88rem; } .empty { color: var(--mute); font-style: italic; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  .slider input, .keys, figcaption { display: none; }
  .slider { position: static; }
  section { break-inside: avoid-page; } figure.plane { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
"#;

const SCRIPT: &str = r#"
(function () {
  var data = JSON.parse(document.getElementById('asof-data').textContent);
  var slider = document.getElementById('step');
  var rows = document.getElementById('rows');
  var when = document.getElementById('when');
  var ms = function (text) { return text === 'open' || text === null ? Infinity : Date.parse(text); };
  function cell(tr, text, cls) { var td = document.createElement('td'); td.textContent = text; if (cls) { td.className = cls; } tr.appendChild(td); }
  function show(i) {
    var step = data.steps[i];
    if (!step) { return; }
    slider.value = String(i);
    when.textContent = step.at + ' · event ' + (i + 1) + '/' + data.steps.length + ' (' + step.event + ', ' + step.kind + ')';
    rows.textContent = '';
    var beliefs = step.believed.beliefs;
    if (beliefs.length === 0) {
      var tr = document.createElement('tr'); tr.className = 'empty';
      var td = document.createElement('td'); td.colSpan = 9; td.textContent = 'no beliefs held yet';
      tr.appendChild(td); rows.appendChild(tr);
    }
    beliefs.forEach(function (b) {
      var tr = document.createElement('tr');
      tr.className = 'belief' + (b.freshness === 'stale' ? ' stale' : '');
      tr.dataset.topic = b.topic; tr.dataset.agent = b.agent; tr.dataset.claim = b.claim;
      tr.dataset.assertion = b.assertion; tr.dataset.validFrom = b.valid_from; tr.dataset.validTo = b.valid_to || '';
      // `*` after a value the importer assumed (the legend under the table).
      var mark = function (field, text) { return (b.assumed || []).indexOf(field) >= 0 ? text + '*' : text; };
      cell(tr, b.topic); cell(tr, mark('agent', b.agent)); cell(tr, b.claim);
      // Stated confidence, and what it decayed to when that differs.
      var stated = b.confidence.toFixed(2), effective = b.effective_confidence.toFixed(2);
      cell(tr, mark('confidence', stated === effective ? stated : stated + '→' + effective), 'nowrap');
      cell(tr, mark('valid_from', '[' + b.valid_from + ', ' + (b.valid_to || '∞') + ')'), 'nowrap');
      // Since its origin assertion: a split piece's row is recorded later.
      var since = b.origin === 'split' && data.asserted[b.assertion] ? data.asserted[b.assertion] : b.recorded_at;
      cell(tr, since, 'nowrap');
      cell(tr, mark('supported_by', b.supported_by.map(function (id) {
        var v = step.verdicts[id];
        return v && v.state !== 'candidate' ? id + ' (' + v.state + ')' : id;
      }).join(', ')));
      cell(tr, b.assertion);
      var words = [];
      if (b.freshness === 'stale') { words.push('stale'); } else if (b.freshness !== 'unknown') { words.push(b.freshness); }
      if (b.support !== 'ok') {
        var why = b.supported_by.filter(function (id) {
          var v = step.verdicts[id];
          return v && (v.state === 'rejected' || v.state === 'stale' || v.state === 'conflicted');
        }).map(function (id) { return id + ' ' + step.verdicts[id].state; });
        words.push(b.support + (why.length ? ' (' + why.join(', ') + ')' : ''));
      }
      cell(tr, words.length ? words.join(' · ') : '—');
      if (b.support !== 'ok') { tr.className += ' warn'; }
      rows.appendChild(tr);
    });
    var list = document.getElementById('verdicts');
    list.textContent = '';
    var ids = Object.keys(step.verdicts);
    if (ids.length === 0) {
      var none = document.createElement('li'); none.className = 'empty';
      none.textContent = 'none yet: every item is a candidate'; list.appendChild(none);
    }
    ids.forEach(function (id) {
      var v = step.verdicts[id];
      var li = document.createElement('li');
      li.textContent = id + ' ' + v.state + ' since ' + v.since + (v.by ? ' by ' + v.by : '') + ' (' + v.id + ')' + (v.note ? ': ' + v.note : '');
      list.appendChild(li);
    });
    var at = Date.parse(step.at) * 1000;
    document.querySelectorAll('figure.plane svg').forEach(function (svg) { cursor(svg, at); });
    if (history.replaceState) { history.replaceState(null, '', '#step=' + (i + 1)); }
  }
  function geometry(svg) {
    var p = svg.dataset.plot.split(' ').map(Number);
    return { left: p[0], top: p[1], width: p[2], height: p[3],
      v0: +svg.dataset.validMin, v1: +svg.dataset.validMax, r0: +svg.dataset.recordedMin, r1: +svg.dataset.recordedMax };
  }
  function cursor(svg, at) {
    var g = geometry(svg);
    var line = svg.querySelector('line.cursor');
    if (!line) {
      line = document.createElementNS('http://www.w3.org/2000/svg', 'line');
      line.setAttribute('class', 'cursor'); svg.appendChild(line);
    }
    var y = g.top + (g.r1 - Math.min(Math.max(at, g.r0), g.r1)) / (g.r1 - g.r0) * g.height;
    line.setAttribute('x1', g.left); line.setAttribute('x2', g.left + g.width);
    line.setAttribute('y1', y); line.setAttribute('y2', y);
  }
  function read(svg, event) {
    var g = geometry(svg);
    var box = svg.getBoundingClientRect();
    var sx = svg.viewBox.baseVal.width / box.width, sy = svg.viewBox.baseVal.height / box.height;
    var x = (event.clientX - box.left) * sx, y = (event.clientY - box.top) * sy;
    var caption = svg.parentNode.querySelector('figcaption');
    if (x < g.left || x > g.left + g.width || y < g.top || y > g.top + g.height) {
      caption.textContent = 'Point at the plane to read it.'; return;
    }
    var valid = (g.v0 + (x - g.left) / g.width * (g.v1 - g.v0)) / 1000;
    var recorded = (g.r1 - (y - g.top) / g.height * (g.r1 - g.r0)) / 1000;
    var held = [];
    svg.querySelectorAll('rect.version').forEach(function (r) {
      var d = r.dataset;
      if (ms(d.validFrom) <= valid && valid < ms(d.validTo) && ms(d.recordedAt) <= recorded && recorded < ms(d.supersededAt)) {
        held.push(d.claim + ' (' + d.assertion + ')');
      }
    });
    var iso = function (t) { return new Date(t).toISOString().replace('.000Z', 'Z'); };
    caption.textContent = 'At ' + iso(recorded) + ', ' + svg.dataset.agent + ' believed about ' + iso(valid) + ': ' +
      (held.length ? held.join('; ') : 'nothing');
  }
  document.querySelectorAll('figure.plane svg').forEach(function (svg) {
    svg.addEventListener('mousemove', function (e) { read(svg, e); });
  });
  slider.addEventListener('input', function () { show(+slider.value); });
  // `#step=N` opens event N (counted from 1, as the slider's label counts).
  var asked = /step=(\d+)/.exec(location.hash);
  show(asked ? Math.min(Math.max(+asked[1], 1), data.steps.length) - 1 : data.steps.length - 1);
})();
"#;
