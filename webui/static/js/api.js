// The JSON API client: every call carries the bearer token kept in
// sessionStorage; a 401 signs the user out.

const TOKEN_KEY = 'simdex.token';
const TOKEN_FORMAT = /^sdx_[0-9a-f]{16}_[A-Za-z0-9_-]+$/;

/** APIError is an error answered by the API (status 0: no answer). */
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'APIError';
    this.status = status;
  }
}

let onUnauthorized = () => {};

/** setUnauthorizedHandler sets what happens after a 401 (back to sign-in). */
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

export function token() { return sessionStorage.getItem(TOKEN_KEY); }
export function validToken(t) { return TOKEN_FORMAT.test(t); }
export function setToken(t) { sessionStorage.setItem(TOKEN_KEY, t); }
export function clearToken() { sessionStorage.removeItem(TOKEN_KEY); }

let inflight = 0;
function busy(delta) {
  inflight += delta;
  const el = document.getElementById('busy');
  if (el) el.textContent = inflight > 0 ? 'Loading…' : '';
}

/**
 * call sends a request to /api/v1 + path and returns the decoded JSON.
 * opts: method, json (a body to send as JSON), body (raw: a File or Blob),
 * headers, keepOn401 (do not leave the page on a 401). It throws APIError with the server's {"error"} message on any
 * status but 2xx.
 */
export async function call(path, opts = {}) {
  const t = token();
  if (!t) {
    onUnauthorized();
    throw new APIError(401, 'not signed in');
  }
  const headers = { Authorization: `Bearer ${t}`, Accept: 'application/json', ...(opts.headers || {}) };
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  let resp;
  busy(1);
  try {
    resp = await fetch(`/api/v1${path}`, { method: opts.method || (body !== undefined ? 'POST' : 'GET'), headers, body, cache: 'no-store' });
  } catch (e) {
    throw new APIError(0, `the server did not answer: ${e.message}`);
  } finally {
    busy(-1);
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (resp.status === 401) {
    clearToken();
    if (!opts.keepOn401) onUnauthorized();
    throw new APIError(401, (data && data.error) || 'the token was refused');
  }
  if (!resp.ok) {
    throw new APIError(resp.status, (data && data.error) || `${resp.status} ${resp.statusText}`);
  }
  if (data === null && text) throw new APIError(resp.status, 'the answer is not JSON');
  return data;
}

/** qs builds a query string from the non-empty values of an object. */
export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : '';
}
