/**
 * Colour is for people at a terminal. citty and consola (and chalk under Ink) switch colour off
 * for NO_COLOR=1, read when they load: so this module is imported before any of them, and turns
 * colour off when stdout or stderr is not a terminal, TERM is dumb, or NO_COLOR is set at all.
 */
const { NO_COLOR, FORCE_COLOR, TERM } = process.env;
const forced = FORCE_COLOR !== undefined && FORCE_COLOR !== "0" && !NO_COLOR;
if (!forced && (NO_COLOR || TERM === "dumb" || !process.stdout.isTTY || !process.stderr.isTTY)) process.env.NO_COLOR = "1";
