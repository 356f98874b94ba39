// Pictures: the family graph (cytoscape) and the similarity histogram
// (uPlot), both vendored under /ui/vendor. Labels are drawn on canvas as
// text, never parsed as markup.

import cytoscape from '../vendor/cytoscape/cytoscape.esm.min.mjs';
import uPlot from '../vendor/uplot/uPlot.esm.js';

/** familyGraph draws members and edges into el; a node click opens it. */
export function familyGraph(el, { members, edges, pivot, current }) {
  const short = (s) => (s && s.length > 28 ? `${s.slice(0, 27)}…` : s || '');
  // A hold's seed file is stored as a document of its own, often under the
  // same name as the document it was taken from: say which node is which.
  const label = (m) => {
    const name = short(m.name || m.key || `#${m.id}`);
    return m.source === 'hold-seed' ? `${name} (hold seed)` : name;
  };
  const elements = [
    ...members.map((m) => ({
      data: { id: `n${m.id}`, doc: m.id, label: label(m) },
      classes: [m.id === pivot ? 'pivot' : '', m.id === current ? 'current' : '', m.source === 'hold-seed' ? 'seed' : ''].join(' ').trim(),
    })),
    ...edges.map((e, i) => ({
      data: { id: `e${i}`, source: `n${e.a}`, target: `n${e.b}`, r: Math.max(0, Math.min(1, e.resemblance || 0)) },
      classes: e.exact ? 'exact' : '',
    })),
  ];
  const cy = cytoscape({
    container: el,
    elements,
    minZoom: 0.2,
    maxZoom: 1.5,
    style: [
      // Labels sit on a white plate so that the links under them do not
      // run through the text.
      { selector: 'node', style: { 'background-color': '#7fa7cf', label: 'data(label)', 'font-size': 10, color: '#1b1f24', 'text-valign': 'bottom', 'text-margin-y': 4, width: 18, height: 18,
        'text-background-color': '#ffffff', 'text-background-opacity': 0.9, 'text-background-padding': 2, 'text-background-shape': 'roundrectangle', 'z-index': 10 } },
      { selector: 'node.seed', style: { shape: 'diamond', 'background-color': '#b07cc6' } },
      { selector: 'node.pivot', style: { 'background-color': '#2f5d8a', 'border-width': 4, 'border-color': '#f0a500', width: 28, height: 28, 'font-weight': 'bold' } },
      { selector: 'node.current', style: { shape: 'round-rectangle' } },
      { selector: 'edge', style: { width: 'mapData(r, 0, 1, 1, 9)', opacity: 'mapData(r, 0, 1, 0.2, 0.95)', 'line-color': '#2f5d8a', 'curve-style': 'haystack' } },
      { selector: 'edge.exact', style: { 'line-style': 'solid', 'line-color': '#1d6b35' } },
    ],
    layout: members.length > 2 ? { name: 'cose', animate: false, randomize: false, padding: 40, nodeRepulsion: () => 9000, idealEdgeLength: (e) => 40 + 140 * (1 - e.data('r')) } : { name: 'circle', animate: false, padding: 40 },
  });
  cy.on('tap', 'node', (ev) => { location.hash = `#/documents/${ev.target.data('doc')}`; });
  cy.on('mouseover', 'node', () => { el.style.cursor = 'pointer'; });
  cy.on('mouseout', 'node', () => { el.style.cursor = ''; });
  el.cy = cy; // for tests and the console
  return cy;
}

/**
 * histogram draws counts of values 0..1 in ten bins, one bar series per
 * {label, values}, and returns the bins' lower edges and the counts.
 */
export function histogram(el, series) {
  const bins = Array.from({ length: 10 }, (_, i) => i / 10);
  const counts = series.map((s) => {
    const c = new Array(10).fill(0);
    for (const v of s.values) c[Math.min(9, Math.max(0, Math.floor((v || 0) * 10)))]++;
    return c;
  });
  const colors = ['#2f5d8a', '#e08a1e'];
  const n = series.length;
  const width = Math.max(320, Math.min(640, el.clientWidth || 480));
  const opts = {
    width,
    height: 260,
    // Not live: a live legend shows the hovered values, "--" until then.
    legend: { show: true, live: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: false, range: [0, 1] }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
    axes: [
      { label: 'resemblance', values: (u, ticks) => ticks.map((t) => t.toFixed(1)) },
      { label: 'pairs', values: (u, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : '')) },
    ],
    series: [
      { label: 'resemblance from', value: (u, v) => (v == null ? '' : `${(v - 0.05).toFixed(1)}–${(v + 0.05).toFixed(1)}`) },
      ...series.map((s, i) => ({
        label: s.label,
        stroke: colors[i % colors.length],
        fill: `${colors[i % colors.length]}cc`,
        width: 1,
        paths: uPlot.paths.bars({ size: [n > 1 ? 0.45 : 0.9, 60], align: n > 1 ? (i === 0 ? -1 : 1) : 0 }),
        points: { show: false },
      })),
    ],
  };
  // Bars are centred on the middle of each bin.
  const xs = bins.map((b) => b + 0.05);
  const u = new uPlot(opts, [xs, ...counts], el);
  el.uplot = u;
  return { bins, counts };
}
