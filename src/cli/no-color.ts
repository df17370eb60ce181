// Imported first by the CLI runner, before citty, which decides on colour once at load time
// and only honours NO_COLOR=1: colour only on a terminal, and never when NO_COLOR is set
// to anything (https://no-color.org).
if (!process.stdout.isTTY || process.env.NO_COLOR) process.env.NO_COLOR = "1";
export {};
