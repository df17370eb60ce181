import { html, useState } from "../vendor/preact-htm.js";
import { Field, lines } from "../ui.js";
import { Section } from "./settings.js";

/** Unique and indexed fields per collection. */
export function CollectionsSettings({ app, onSaved }) {
  const current = app.settings.collections ?? {};
  const [names, setNames] = useState(Object.keys(current));
  const [added, setAdded] = useState("");
  const build = (f) => {
    const collections = {};
    for (const name of Object.keys(current)) if (!names.includes(name)) collections[name] = null;
    for (const name of names) collections[name] = { unique: lines(f.get(`unique.${name}`) ?? ""), indexed: lines(f.get(`indexed.${name}`) ?? "") };
    return { collections };
  };
  const add = () => {
    const n = added.trim();
    if (n && !names.includes(n)) setNames([...names, n]);
    setAdded("");
  };
  return html`<${Section} app=${app} id="s-collections" title="Collections" onSaved=${onSaved} build=${build}
      note="Unique fields are unique within one tenant's collection; indexed fields get a real index so filters on them stay fast. Field paths like name or address.city, comma-separated.">
    ${names.length === 0 ? html`<p class="empty">No collection settings yet: records work without them. Add a collection to make a field unique or indexed.</p>` : null}
    ${names.map(
      (name) => html`<fieldset key=${name} class="collection">
        <legend>${name}</legend>
        <${Field} label=${`Unique fields of ${name}`}><input name=${`unique.${name}`} value=${(current[name]?.unique ?? []).join(", ")} /><//>
        <${Field} label=${`Indexed fields of ${name}`}><input name=${`indexed.${name}`} value=${(current[name]?.indexed ?? []).join(", ")} /><//>
        <button type="button" class="small" onClick=${() => setNames(names.filter((n) => n !== name))}>Remove ${name}</button>
      </fieldset>`,
    )}
    <div class="row">
      <${Field} label="New collection name"><input name="newCollection" value=${added} pattern="[A-Za-z0-9]{1,64}" onInput=${(e) => setAdded(e.target.value)}
        onKeyDown=${(e) => e.key === "Enter" && (e.preventDefault(), add())} /><//>
      <button type="button" onClick=${add}>Add collection</button>
    </div>
  <//>`;
}
