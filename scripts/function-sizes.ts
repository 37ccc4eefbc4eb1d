/**
 * The longest functions of a folder, by lines (docs/architecture.md):
 *
 *   node --import tsx scripts/function-sizes.ts server 10
 *
 * Counts each function, method, arrow function and function expression from its first line to its
 * last, nested functions included in their parent's count and listed on their own too. Leaves out
 * migrations (one long, frozen statement list each) and tests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface FunctionSize {
  file: string;
  name: string;
  lines: number;
}

const SKIP = /(^|\/)(node_modules|migrations|dist)(\/|$)|\.test\.ts$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (SKIP.test(path)) return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText(source);
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

/** Every function of the files under `dir`, longest first. */
export function functionSizes(dir: string): FunctionSize[] {
  const sizes: FunctionSize[] = [];
  for (const file of sourceFiles(dir)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        sizes.push({
          file: relative(process.cwd(), file),
          name: nameOf(node, source),
          lines: last - first + 1,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return sizes.sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/scripts\//, '/scripts/'))) {
  const [dir = 'server', top = '10'] = process.argv.slice(2);
  for (const f of functionSizes(dir).slice(0, Number(top)))
    console.log(`${String(f.lines).padStart(5)}  ${f.file}  ${f.name}`);
}
