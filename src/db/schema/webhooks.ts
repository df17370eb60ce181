// Filled in by the webhooks area.
export const webhooksSchema = ``;
