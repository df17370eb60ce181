import { html, useState } from "../vendor/preact-htm.js";
import { api, apiUrl } from "../api.js";
import { useLoad, useAction, Loaded, ErrorNote, Notice, Field, CopyButton, PageTitle, fmtBytes, fmtDate } from "../ui.js";

const BACKUP = "npx tenantd backup ./tenantd-$(date +%F).tar.gz --data-dir <the server's data directory>";
const GRANT = "npx tenantd developer operator <your email> --data-dir <the server's data directory>";

/**
 * Backups (docs/dashboard.md). An archive holds every developer's apps, so making or
 * downloading one is for the developers the server's operator named, with their password
 * each time; the server key never goes into a dashboard backup. Everyone sees the commands.
 */
export function BackupsPage() {
  const state = useLoad(() => api("GET", "admin/backups"), []);
  const [notice, setNotice] = useState(null);
  return html`<section class="stack">
    <${PageTitle} title="Backups" />
    <${Loaded} state=${state}>${(d) => html`
      ${d.unsupported ? html`<p class="empty">${d.unsupported}</p>` : null}
      ${!d.unsupported && !d.operator
        ? html`<div class="card"><h2>Who may make backups here</h2>
            <p>A backup holds every developer's apps on this server, so only developers the server's operator names may make or download one from this page. The operator runs, on the server:</p>
            <pre class="command"><code>${GRANT}</code></pre><${CopyButton} text=${GRANT} what="operator command" /></div>`
        : null}
      ${!d.unsupported && d.operator ? html`<${OperatorTools} backups=${d.backups} onChanged=${(text) => (setNotice(text), state.reload())} notice=${notice} />` : null}
      <div class="card">
        <h2>On the server</h2>
        <p>While it runs: one <code>.tar.gz</code> with a consistent snapshot of the database and the file blobs.</p>
        <pre class="command"><code data-testid="backup-command">${BACKUP}</code></pre>
        <${CopyButton} text=${BACKUP} what="backup command" />
        <p class="muted">The server key is left out unless you add <code>--include-secret-key</code> (never from this page); keep <code>secret.key</code> in your secret store. Files on S3 are backed up with the bucket's own tools.</p>
      </div>
      <div class="card">
        <h2>Restore</h2>
        <p>Stop the server, unpack into a new or empty directory (the archive's database is checked before anything moves), put <code>secret.key</code> back, start the server on it.</p>
        <pre class="command"><code data-testid="restore-command">${d.restoreCommand}</code></pre>
        <${CopyButton} text=${d.restoreCommand} what="restore command" />
      </div>`}<//>
  </section>`;
}

function OperatorTools({ backups, onChanged, notice }) {
  const create = useAction();
  const [password, setPassword] = useState("");
  const [picked, setPicked] = useState(null);
  const submit = (e) => {
    e.preventDefault();
    create.run(async () => {
      const { backup } = await api("POST", "admin/backups", { password });
      setPassword("");
      onChanged(`Backup ${backup.name} written (${fmtBytes(backup.bytes)}).`);
    });
  };
  return html`<div class="card">
    <h2>Make a backup now</h2>
    <p>Written on the server under <code>backups/</code> in its data directory, without the server key, and recorded in every app's audit trail.</p>
    <form onSubmit=${submit} aria-label="Make a backup">
      <${Field} label="Your developer password"><input type="password" name="password" autocomplete="current-password" required value=${password} onInput=${(e) => setPassword(e.target.value)} /><//>
      <button type="submit" class="primary" disabled=${create.busy}>${create.busy ? "Writing the backup…" : "Make backup"}</button>
      <${ErrorNote} error=${create.error} field="password" />
    </form>
    <${Notice}>${notice}<//>
    <h2>Last backups</h2>
    ${backups.length === 0
      ? html`<p class="empty">No backup made from this page yet.</p>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Archive</th><th scope="col">Size</th><th scope="col">Made</th><th scope="col"><span class="sr-only">Download</span></th></tr></thead>
          <tbody>${backups.map((b) => html`<tr key=${b.name}><td><code>${b.name}</code></td><td>${fmtBytes(b.bytes)}</td><td>${fmtDate(b.createdAt)}</td>
            <td><button type="button" class="small" aria-label=${`Download ${b.name}`} onClick=${() => setPicked(b.name)}>Download…</button></td></tr>`)}</tbody></table></div>`}
    ${picked ? html`<${DownloadForm} name=${picked} onDone=${() => setPicked(null)} />` : null}
  </div>`;
}

/** The password again, then the browser opens a one-use link: the archive streams to disk, never through the page. */
function DownloadForm({ name, onDone }) {
  const action = useAction();
  const [password, setPassword] = useState("");
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      const { path } = await api("POST", `admin/backups/${encodeURIComponent(name)}/download-link`, { password });
      location.assign(apiUrl(path));
      onDone();
    });
  };
  return html`<form onSubmit=${submit} aria-label=${`Download ${name}`} class="stack">
    <p>Download <code>${name}</code>: it holds every app's data on this server. The download is recorded in every app's audit trail.</p>
    <${Field} label="Your developer password"><input type="password" name="password" autocomplete="current-password" required value=${password} onInput=${(e) => setPassword(e.target.value)} /><//>
    <div class="row"><button type="submit" class="primary" disabled=${action.busy}>Download</button><button type="button" onClick=${onDone}>Cancel</button></div>
    <${ErrorNote} error=${action.error} field="password" />
  </form>`;
}
