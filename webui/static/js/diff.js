// The diff view: two documents side by side, word by word, as computed
// by GET /diff. Left: a, with what is only in a marked <del class="del">.
// Right: b, with what is only in b marked <ins class="ins">. Long runs of
// equal text are collapsed behind a button.

import { call, qs } from './api.js';
import { errorBox, h, link } from './dom.js';

/** Runs of equal text longer than this are collapsed, keeping CONTEXT on each side. */
const COLLAPSE = 800;
const CONTEXT = 240;

export async function diffView(ctx) {
  const [a, b] = ctx.params.map(Number);
  ctx.root.append(h('h1', {}, `Differences between documents ${a} and ${b}`));
  let d;
  try {
    d = await call(`/diff${qs({ a, b })}`);
  } catch (e) {
    if (e.status === 401) return;
    ctx.root.appendChild(errorBox(e));
    return;
  }
  const ops = d.ops || [];
  let deleted = 0, inserted = 0;
  for (const op of ops) {
    const words = (op.text.match(/\S+/g) || []).length;
    if (op.op === 'delete') deleted += words;
    else if (op.op === 'insert') inserted += words;
  }
  const nameA = d.a ? d.a.name || d.a.key : `#${a}`;
  const nameB = d.b ? d.b.name || d.b.key : `#${b}`;
  ctx.root.replaceChildren(
    h('h1', {}, 'Differences'),
    h('p', { id: 'diff-summary' },
      deleted || inserted
        ? `${deleted} word${deleted === 1 ? '' : 's'} only in the left document, ${inserted} only in the right one.`
        : 'The two texts are the same, word for word.',
      ' ', link(`#/diff/${b}/${a}`, 'Swap sides')),
    d.truncated ? h('p', { class: 'notice' }, 'The texts are long: the diff covers only their beginning.') : '',
    (d.reread || []).length
      ? h('p', { class: 'notice', id: 'diff-reread' }, `The index keeps no texts: ${d.reread.length === 2 ? 'both were' : `the ${d.reread[0] === 'a' ? 'left' : 'right'} one was`} read again from where ${d.reread.length === 2 ? 'they were' : 'it was'} collected, and checked against the text indexed.`)
      : '',
    h('div', { class: 'diff', id: 'diff' },
      side('left', nameA, a, ops, 'delete'),
      side('right', nameB, b, ops, 'insert')));
}

/** side renders one column: equal runs and the ops of kind mine. */
function side(which, name, id, ops, mine) {
  const col = h('div', { class: `side ${which}`, id: `diff-${which}`, 'aria-label': `${which === 'left' ? 'Left' : 'Right'}: ${name}` },
    h('h2', {}, link(`#/documents/${id}`, name), h('span', { class: 'muted' }, mine === 'delete' ? ' — deletions marked' : ' — insertions marked')));
  const last = ops.length - 1;
  ops.forEach((op, i) => {
    if (op.op === 'equal') col.appendChild(equalRun(op.text, i === 0, i === last, i));
    else if (op.op === mine) {
      col.appendChild(mine === 'delete'
        ? h('del', { class: 'del', title: 'only in this document' }, op.text)
        : h('ins', { class: 'ins', title: 'only in this document' }, op.text));
    }
  });
  return col;
}

/** equalRun shows equal text, collapsing the middle of a long run. */
function equalRun(text, first, last, run) {
  if (text.length <= COLLAPSE) return document.createTextNode(text);
  let head = first ? '' : text.slice(0, CONTEXT);
  let tail = last ? '' : text.slice(text.length - CONTEXT);
  // Cut at line ends when there are some in the context.
  const nl = head.lastIndexOf('\n');
  if (nl > CONTEXT / 4) head = head.slice(0, nl + 1);
  const tl = tail.indexOf('\n');
  if (tl >= 0 && tl < (CONTEXT * 3) / 4) tail = tail.slice(tl + 1);
  const hidden = text.slice(head.length, text.length - tail.length);
  const span = h('span', { class: 'equal' });
  const btn = h('button', { type: 'button', class: 'expand', dataset: { run: String(run) } }, `… ${hidden.length.toLocaleString()} characters the same in both …`);
  btn.addEventListener('click', () => {
    // Expand both columns at once so that they stay comparable.
    for (const b of document.querySelectorAll('#diff button.expand')) {
      if (b.dataset.run === btn.dataset.run) b.replaceWith(document.createTextNode(b.hiddenText));
    }
  });
  btn.hiddenText = hidden;
  span.append(head, btn, tail);
  return span;
}
