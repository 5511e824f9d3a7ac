//! The per-unit results of every cell, as one JSON data island that the page's script reads when
//! a cell is opened: a cell's unit list is built only then, so the page stays light, and every
//! string (a unit's place, an expected value, a detail) and every list of places is stored once
//! however many cells repeat it. Each cell holds its requirements, the units that did not pass
//! (the first [`super::MAX_UNITS_SHOWN`], grouped by what they reported, and how many more), and
//! the places of those that passed.

use ompd_report::{Outcome, ResultRecord};
use serde::Serialize;
use std::collections::HashMap;

/// The data of every cell, their strings and lists of places interned.
#[derive(Default, Serialize)]
pub(super) struct Units {
    /// Every string, once.
    s: Vec<String>,
    /// Every list of places (string indices), once.
    l: Vec<Vec<usize>>,
    /// Per cell, in the order cells were added: [`Cell`].
    c: Vec<Cell>,
    #[serde(skip)]
    strings: HashMap<String, usize>,
    #[serde(skip)]
    lists: HashMap<Vec<usize>, usize>,
}

/// One cell: requirements (string index), the units that did not pass grouped by what they
/// reported ([`Group`]), how many more did not pass, and the places of the units that passed
/// (list index).
type Cell = (usize, Vec<Group>, usize, usize);

/// Units that reported alike: outcome, expected, actual, detail (string indices), 1 when flaky,
/// and their places (list index).
type Group = [usize; 6];

impl Units {
    /// The index of `s` in the string table.
    fn intern(&mut self, s: &str) -> usize {
        if let Some(&i) = self.strings.get(s) {
            return i;
        }
        self.s.push(s.to_string());
        self.strings.insert(s.to_string(), self.s.len() - 1);
        self.s.len() - 1
    }

    /// The index of the list of `places` in the list table.
    fn list(&mut self, places: Vec<usize>) -> usize {
        if let Some(&i) = self.lists.get(&places) {
            return i;
        }
        self.l.push(places.clone());
        self.lists.insert(places, self.l.len() - 1);
        self.l.len() - 1
    }

    /// Adds a cell's results; returns the cell's number (the `data-u` of its `<td>`).
    pub(super) fn add(&mut self, rs: &[&ResultRecord]) -> usize {
        let req = self.intern(&rs[0].requirements.join(", "));
        let bad: Vec<&&ResultRecord> = rs.iter().filter(|r| r.outcome != Outcome::Pass).collect();
        // Grouped in the order each report first appears.
        let mut groups: Vec<([usize; 5], Vec<usize>)> = Vec::new();
        for r in bad.iter().take(super::MAX_UNITS_SHOWN) {
            let what = [
                self.intern(r.outcome.as_str()),
                self.intern(&r.expected),
                self.intern(&r.actual),
                self.intern(&r.detail),
                usize::from(r.flaky),
            ];
            let place = self.intern(&r.place());
            match groups.iter_mut().find(|(w, _)| *w == what) {
                Some((_, places)) => places.push(place),
                None => groups.push((what, vec![place])),
            }
        }
        let more = bad.len() - bad.len().min(super::MAX_UNITS_SHOWN);
        let shown: Vec<Group> = groups
            .into_iter()
            .map(|(w, places)| [w[0], w[1], w[2], w[3], w[4], self.list(places)])
            .collect();
        let passed: Vec<usize> = rs
            .iter()
            .filter(|r| r.outcome == Outcome::Pass)
            .map(|r| self.intern(&r.place()))
            .collect();
        let passed = self.list(passed);
        self.c.push((req, shown, more, passed));
        self.c.len() - 1
    }

    /// The data island and the script that builds a cell's unit list when it is opened.
    pub(super) fn script(&self) -> String {
        // In a script element only `</` and `<!--` could end it early: `<` is escaped.
        let json = serde_json::to_string(self)
            .unwrap_or_else(|_| "{\"s\":[],\"l\":[],\"c\":[]}".into())
            .replace('<', "\\u003c");
        format!(
            "<script type=\"application/json\" id=\"units\">{json}</script>\n<script>{BUILD}</script>\n"
        )
    }
}

/// Builds the unit list of a cell when its `<details>` opens, and of every cell open when the
/// page loads (text only, through `textContent`).
const BUILD: &str = "(()=>{\
const d=JSON.parse(document.getElementById('units').textContent),s=d.s,l=d.l;\
const el=(t,c,x)=>{const e=document.createElement(t);if(c)e.className=c;if(x!==undefined)e.textContent=x;return e};\
const table=rows=>{const t=el('table','units'),h=el('tr');\
for(const x of['outcome','unit','expected','actual','detail'])h.append(el('th','',x));t.append(h);\
for(const g of rows)for(const p of l[g[5]]){const tr=el('tr','o-'+s[g[0]]),o=el('td');o.append(el('span','sw'),s[g[0]]+(g[4]?' (flaky)':''));\
const u=el('td');u.append(el('code','',s[p]));tr.append(o,u);for(const k of[1,2,3])tr.append(el('td','',s[g[k]]));t.append(tr)}\
return t};\
const build=det=>{\
if(!det.open||det.dataset.built)return;const td=det.closest('td[data-u]');if(!td)return;\
const c=d.c[+td.dataset.u];if(!c)return;det.dataset.built='1';\
const box=el('div','unit-list');box.append(el('div','req','requirements: '+s[c[0]]));\
if(c[1].length)box.append(table(c[1]));\
if(c[2])box.append(el('p','muted','\u{2026} and '+c[2]+' more not passing (see the JSON report)'));\
const ps=l[c[3]];if(ps.length){const p=el('p','muted',ps.length+' unit(s) pass: ');p.append(el('code','',ps.map(i=>s[i]).join(', ')));box.append(p)}\
det.append(box)};\
document.addEventListener('toggle',ev=>build(ev.target),true);\
for(const x of document.querySelectorAll('td[data-u] details[open]'))build(x)})();";
