import type { SqliteDb } from "./connection.ts";
import { createRepositories } from "./index.ts";
import type { Repositories } from "../repositories.ts";

/**
 * Compile-time only: the SQLite repositories implement the engine-neutral interfaces in
 * repositories.ts. A method added to a SQLite repository without its interface still
 * compiles (areas keep using index.ts's type until the engines are side by side); one
 * that drifts from its interface's signature fails `tsc` here.
 */
export const sqliteRepositories: (db: SqliteDb) => Repositories = createRepositories;
