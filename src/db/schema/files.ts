// Filled in by the files area.
export const filesSchema = ``;
