// Filled in by the family area.
export const familySchema = ``;
