import { html } from "../vendor/preact-htm.js";
import { CopyButton, PageTitle } from "../ui.js";

const BACKUP = "npx tenantd backup ./tenantd-$(date +%F).tar.gz --data-dir <the server's data directory>";
const RESTORE = "npx tenantd restore ./tenantd-YYYY-MM-DD.tar.gz --data-dir <a new, empty directory>";

/**
 * Backups are made and restored where the data lives, by whoever runs the server: an
 * archive holds every developer's apps and, on request, the server key, so no developer
 * session can create or download one. This page gives the commands.
 */
export function BackupsPage() {
  return html`<section class="stack">
    <${PageTitle} title="Backups" />
    <div class="card">
      <h2>Make a backup</h2>
      <p>On the server, while it runs: one <code>.tar.gz</code> with a consistent snapshot of the database and the file blobs.</p>
      <pre class="command"><code data-testid="backup-command">${BACKUP}</code></pre>
      <${CopyButton} text=${BACKUP} what="backup command" />
      <p class="muted">The server key is left out unless you add <code>--include-secret-key</code>; keep <code>secret.key</code> in your secret store. Files on S3 are backed up with the bucket's own tools.</p>
    </div>
    <div class="card">
      <h2>Restore</h2>
      <p>Stop the server, unpack into a new or empty directory (the archive's database is checked before anything moves), put <code>secret.key</code> back, start the server on it.</p>
      <pre class="command"><code data-testid="restore-command">${RESTORE}</code></pre>
      <${CopyButton} text=${RESTORE} what="restore command" />
    </div>
    <p class="muted">Why not a download button: an archive holds every developer's apps on this server and can hold its key, so only whoever runs the server makes one. Schedule it (cron, a systemd timer) and try a restore once.</p>
  </section>`;
}
