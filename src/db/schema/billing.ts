// Filled in by the billing area.
export const billingSchema = ``;
