/**
 * The typed filter and sort language of `collection(name).list()`: the server's operators
 * only ($eq $ne $gt $gte $lt $lte $in), dotted paths into `data`, and `$id`, `$createdAt`,
 * `$updatedAt` for the record's own fields. A misspelt operator or a field of the wrong
 * type is a compile error when the collection has a data type.
 */

type Primitive = string | number | boolean | null;
type Depth = [never, 0, 1, 2, 3];

/** `"a" | "b" | "b.c"`: the dotted paths of `T`, four levels deep. */
export type FieldPath<T, D extends number = 4> = [D] extends [never]
  ? never
  : T extends Primitive | readonly unknown[]
    ? never
    : {
        [K in keyof T & string]: NonNullable<T[K]> extends Primitive | readonly unknown[]
          ? K
          : string extends keyof NonNullable<T[K]>
            ? K | `${K}.${string}`
            : K | `${K}.${FieldPath<NonNullable<T[K]>, Depth[D]>}`;
      }[keyof T & string];

/** The type found at a dotted path of `T`. */
export type PathValue<T, P extends string> = P extends `${infer K}.${infer Rest}`
  ? K extends keyof T
    ? PathValue<NonNullable<T[K]>, Rest>
    : unknown
  : P extends keyof T
    ? T[P]
    : unknown;

export interface Operators<V> {
  $eq?: V | null;
  $ne?: V | null;
  $gt?: V;
  $gte?: V;
  $lt?: V;
  $lte?: V;
  $in?: readonly (V | null)[];
}

/** A value (implicit `$eq`) or an object of operators. */
export type Condition<V> = V | null | Operators<V>;

type Scalar<V> = V extends readonly (infer E)[] ? E | V : V;

/** Full-text search (a collection with search on, docs/data.md): every word found, `word*` a prefix; `fields` narrows where. */
export interface TextSearch<T> {
  $search: string;
  fields?: FieldPath<T>[];
}

/** Timestamps as ISO 8601 strings. */
interface MetaFilter<T> {
  $id?: Condition<string>;
  $createdAt?: Condition<string>;
  $updatedAt?: Condition<string>;
  $text?: TextSearch<T>;
}

export type Filter<T> = MetaFilter<T> & { [P in FieldPath<T>]?: Condition<Scalar<PathValue<T, P>>> };

/** `$rank`: how well records match the filter's `$text` (`-1` best first; docs/data.md). */
export type Sort<T> = { [P in FieldPath<T> | "$id" | "$createdAt" | "$updatedAt" | "$rank"]?: 1 | -1 };

export interface ListOptions<T> {
  filter?: Filter<T>;
  sort?: Sort<T>;
  /** 1 to 1000, default 50 */
  limit?: number;
  /** default 0 */
  offset?: number;
  /** the `next` of the previous page: the page after it, as fast at any depth (not with `offset`) */
  after?: string;
}

/** RFC 7396 merge patch of `T`: `null` deletes a key. */
export type MergePatch<T> = T extends readonly unknown[] | Primitive ? T : { [K in keyof T]?: MergePatch<T[K]> | null };
