import { FIELD_PATH } from "../apps/settings.ts";

/**
 * Full-text search's words, made the same way in JavaScript for both engines, so SQLite
 * (FTS5) and PostgreSQL (tsvector) index and look up the same words and find the same
 * records: text is decomposed (NFKD), its accents (combining marks) dropped, lowercased, and
 * split at every character that is not a letter or a digit. The collection's language
 * decides which common words are left out of documents and searches alike; words are not
 * stemmed ("runs" does not find "run"; "run*" does).
 *
 * A document's words are kept in order with their repeats: a ranked search (`$rank`) scores
 * a record by how often the words sought occur in it and how long it is, which both engines
 * read from the index (FTS5's bm25 its tokens, PostgreSQL's ts_rank_cd the positions).
 */

export const SEARCH_LANGUAGES = ["simple", "en", "es", "nl"] as const;
export type SearchLanguage = (typeof SEARCH_LANGUAGES)[number];

/** Longer words are cut to this many characters (PostgreSQL refuses lexemes past 2 KB). */
const MAX_WORD = 64;

const STOP_WORDS: Record<SearchLanguage, ReadonlySet<string>> = {
  simple: new Set(),
  en: new Set("a an and are as at be but by for from has have in into is it its of on or that the their there these this to was were will with".split(" ")),
  es: new Set("a al con de del el en es la las lo los no o para pero por que se sin su sus un una uno unos unas y".split(" ")),
  nl: new Set("aan als bij dat de den der die dit een en er het hij in is je met na niet of om op te tot van voor was wat ze zij zijn".split(" ")),
};

/** The words of a text, in order, repeats kept. */
export function words(text: string, language: SearchLanguage): string[] {
  const stop = STOP_WORDS[language];
  const out: string[] = [];
  for (const w of text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (w !== "" && !stop.has(w)) out.push(w.slice(0, MAX_WORD));
  }
  return out;
}

/** What a record's data gives the index: every word of its strings in order, repeats kept, and each field's words. */
export interface SearchDocument {
  words: string[];
  /** field path → its words joined by spaces (for searches naming fields) */
  fields: Record<string, string>;
}

/**
 * Every string in `data`, at any depth (array items belong to their array's field). A
 * string under a key that is no field path (filter rules) still counts for searches that
 * name no fields.
 */
export function searchDocument(data: unknown, language: SearchLanguage): SearchDocument {
  const all: string[] = [];
  const fields: Record<string, string[]> = {};
  // `path`: undefined at the top, null below a key no filter could name.
  const walk = (value: unknown, path: string | null | undefined) => {
    if (typeof value === "string") {
      const ws = words(value, language);
      all.push(...ws);
      if (path && ws.length > 0) (fields[path] ??= []).push(...ws);
    } else if (Array.isArray(value)) {
      for (const v of value) walk(v, path);
    } else if (value !== null && typeof value === "object") {
      for (const [key, v] of Object.entries(value)) {
        const next = path === undefined ? key : `${path}.${key}`;
        walk(v, path !== null && FIELD_PATH.test(next) ? next : null);
      }
    }
  };
  walk(data, undefined);
  return { words: all, fields: Object.fromEntries(Object.entries(fields).map(([k, ws]) => [k, ws.join(" ")])) };
}

/** One word of a search: matched whole, or as a prefix (`word*`). */
export interface SearchTerm {
  word: string;
  prefix: boolean;
}

/** The words of `$search`, each to be found (AND); `*` right after a word makes it a prefix. Repeats dropped. */
export function searchTerms(search: string, language: SearchLanguage): SearchTerm[] {
  const terms = new Map<string, SearchTerm>();
  for (const part of search.split(/\s+/)) {
    const prefix = part.endsWith("*");
    const ws = words(prefix ? part.slice(0, -1) : part, language);
    ws.forEach((word, i) => {
      // "e-mail*": the last word of the part is the prefix.
      const term = { word, prefix: prefix && i === ws.length - 1 };
      terms.set(`${term.word}${term.prefix ? "*" : ""}`, term);
    });
  }
  return [...terms.values()];
}

/** PostgreSQL keeps positions up to this one (larger ones become it) and this many per word. */
const MAX_POSITION = 16383;
const MAX_POSITIONS = 256;

/**
 * A document's words as a tsvector literal, each word with its positions (1, 2, …), parsed by
 * PostgreSQL as written (no dictionary): `'red':1,3 'shoes':2`. Words are letters and digits
 * only, so none needs escaping. Past PostgreSQL's own limits (a position past 16383, more than
 * 256 of one word) positions are dropped, so ranks of documents that long count fewer words.
 */
export function tsvectorLiteral(words: readonly string[]): string {
  const positions = new Map<string, number[]>();
  words.forEach((word, i) => {
    const at = positions.get(word) ?? [];
    if (at.length === 0) positions.set(word, at);
    const position = Math.min(i + 1, MAX_POSITION);
    if (at.length < MAX_POSITIONS && at.at(-1) !== position) at.push(position);
  });
  return [...positions].map(([word, at]) => `'${word}':${at.join(",")}`).join(" ");
}
