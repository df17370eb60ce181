import { html, useState } from "../vendor/preact-htm.js";
import { api, previewUrl } from "../api.js";
import { Confirm, fmtBytes, fmtDate } from "../ui.js";

/** A tenant's files: size, type, a preview for safe images, delete. */
export function FilesCard({ app, tenantId, base, files, onChanged }) {
  const [doomed, setDoomed] = useState(null);
  const remove = async () => {
    await api("DELETE", `${base}/files/${doomed.id}`);
    setDoomed(null);
    onChanged();
  };
  return html`<div class="card">
    <h2>Files</h2>
    ${files.files.length === 0
      ? html`<p class="empty">No files uploaded by this tenant.</p>`
      : html`<ul class="files">${files.files.map(
          (f) => html`<li key=${f.id}>
            ${f.previewable ? html`<img src=${previewUrl(app.id, tenantId, f.id)} alt=${`Preview of ${f.originalFilename ?? f.id}`} loading="lazy" />` : html`<span class="nopreview" aria-hidden="true">${f.mimeType.split("/")[1] ?? "file"}</span>`}
            <div><strong>${f.originalFilename ?? f.id}</strong><br /><span class="muted">${f.mimeType}, ${fmtBytes(f.sizeBytes)}, ${fmtDate(f.createdAt)}</span></div>
            <button type="button" class="small danger" onClick=${() => setDoomed(f)}>Delete</button>
          </li>`,
        )}</ul>
        ${files.total > files.files.length ? html`<p class="muted">Showing the newest ${files.files.length} of ${files.total} files.</p>` : null}`}
    ${doomed ? html`<${Confirm} title="Delete this file?" body=${`${doomed.originalFilename ?? doomed.id} is removed from storage; its URL stops working.`} action="Delete file" onConfirm=${remove} onCancel=${() => setDoomed(null)} />` : null}
  </div>`;
}
