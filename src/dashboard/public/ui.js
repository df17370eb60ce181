import { html, useState, useEffect, useLayoutEffect, useRef, useCallback } from "./vendor/preact-htm.js";
import { takeHeadingFocus } from "./route.js";

export { html };

/**
 * Loads data for a page; `reload()` runs the loader again. A reload keeps the shown data
 * until the new answer arrives; new deps drop it, so one app's data never shows under
 * another's name. `keep`: while it stays the same (a list's app, say), new deps (its next
 * page) keep the old rows on screen, with `loading` set, until the new ones arrive.
 */
export function useLoad(loader, deps, keep) {
  const [state, setState] = useState({ loading: true, data: null, error: null });
  const [tick, setTick] = useState(0);
  const key = JSON.stringify(deps);
  const scope = keep === undefined ? key : JSON.stringify(keep);
  const shown = useRef({ key, scope });
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    let live = true;
    const same = shown.current.scope === scope;
    shown.current = { key, scope };
    setState((s) => ({ ...s, data: same ? s.data : null, loading: true }));
    loader().then(
      (data) => live && setState({ loading: false, data, error: null }),
      (error) => live && setState({ loading: false, data: null, error }),
    );
    return () => (live = false);
  }, [key, tick]);
  // Until the effect above runs, a render with new deps is already loading, and shows no
  // data from another scope.
  if (shown.current.key !== key) return { loading: true, data: shown.current.scope === scope ? state.data : null, error: null, reload };
  return { ...state, reload };
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

/** A failure the page itself found in a form field, before asking the server. */
export class FieldError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

let noteIds = 0;
/**
 * An error message. Inside a form it is tied to its field (`aria-invalid`,
 * `aria-describedby`) and puts the focus back on that field, so a failed submit never
 * leaves keyboard users on a disabled button: the field is `error.field`, else `field`,
 * else the form's first field.
 */
export function ErrorNote({ error, field }) {
  const ref = useRef(null);
  const [id] = useState(() => `error-${++noteIds}`);
  useLayoutEffect(() => {
    const form = ref.current?.closest("form");
    if (!error || !form) return;
    const name = error.field ?? field;
    const target = (name && form.elements.namedItem(name)) || form.querySelector("input:not([type=hidden]):not([disabled]), select, textarea");
    if (!target || !target.setAttribute) return;
    target.setAttribute("aria-invalid", "true");
    target.setAttribute("aria-describedby", id);
    target.focus();
    return () => {
      target.removeAttribute("aria-invalid");
      if (target.getAttribute("aria-describedby") === id) target.removeAttribute("aria-describedby");
    };
  }, [error]);
  return error ? html`<p class="error" role="alert" id=${id} ref=${ref}>${error.message}</p>` : null;
}

/** A success message, announced politely. */
export const Notice = ({ children }) => (children ? html`<p class="ok" role="status">${children}</p>` : null);

/**
 * The page's heading and `document.title`. After a route change the heading takes the
 * focus, so keyboard and screen-reader users land on the new page, not on the old link.
 */
export function PageTitle({ title, children }) {
  const ref = useRef(null);
  useLayoutEffect(() => {
    document.title = `${title} · tenantd`;
    if (takeHeadingFocus()) ref.current?.focus();
  }, [title]);
  return html`<h1 ref=${ref} tabindex="-1">${children ?? title}</h1>`;
}

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

/** `what` names the copied thing for screen readers, since a page has several Copy buttons. */
export function CopyButton({ text, label = "Copy", what }) {
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
  return html`<button type="button" class="small" onClick=${copy} aria-label=${what ? `${done ? "Copied" : label} ${what}` : undefined}>${done ? "Copied" : label}</button>`;
}

/** A secret shown this one time, with a copy button. */
export function SecretOnce({ title, value, note }) {
  return html`<div class="secret" role="status">
    <strong>${title}</strong>
    <p>${note ?? "Shown once: copy it now. tenantd keeps only a hash or an encrypted copy and cannot show it again."}</p>
    <code class="secret-value">${value}</code> <${CopyButton} text=${value} what=${title.toLowerCase()} />
  </div>`;
}

/**
 * A modal confirmation for a destructive action. With `typed`, the person types that word
 * (the app's name, the tenant's email) before the button works. It opens on Cancel (or the
 * typed word), never on the action, so a stray Enter cannot carry it out, and gives the
 * focus back to whatever opened it.
 */
export function Confirm({ title, body, typed, action = "Delete", onConfirm, onCancel }) {
  const ref = useRef(null);
  const cancelRef = useRef(null);
  const [value, setValue] = useState("");
  const { busy, error, run } = useAction();
  useLayoutEffect(() => {
    const opener = document.activeElement;
    const dialog = ref.current;
    dialog.showModal();
    (typed ? dialog.querySelector("input[name=confirm]") : cancelRef.current)?.focus();
    return () => {
      // While the modal is open the rest of the page is inert: close it before focusing.
      if (dialog.open) dialog.close();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  const ok = !typed || value.trim() === typed;
  const submit = (e) => {
    e.preventDefault();
    if (ok) run(onConfirm);
  };
  return html`<dialog ref=${ref} class="confirm" onCancel=${(e) => (e.preventDefault(), onCancel())} aria-labelledby="confirm-title">
    <form onSubmit=${submit}>
      <h2 id="confirm-title">${title}</h2>
      <div class="confirm-body">${typeof body === "string" ? html`<p>${body}</p>` : body}</div>
      ${typed
        ? html`<${Field} label=${html`Type <code>${typed}</code> to confirm`}>
            <input name="confirm" autocomplete="off" value=${value} onInput=${(e) => setValue(e.target.value)} />
          <//>`
        : null}
      <${ErrorNote} error=${error} />
      <div class="row">
        <button type="submit" class="danger" disabled=${!ok || busy}>${busy ? "Working…" : action}</button>
        <button type="button" ref=${cancelRef} onClick=${onCancel}>Cancel</button>
      </div>
    </form>
  </dialog>`;
}

/** `loading`: the next page is on its way; the pager keeps naming the page shown until it arrives. */
export function Pager({ total, limit, offset, onPage, loading = false }) {
  if (total <= limit && offset === 0) return null;
  const page = Math.floor(offset / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  return html`<nav class="pager" aria-label="Pages">
    <button type="button" disabled=${loading || offset === 0} onClick=${() => onPage(Math.max(0, offset - limit))}>Previous</button>
    <span aria-live="polite">Page ${page} of ${pages} (${total.toLocaleString()} in all)${loading ? " · loading…" : ""}</span>
    <button type="button" disabled=${loading || offset + limit >= total} onClick=${() => onPage(offset + limit)}>Next</button>
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
