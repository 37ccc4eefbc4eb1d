import { type Command, flagsOf, subcommandsOf } from './command.ts';

/** What a shell needs to know of each command. */
interface Entry {
  name: string;
  summary: string;
  subs: string[];
  flags: string[];
}

const entries = (commands: Iterable<Command>): Entry[] =>
  [...commands].map((c) => ({ name: c.name, summary: c.summary, subs: subcommandsOf(c), flags: flagsOf(c) }));

/** Bash: command names first, then a command's sub-commands and flags; file names otherwise. */
function bash(list: Entry[]): string {
  const cases = list
    .map((e) => `    ${e.name}) subs="${e.subs.join(' ')}"; flags="${e.flags.join(' ')}" ;;`)
    .join('\n');
  return `# slipway completion for bash (\`slipway completion bash\`; see docs/cli.md#shell-completion)
_slipway() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" subs="" flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${list.map((e) => e.name).join(' ')} --help --version" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=()
  fi
}
complete -o default -F _slipway slipway
`;
}

/** Zsh runs the bash script through its bash-completion layer. */
const zsh = (list: Entry[]) =>
  `#compdef slipway
# slipway completion for zsh (\`slipway completion zsh\`; see docs/cli.md#shell-completion)
(( $+functions[compdef] )) || { autoload -U +X compinit && compinit }
autoload -U +X bashcompinit && bashcompinit
${bash(list).split('\n').slice(1).join('\n')}`;

const quote = (s: string) => `'${s.replaceAll("'", "\\'")}'`;

/** Fish: each command with its summary, then its sub-commands and flags once it is typed. */
function fish(list: Entry[]): string {
  const lines = [
    '# slipway completion for fish (`slipway completion fish`; see docs/cli.md#shell-completion)',
  ];
  lines.push('complete -c slipway -f');
  for (const e of list) {
    lines.push(`complete -c slipway -n __fish_use_subcommand -a ${e.name} -d ${quote(e.summary)}`);
    const when = `'__fish_seen_subcommand_from ${e.name}'`;
    if (e.subs.length) lines.push(`complete -c slipway -n ${when} -a ${quote(e.subs.join(' '))}`);
    for (const f of e.flags) {
      lines.push(
        `complete -c slipway -n ${when} ${f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`}`,
      );
    }
    if (!e.subs.length) lines.push(`complete -c slipway -n ${when} -F`);
  }
  return `${lines.join('\n')}\n`;
}

export const SHELLS = { bash, zsh, fish } as const;

/** The completion script of `shell` for these commands. */
export const completionScript = (shell: keyof typeof SHELLS, commands: Iterable<Command>) =>
  SHELLS[shell](entries(commands));
