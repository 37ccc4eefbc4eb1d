import type { Command } from '../command.ts';

/** Made by cli/main.ts, which hands it every command (so nothing here imports the list back). */
export const completionCommand = (all: () => Iterable<Command>): Command => ({
  name: 'completion',
  summary: 'print a shell completion script (bash, zsh, fish)',
  help: `Usage: slipway completion bash|zsh|fish

Prints a script that makes your shell complete slipway's commands, sub-commands and flags
(and file names where a command takes a folder or file). Install it once, then open a new
shell:

  slipway completion bash > ~/.local/share/bash-completion/completions/slipway
  slipway completion fish > ~/.config/fish/completions/slipway.fish
  echo 'eval "$(slipway completion zsh)"' >> ~/.zshrc`,
  options: {},
  run: (p, io) => import('../run/completion.ts').then((m) => m.completion(p, io, all())),
});
