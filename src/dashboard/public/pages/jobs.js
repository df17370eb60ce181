import { html } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, Loaded, Empty, PageTitle, fmtDate } from "../ui.js";

const STATUS = { ok: ["status-delivered", "OK"], failed: ["status-failed", "Failed"], running: ["status-sending", "Running"] };

function Job({ job }) {
  const failures = job.runs.filter((r) => r.status === "failed").length;
  return html`<div class="card" data-testid=${`job-${job.name}`}>
    <h2>${job.name}</h2>
    <p>${job.schedule ? html`Runs <code>${job.schedule}</code>.` : html`<span class="muted">Not defined on the node that answered: its runs came from another node, or from before it was removed.</span>`}
      ${" "}${job.runs.length === 0 ? "No run yet." : failures ? `${failures} of the last ${job.runs.length} runs failed.` : `The last ${job.runs.length} run${job.runs.length === 1 ? "" : "s"} succeeded.`}</p>
    ${job.runs.length === 0
      ? null
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label=${`Runs of ${job.name}`}><table>
          <caption class="sr-only">Runs of ${job.name}</caption>
          <thead><tr><th scope="col">Scheduled</th><th scope="col">Status</th><th scope="col">Node</th><th scope="col">Took</th><th scope="col">Error</th></tr></thead>
          <tbody>${job.runs.map((r) => {
            const [cls, label] = STATUS[r.status] ?? ["", r.status];
            const took = r.finishedAt ? `${Math.max(0, Date.parse(r.finishedAt) - Date.parse(r.startedAt))} ms` : "—";
            return html`<tr key=${r.scheduledAt}><td>${fmtDate(r.scheduledAt)}</td><td><span class=${`badge ${cls}`}>${label}</span></td>
              <td><code>${r.node}</code></td><td>${took}</td><td>${r.error ? html`<code>${r.error}</code>` : "—"}</td></tr>`;
          })}</tbody></table></div>`}
  </div>`;
}

/**
 * The hooks module's cron jobs (docs/hooks.md) with their last runs, newest first, and why a
 * run failed. Server-wide, like the jobs themselves: every developer sees the same list.
 */
export function JobsPage() {
  const state = useLoad(() => api("GET", "admin/cron"), []);
  return html`<section class="stack">
    <${PageTitle} title="Jobs" />
    <${Loaded} state=${state}>${(d) =>
      d.jobs.length === 0
        ? html`<div class="card"><${Empty}><p data-testid="jobs-empty">No scheduled jobs on this server. Define them with <code>cron(name, schedule, fn)</code> in the hooks module (see the hooks guide); their runs and failures show here.</p><//></div>`
        : html`${d.jobs.map((j) => html`<${Job} key=${j.name} job=${j} />`)}
          <p class="muted">Answered by node <code>${d.node}</code>; runs are kept for a week and claimed once across all nodes.</p>`}<//>
  </section>`;
}
