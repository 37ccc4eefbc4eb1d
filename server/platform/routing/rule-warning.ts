/** A line of `_redirects` or `_headers` that was skipped, and why. */
export interface RuleWarning {
  /** Line number, from 1. */
  line: number;
  /** Why the line was skipped, in words a site's author acts on. */
  message: string;
}

/**
 * Warnings listed per file; past it one more says how many bad lines followed. A file is at most
 * `MAX_RULES_FILE_BYTES`, but that can still be a great many one-character lines.
 */
export const MAX_WARNINGS = 1000;

/** Collects a file's warnings up to `MAX_WARNINGS`, then counts the rest. */
export function warningList() {
  const warnings: RuleWarning[] = [];
  let more = 0;
  let first: RuleWarning | null = null;
  return {
    add(line: number, message: string) {
      if (warnings.length < MAX_WARNINGS) warnings.push({ line, message });
      else if (more++ === 0) first = { line, message };
    },
    done(): RuleWarning[] {
      if (!first) return warnings;
      const { line, message } = first;
      if (more === 1) return [...warnings, first];
      return [
        ...warnings,
        { line, message: `${message}; so are ${more - 1} more bad lines after it, not listed` },
      ];
    },
  };
}

/** `1000` -> `1,000`, as messages write limits. */
export const count = (n: number): string => n.toLocaleString('en-US');

/** Splits a rules file into lines (LF or CRLF), without a byte-order mark. */
export function linesOf(text: string): string[] {
  return (text.startsWith('\uFEFF') ? text.slice(1) : text).split(/\r?\n/);
}
