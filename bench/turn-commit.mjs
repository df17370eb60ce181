// The baseline's minimal form of tenantd's group commit (src/db/sqlite/write-batch.ts): the
// writes asked for in one turn of the event loop run in one IMMEDIATE transaction when the
// turn ends, and each caller hears after the commit. Without it the baseline would pay one
// commit per request where tenantd pays one per turn, and the ratio would measure that.
export function turnCommit(db) {
  let writes = [];
  const commit = db.transaction((batch) => {
    for (const w of batch) {
      try {
        w.value = w.write();
      } catch (error) {
        w.error = error;
      }
    }
  });
  const flush = () => {
    const batch = writes;
    writes = [];
    commit.immediate(batch);
    for (const w of batch) (w.error ? w.reject(w.error) : w.resolve(w.value));
  };
  return (write) =>
    new Promise((resolve, reject) => {
      if (writes.length === 0) setImmediate(flush);
      writes.push({ write, resolve, reject });
    });
}
