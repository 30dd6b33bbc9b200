/**
 * Puts text on the clipboard of the terminal the chat runs in, with an OSC 52 escape: it works over
 * SSH and inside tmux (with `set-clipboard on`), with no clipboard program on this machine.
 */
export function copyToClipboard(text: string, out: { write(data: string): unknown } = process.stdout) {
  out.write(`\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`);
}
