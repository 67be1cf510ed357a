/**
 * The style sheet of the `ctxfold inspect` page: system fonts only, relative units, no fixed
 * widths (it reads at 200% zoom), and every colour doubled by a text label on the page.
 */
export const PAGE_STYLE = `
:root { --head: #1f5fbf; --summary: #7a3fb0; --summarized: #7a3fb0; --dropped: #6b6b6b; --middle: #1e7f3c; --tail: #0b7a84; --held: #0b7a84; --notes: #b36b00; --tools: #a33a3a; --overhead: #444; --reserved: #c9c9c9; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.45; margin: 0; padding: 1rem; color: #1a1a1a; background: #fff; }
main { max-width: 70rem; margin: 0 auto; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.3rem; margin-top: 2rem; } h3 { font-size: 1.1rem; margin-top: 1.5rem; } h4 { font-size: 1rem; }
a { color: #0645ad; }
:focus-visible, .msg:focus, .group:focus { outline: 0.2rem solid #d4351c; outline-offset: 0.1rem; }
.bar { position: relative; display: flex; width: 100%; height: 1.6rem; border: 0.1rem solid #333; background: repeating-linear-gradient(45deg, #fff, #fff 0.3rem, #eee 0.3rem, #eee 0.6rem); }
.seg { display: block; height: 100%; border-right: 0.1rem solid #fff; min-width: 0.15rem; }
.mark { position: absolute; top: -0.4rem; bottom: -0.4rem; width: 0.2rem; background: #000; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; border: 0.05rem solid #333; vertical-align: middle; }
.seg-head { background: var(--head); } .seg-summary { background: var(--summary); } .seg-middle { background: var(--middle); } .seg-tail { background: var(--tail); }
.seg-notes { background: var(--notes); } .seg-tools { background: var(--tools); } .seg-overhead { background: var(--overhead); } .seg-reserved { background: var(--reserved); }
.seg-threshold { background: #000; }
table.legend { border-collapse: collapse; margin-top: 0.5rem; } .legend th, .legend td { padding: 0.15rem 0.6rem; text-align: left; } .legend td.n { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #1e7f3c; font-weight: 600; } .bad { color: #a33a3a; font-weight: 600; }
.summary-text, pre { white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.85rem; }
.summary-text { display: block; border: 0.1rem solid #ccc; padding: 0.5rem; }
.ledger { display: inline; }
.facts-sides { display: flex; flex-wrap: wrap; gap: 1rem; } .facts-side { flex: 1 1 20rem; min-width: 0; }
.facts-side code { overflow-wrap: anywhere; }
.timeline { display: flex; flex-direction: column; gap: 0.4rem; }
.group, .block { border: 0.1rem solid #bbb; border-left-width: 0.5rem; padding: 0.3rem 0.6rem; }
.fate-head { border-left-color: var(--head); } .fate-summarized { border-left-color: var(--summarized); } .fate-dropped { border-left-color: var(--dropped); border-left-style: dashed; }
.fate-middle { border-left-color: var(--middle); } .fate-tail { border-left-color: var(--tail); } .fate-held { border-left-color: var(--held); border-left-style: double; }
.group.fate-dropped, .group.fate-summarized { background: #f7f5fa; }
.badge { display: inline-block; padding: 0 0.4rem; margin-right: 0.3rem; border-radius: 0.3rem; color: #fff; font-size: 0.8rem; font-weight: 600; }
.badge-head { background: var(--head); } .badge-summarized, .badge-covered { background: var(--summarized); } .badge-dropped { background: var(--dropped); }
.badge-middle { background: var(--middle); } .badge-tail, .badge-held { background: var(--tail); } .badge-cleared { background: var(--notes); } .badge-repaired { background: var(--tools); }
.kind { font-weight: 600; } .where { color: #555; font-size: 0.85rem; }
.msg { margin: 0.3rem 0 0 0.3rem; padding-left: 0.5rem; border-left: 0.15rem solid #ddd; }
.msg pre.body { margin: 0.2rem 0; }
.repair-note, .issue { color: #a33a3a; font-weight: 600; margin: 0.2rem 0; }
.cut { padding: 0.4rem; border: 0.15rem dashed #d4351c; color: #8a1f0f; font-weight: 700; text-align: center; }
button { font: inherit; padding: 0.2rem 0.6rem; }
.block-toggle { text-align: left; width: 100%; }
.hint { color: #555; font-size: 0.9rem; }
.index ol { padding-left: 1.5rem; }
`;
