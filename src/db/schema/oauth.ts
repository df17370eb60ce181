// Filled in by the oauth area.
export const oauthSchema = ``;
