// Search: by name, key or id (GET /search), or by dropping a file
// (POST /similar: every stored version of a file that is not stored).

import { call, qs } from './api.js';
import { errorBox, go, h } from './dom.js';
import { documentsTable, matchesTable } from './tables.js';

export async function searchView(ctx) {
  const q = ctx.query.get('q') || '';
  const input = h('input', { id: 'q', name: 'q', type: 'search', value: q, size: 48, placeholder: 'contract.docx, s3:records/…, 1234', autocomplete: 'off' });
  const form = h('form', { role: 'search', class: 'row', id: 'search-form' },
    h('div', { class: 'field' }, h('label', { for: 'q' }, 'Name, key or document id'), input),
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Search')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = input.value.trim();
    go(`#/search${qs({ q: v })}`);
  });
  const results = h('section', { id: 'results', 'aria-live': 'polite' });
  const fileInput = h('input', { id: 'file', type: 'file', class: 'sr-only', tabindex: '-1', 'aria-label': 'File to compare' });
  const choose = h('button', { type: 'button', class: 'secondary', id: 'choose-file', onclick: () => fileInput.click() }, 'Choose a file…');
  const drop = h('div', { class: 'drop', id: 'drop' },
    h('p', {}, 'Drop a file here to find every stored version of it. The file is compared, not stored.'),
    choose, fileInput);
  const upload = h('section', { id: 'upload-results', 'aria-live': 'polite' });
  ctx.root.append(h('h1', {}, 'Search documents'), form, results, h('h2', {}, 'Find the versions of a file'), drop, upload);

  const compare = async (file) => {
    upload.replaceChildren(h('p', { class: 'muted' }, `Comparing ${file.name}…`));
    try {
      const res = await similarToFile(file);
      const ms = res.matches || [];
      upload.replaceChildren(
        h('h2', {}, `Stored versions of ${file.name}`),
        ms.length ? matchesTable(ms, 0) : h('p', { class: 'notice' }, 'No stored document is a copy or near-copy of this file.'));
    } catch (e) {
      if (e.status === 401) return;
      upload.replaceChildren(errorBox(e));
    }
  };
  fileInput.addEventListener('change', () => { if (fileInput.files[0]) compare(fileInput.files[0]); });
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    const f = ev.dataTransfer && ev.dataTransfer.files[0];
    if (f) compare(f);
  });

  if (!q) {
    input.focus();
    return;
  }
  results.appendChild(h('p', { class: 'muted' }, 'Searching…'));
  try {
    const res = await call(`/search${qs({ q, limit: 50 })}`);
    const docs = res.documents || [];
    results.replaceChildren(
      h('h2', {}, docs.length === 1 ? '1 document' : `${docs.length} documents`, docs.length >= 50 ? ' (the first 50)' : ''),
      docs.length ? documentsTable(docs, 'documents search-results') : h('p', { class: 'notice' }, `No document matches “${q}”.`));
  } catch (e) {
    if (e.status === 401) return;
    results.replaceChildren(errorBox(e));
  }
}

/** similarToFile sends a file's bytes to POST /similar. */
function similarToFile(file) {
  const headers = { 'Content-Type': file.type || 'application/octet-stream' };
  // Header values must be Latin-1; the name also goes in the query, which
  // takes any Unicode.
  if (/^[\x20-\x7e]*$/.test(file.name)) headers['X-Simdex-Name'] = file.name;
  return call(`/similar${qs({ name: file.name })}`, { method: 'POST', body: file, headers });
}
