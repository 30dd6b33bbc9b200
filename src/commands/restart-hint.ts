/** What `config set` tells the user after writing: a server reads its configuration once, at start. */
export const RESTART_HINT = "A running `parley serve` keeps its old value until it is restarted (or started with --reload, which restarts it on its own).";
