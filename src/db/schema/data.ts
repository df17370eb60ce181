// Filled in by the data area.
export const dataSchema = ``;
