import { html, useState, useEffect, useRef, useCallback } from "./vendor/preact-htm.js";

export { html };

/** Loads data for a page; `reload()` runs the loader again. */
export function useLoad(loader, deps) {
  const [state, setState] = useState({ loading: true, data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loader().then(
      (data) => live && setState({ loading: false, data, error: null }),
      (error) => live && setState({ loading: false, data: null, error }),
    );
    return () => (live = false);
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** Runs an async action with a busy flag and the API's message on failure. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = async (fn) => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

export const ErrorNote = ({ error }) => (error ? html`<p class="error" role="alert">${error.message}</p>` : null);

export const Empty = ({ children }) => html`<div class="empty">${children}</div>`;

export const Loading = () => html`<p class="loading" aria-live="polite">Loading…</p>`;

/** A page's data or its loading/error state. */
export function Loaded({ state, children }) {
  if (state.error) return html`<${ErrorNote} error=${state.error} />`;
  if (state.loading && !state.data) return html`<${Loading} />`;
  return children(state.data);
}

export function Field({ label, hint, children }) {
  return html`<label class="field"><span class="label">${label}</span>${children}${hint ? html`<small>${hint}</small>` : null}</label>`;
}

export function CopyButton({ text, label = "Copy" }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 1500);
    } catch {
      setDone(false);
    }
  };
  return html`<button type="button" class="small" onClick=${copy}>${done ? "Copied" : label}</button>`;
}

/** A secret shown this one time, with a copy button. */
export function SecretOnce({ title, value, note }) {
  return html`<div class="secret" role="status">
    <strong>${title}</strong>
    <p>${note ?? "Shown once: copy it now. tenantd keeps only a hash or an encrypted copy and cannot show it again."}</p>
    <code class="secret-value">${value}</code> <${CopyButton} text=${value} />
  </div>`;
}

/**
 * A modal confirmation for a destructive action. With `typed`, the person types that word
 * (the app's name, the tenant's email) before the button works.
 */
export function Confirm({ title, body, typed, action = "Delete", onConfirm, onCancel }) {
  const ref = useRef(null);
  const [value, setValue] = useState("");
  const { busy, error, run } = useAction();
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const ok = !typed || value.trim() === typed;
  const submit = (e) => {
    e.preventDefault();
    if (ok) run(onConfirm);
  };
  return html`<dialog ref=${ref} class="confirm" onCancel=${(e) => (e.preventDefault(), onCancel())} aria-labelledby="confirm-title">
    <form onSubmit=${submit}>
      <h2 id="confirm-title">${title}</h2>
      <p>${body}</p>
      ${typed
        ? html`<${Field} label=${html`Type <code>${typed}</code> to confirm`}>
            <input name="confirm" autocomplete="off" value=${value} onInput=${(e) => setValue(e.target.value)} />
          <//>`
        : null}
      <${ErrorNote} error=${error} />
      <div class="row">
        <button type="submit" class="danger" disabled=${!ok || busy}>${busy ? "Working…" : action}</button>
        <button type="button" onClick=${onCancel}>Cancel</button>
      </div>
    </form>
  </dialog>`;
}

export function Pager({ total, limit, offset, onPage }) {
  if (total <= limit && offset === 0) return null;
  const page = Math.floor(offset / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  return html`<nav class="pager" aria-label="Pages">
    <button type="button" disabled=${offset === 0} onClick=${() => onPage(Math.max(0, offset - limit))}>Previous</button>
    <span>Page ${page} of ${pages} (${total.toLocaleString()} in all)</span>
    <button type="button" disabled=${offset + limit >= total} onClick=${() => onPage(offset + limit)}>Next</button>
  </nav>`;
}

export const fmtDate = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Lines of a textarea as a list, blanks dropped. */
export const lines = (text) => text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
